// tokenize / token_text / decode / token_display_text / piece_display of vocabulary.hpp: the
// choice of tokenizer by tokenizer.ggml.model, and the way back from ids to text.
#include <cstdio>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/tokenizers/tokenizer_bpe.hpp"
#include "model/tokenizers/tokenizer_hf.hpp"
#include "model/tokenizers/tokenizer_spm.hpp"
#include "model/tokenizers/tokenizer_wordpiece.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space
constexpr const char* kSupportedModels = "llama, gpt2, bert";

void check_id(const Vocabulary& vocab, std::int32_t id) {
  if (id < 0 || static_cast<std::size_t>(id) >= vocab.size()) {
    throw InputError::inconsistent(vocabulary_name(vocab), "token id " + std::to_string(id) +
                                                               " is outside the vocabulary of " +
                                                               std::to_string(vocab.size()) + " tokens");
  }
}

std::string replace_space_markers(std::string_view piece) {
  std::string text;
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.substr(i, kSpaceMarker.size()) == kSpaceMarker) {
      text += ' ';
      i += kSpaceMarker.size();
    } else {
      text += piece[i++];
    }
  }
  return text;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The byte a "<0xXX>" piece stands for, or -1 when the piece has another form.
int byte_of_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  const int high = hex_digit(piece[3]);
  const int low = hex_digit(piece[4]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

std::string hex_byte(unsigned char byte) {
  char text[8];
  std::snprintf(text, sizeof text, "<0x%02X>", byte);
  return text;
}

// Valid UTF-8 kept, bytes that are not part of it as <0xXX>; with `one_line`, \n \r \t escaped and
// other control characters as <0xXX> too.
std::string with_hex_bytes(std::string_view text, bool one_line) {
  std::string out;
  std::size_t offset = 0;
  for (const char32_t code_point : decode_utf8(text)) {
    const std::string utf8 = encode_utf8(std::u32string(1, code_point));
    const bool invalid = code_point == kReplacementCharacter && text.substr(offset, utf8.size()) != utf8;
    const auto byte = static_cast<unsigned char>(text[offset]);
    if (invalid) {
      out += hex_byte(byte);
      offset += 1;
      continue;
    }
    if (!one_line) {
      out += utf8;
    } else if (code_point == '\n') {
      out += "\\n";
    } else if (code_point == '\r') {
      out += "\\r";
    } else if (code_point == '\t') {
      out += "\\t";
    } else if (code_point < 0x20 || code_point == 0x7F) {
      out += hex_byte(byte);
    } else {
      out += utf8;
    }
    offset += utf8.size();
  }
  return out;
}

// The first word's space, which SentencePiece's dummy prefix (llama) or the phantom space of
// every word (bert) put there, is not part of the text.
bool drops_first_space(const Vocabulary& vocab) {
  return ((vocab.model == "llama" || vocab.model == "hf-bpe") && vocab.add_space_prefix) || vocab.model == "bert" ||
         vocab.model == "hf-wordpiece";
}

}  // namespace

std::string vocabulary_name(const Vocabulary& vocab) { return vocab.source.empty() ? "vocabulary" : vocab.source; }

std::vector<std::int32_t> tokenize(const Vocabulary& vocab, std::string_view text, bool add_special, bool parse_special) {
  if (vocab.model == "llama") return tokenize_spm(vocab, text, add_special, parse_special);
  if (vocab.model == "gpt2") return tokenize_bpe(vocab, text, add_special, parse_special);
  if (vocab.model == "bert") return tokenize_wordpiece(vocab, text, add_special, parse_special);
  if (vocab.model == "hf-bpe" || vocab.model == "hf-wordpiece") return tokenize_hf(vocab, text, add_special, parse_special);
  throw InputError::unsupported_tokenizer(vocabulary_name(vocab), "tokenizer model \"" + vocab.model + "\"",
                                          kSupportedModels);
}

TokenType token_type(const Vocabulary& vocab, std::int32_t id) {
  check_id(vocab, id);
  return static_cast<std::size_t>(id) < vocab.types.size() ? vocab.types[id] : TokenType::Normal;
}

std::string token_text(const Vocabulary& vocab, std::int32_t id) {
  const TokenType type = token_type(vocab, id);
  const std::string& piece = vocab.pieces[id];
  switch (type) {
    case TokenType::Control:
      return "";
    case TokenType::Unknown:
    case TokenType::UserDefined:
      return piece;
    case TokenType::Byte: {
      const int byte = byte_of_piece(piece);
      if (byte >= 0) return std::string(1, static_cast<char>(byte));
      break;
    }
    default:
      break;
  }
  if (vocab.model == "gpt2") return gpt2_piece_bytes(piece);
  if (vocab.model == "hf-wordpiece") {  // the library's WordPiece decoder: words joined by spaces, "##" joins
    const std::string& prefix = vocab.hf.continuing_subword_prefix;
    return piece.compare(0, prefix.size(), prefix) == 0 ? piece.substr(prefix.size()) : " " + piece;
  }
  return replace_space_markers(piece);
}

std::string unnamed_token_label(std::int32_t id) { return "<id " + std::to_string(id) + ">"; }

std::string decode(const Vocabulary& vocab, const std::vector<std::int32_t>& ids) {
  std::string text;
  bool first = drops_first_space(vocab);
  for (const std::int32_t id : ids) {
    if (id >= 0 && static_cast<std::size_t>(id) >= vocab.size()) {
      text += unnamed_token_label(id);
      first = false;
      continue;
    }
    std::string piece = token_text(vocab, id);
    if (piece.empty()) continue;
    if (first && piece.front() == ' ') piece.erase(0, 1);
    first = false;
    text += piece;
  }
  return text;
}

std::string token_display_text(const Vocabulary& vocab, std::int32_t id) {
  const TokenType type = token_type(vocab, id);
  const std::string& piece = vocab.pieces[id];
  if (type == TokenType::Control || type == TokenType::Unknown || type == TokenType::UserDefined) {
    return with_hex_bytes(piece, false);
  }
  if (type == TokenType::Byte && byte_of_piece(piece) >= 0) return piece;
  return with_hex_bytes(token_text(vocab, id), false);
}

std::string piece_display(const Vocabulary& vocab, std::int32_t id) {
  return with_hex_bytes(token_display_text(vocab, id), true);
}

bool pieces_are_byte_level(const Vocabulary& vocab) { return vocab.model == "gpt2"; }

}  // namespace attnviz
