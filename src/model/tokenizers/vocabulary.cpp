// vocabulary_from_gguf: the tokenizer.ggml.* keys of a GGUF file, with llama.cpp's defaults
// (llama_vocab::impl::load) for what a file leaves out.
#include "model/tokenizers/vocabulary.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <unordered_map>

#include "core/error.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/tokenizers/bpe_pre_tokenizer.hpp"

namespace attnviz {

namespace {

// A special-token id key holding this (uint32 -1, as llama.cpp's converter writes "none")
// leaves the default in place.
constexpr std::int64_t kUnsetTokenId = std::numeric_limits<std::uint32_t>::max();

// llama.cpp's defaults per tokenizer model, before the file's own keys.
void set_model_defaults(Vocabulary& vocab) {
  vocab.add_space_prefix = false;
  vocab.add_bos = false;
  vocab.add_eos = false;
  if (vocab.model == "llama") {
    vocab.bos = 1;
    vocab.eos = 2;
    vocab.unk = 0;
    vocab.add_space_prefix = true;
    vocab.add_bos = true;
  } else if (vocab.model == "bert") {
    vocab.bos = vocab.cls = 101;
    vocab.unk = 100;
    vocab.sep = 102;
    vocab.pad = 0;
    vocab.mask = 103;
    vocab.add_bos = true;
  } else if (vocab.model == "gpt2") {
    vocab.bos = vocab.eos = 11;
    const BpePreTokenizer* pre_tokenizer = find_bpe_pre_tokenizer(vocab.pre);
    vocab.add_bos = pre_tokenizer && pre_tokenizer->add_bos;
  }
  // A default beyond a small vocabulary is dropped, as llama.cpp does.
  for (std::optional<std::int32_t>* id :
       {&vocab.bos, &vocab.eos, &vocab.unk, &vocab.sep, &vocab.pad, &vocab.cls, &vocab.mask}) {
    if (*id && static_cast<std::size_t>(**id) >= vocab.size()) id->reset();
  }
}

void read_pieces(const GgufFile& file, Vocabulary& vocab) {
  const std::string key = "tokenizer.ggml.tokens";
  const std::vector<std::string>* tokens = file.string_array(key);
  if (!tokens) throw InputError::missing_field(file.path(), key, "the token list");
  if (tokens->empty()) throw InputError::bad_value(file.path(), key, "at least one token", "none");
  vocab.pieces = *tokens;
}

// Each piece names one token: text is matched to ids by piece, so a piece listed twice would
// make one of its ids unreachable. llama.cpp refuses such a vocabulary ("duplicate token in
// vocabulary"); so does attnviz, naming the piece and both ids. Empty pieces are exempt, as in
// llama.cpp (which renames each to "[EMPTY_<id>]"): no text tokenizes to them, and a warning
// says so.
void check_unique_pieces(const GgufFile& file, Vocabulary& vocab) {
  std::unordered_map<std::string_view, std::size_t> first_id;
  first_id.reserve(vocab.size());
  std::vector<std::size_t> empty;
  for (std::size_t id = 0; id < vocab.size(); ++id) {
    const std::string& piece = vocab.pieces[id];
    if (piece.empty()) {
      empty.push_back(id);
      continue;
    }
    const auto [it, inserted] = first_id.emplace(piece, id);
    if (!inserted)
      throw InputError::inconsistent(file.path(), "tokenizer.ggml.tokens: the piece " + quoted_piece(piece) +
                                                      " is listed twice, as ids " + std::to_string(it->second) + " and " +
                                                      std::to_string(id) + " (a piece names one token)");
  }
  if (empty.empty()) return;
  std::string ids;
  for (std::size_t i = 0; i < std::min<std::size_t>(empty.size(), 5); ++i) ids += (i ? ", " : "") + std::to_string(empty[i]);
  if (empty.size() > 5) ids += ", …";
  vocab.warnings.push_back(file.path() + ": tokenizer.ggml.tokens: " + std::to_string(empty.size()) + " empty piece" +
                           (empty.size() == 1 ? "" : "s") + " (id" + (empty.size() == 1 ? " " : "s ") + ids + "): no text tokenizes to " +
                           (empty.size() == 1 ? "it" : "them"));
}

// A gpt2 vocabulary without tokenizer.ggml.pre is split by GPT-2's own regex, as llama.cpp
// does (with its "GENERATION QUALITY WILL BE DEGRADED" warning): files converted before
// llama.cpp recorded the pre-tokenizer (spring 2024) lack the key, whatever their model used.
void warn_missing_pre_tokenizer(const GgufFile& file, Vocabulary& vocab) {
  if (vocab.model != "gpt2" || file.has("tokenizer.ggml.pre")) return;
  vocab.warnings.push_back(file.path() + ": tokenizer.ggml.pre is missing: the text is split with the \"default\" pre-tokenizer "
                           "(GPT-2's regex), as llama.cpp does; if the model was trained with another (LLaMA 3's, Qwen 2's…) its "
                           "tokens will differ: reconvert the model with a current llama.cpp, or pass --token-ids");
}

void check_length(const GgufFile& file, const std::string& key, std::size_t length, std::size_t n_vocab) {
  if (length != n_vocab) {
    throw InputError::bad_value(file.path(), key, std::to_string(n_vocab) + " entries (one per token)",
                                std::to_string(length));
  }
}

// "<0x0A>", "<0xfe>": the form llama.cpp gives a byte token (either case of hex digit).
bool is_byte_piece(const std::string& piece) {
  return piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>' &&
         std::isxdigit(static_cast<unsigned char>(piece[3])) && std::isxdigit(static_cast<unsigned char>(piece[4]));
}

void read_scores_and_types(const GgufFile& file, Vocabulary& vocab) {
  if (const auto scores = file.number_array("tokenizer.ggml.scores")) {
    check_length(file, "tokenizer.ggml.scores", scores->size(), vocab.size());
    vocab.scores.assign(scores->begin(), scores->end());
  }
  vocab.types.assign(vocab.size(), TokenType::Normal);
  if (const auto types = file.integer_array("tokenizer.ggml.token_type")) {
    check_length(file, "tokenizer.ggml.token_type", types->size(), vocab.size());
    for (std::size_t i = 0; i < types->size(); ++i) {
      const std::int64_t type = (*types)[i];
      const std::string what = "tokenizer.ggml.token_type[" + std::to_string(i) + "]";
      // llama.cpp's llama_token_type runs from UNDEFINED (0) to BYTE (6); another value has no
      // meaning there, and taking it as one of them would change how the token is matched.
      if (type < 0 || type > static_cast<std::int64_t>(TokenType::Byte))
        throw InputError::bad_value(file.path(), what, "a token type from 0 to 6 (llama.cpp's llama_token_type)", std::to_string(type));
      vocab.types[i] = static_cast<TokenType>(type);
      // llama.cpp reads a BYTE token's byte from its piece's two hex digits (strtol, which gives 0
      // for anything else): a BYTE piece of another form would stand for the wrong byte.
      if (vocab.types[i] == TokenType::Byte && !is_byte_piece(vocab.pieces[i]))
        throw InputError::bad_value(file.path(), what, "a BYTE token's piece of the form <0xXX>",
                                    "BYTE for token " + std::to_string(i) + " \"" + vocab.pieces[i] + "\"");
    }
  }
}

void read_special_id(const GgufFile& file, const std::string& key, std::size_t n_vocab,
                     std::optional<std::int32_t>& id) {
  const std::optional<std::int64_t> value = file.integer(key);
  if (!value || *value == kUnsetTokenId || *value == -1) return;
  if (*value < 0 || static_cast<std::uint64_t>(*value) >= n_vocab) {
    throw InputError::bad_value(file.path(), key, "a token id below " + std::to_string(n_vocab),
                                std::to_string(*value));
  }
  id = static_cast<std::int32_t>(*value);
}

void read_special_tokens(const GgufFile& file, Vocabulary& vocab) {
  const std::pair<const char*, std::optional<std::int32_t>*> keys[] = {
      {"tokenizer.ggml.bos_token_id", &vocab.bos},        {"tokenizer.ggml.eos_token_id", &vocab.eos},
      {"tokenizer.ggml.unknown_token_id", &vocab.unk},    {"tokenizer.ggml.seperator_token_id", &vocab.sep},
      {"tokenizer.ggml.padding_token_id", &vocab.pad},    {"tokenizer.ggml.cls_token_id", &vocab.cls},
      {"tokenizer.ggml.mask_token_id", &vocab.mask},      {"tokenizer.ggml.eot_token_id", &vocab.eot},
      {"tokenizer.ggml.eom_token_id", &vocab.eom},
  };
  for (const auto& [key, id] : keys) read_special_id(file, key, vocab.size(), *id);
}

void read_flags(const GgufFile& file, Vocabulary& vocab) {
  vocab.add_bos = file.boolean("tokenizer.ggml.add_bos_token").value_or(vocab.add_bos);
  vocab.add_eos = file.boolean("tokenizer.ggml.add_eos_token").value_or(vocab.add_eos);
  vocab.add_space_prefix = file.boolean("tokenizer.ggml.add_space_prefix").value_or(vocab.add_space_prefix);
  // BERT's normaliser: strip_accents follows lowercase unless given (Hugging Face's None).
  vocab.lowercase = file.boolean("tokenizer.ggml.normalizer.lowercase").value_or(true);
  vocab.strip_accents = file.boolean("tokenizer.ggml.normalizer.strip_accents").value_or(vocab.lowercase);
  if (vocab.add_bos && !vocab.bos) {
    throw InputError::inconsistent(file.path(), "tokenizer.ggml.add_bos_token is true but there is no BOS token");
  }
  if (vocab.add_eos && !vocab.eos) {
    throw InputError::inconsistent(file.path(), "tokenizer.ggml.add_eos_token is true but there is no EOS token");
  }
}

void read_merges(const GgufFile& file, Vocabulary& vocab) {
  const std::string key = "tokenizer.ggml.merges";
  if (const std::vector<std::string>* merges = file.string_array(key)) {
    vocab.merges = *merges;
  } else if (vocab.model == "gpt2") {
    throw InputError::missing_field(file.path(), key, "the BPE merges a gpt2 tokenizer needs");
  }
}

bool contains_any(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* part : parts)
    if (text.find(part) != std::string::npos) return true;
  return false;
}

std::optional<std::int32_t> find_piece(const Vocabulary& vocab, std::string_view piece) {
  const auto it = std::find(vocab.pieces.begin(), vocab.pieces.end(), piece);
  if (it == vocab.pieces.end()) return std::nullopt;
  return static_cast<std::int32_t>(it - vocab.pieces.begin());
}

// The per-token LSTRIP/RSTRIP attributes llama.cpp's loader sets by model name, pre-tokenizer
// and architecture ("Handle per token attributes" in llama_vocab::impl::load), which the GGUF
// does not store: Phi-3's special tokens take the white space after them ("<|user|>\n" reads as
// the token alone), the mask token of some BERT variants the white space before it.
void set_strip_tokens(const GgufFile& file, Vocabulary& vocab) {
  std::string name = file.string("general.name").value_or("");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string arch = file.string("general.architecture").value_or("");
  const auto add = [&vocab](std::vector<std::int32_t>& ids, std::string_view piece) {
    if (const std::optional<std::int32_t> id = find_piece(vocab, piece)) ids.push_back(*id);
  };
  if (contains_any(vocab.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) || contains_any(arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    add(vocab.lstrip_tokens, "<mask>");
  } else if (contains_any(name, {"phi-3", "phi3"})) {
    for (std::size_t id = 0; id < vocab.size(); ++id) {
      const TokenType type = id < vocab.types.size() ? vocab.types[id] : TokenType::Normal;
      if (type == TokenType::Control || type == TokenType::UserDefined || type == TokenType::Unknown)
        vocab.rstrip_tokens.push_back(static_cast<std::int32_t>(id));
    }
    add(vocab.rstrip_tokens, "</s>");
    for (const char* piece : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const std::optional<std::int32_t> id = find_piece(vocab, piece))
        vocab.rstrip_tokens.erase(std::remove(vocab.rstrip_tokens.begin(), vocab.rstrip_tokens.end(), *id), vocab.rstrip_tokens.end());
    }
  } else if (contains_any(name, {"modern-bert"})) {
    add(vocab.lstrip_tokens, "[MASK]");
  }
}

}  // namespace

std::string quoted_piece(std::string_view piece) {
  std::string text = "\"";
  for (const char c : piece) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      text += '\\';
      text += c;
    } else if (byte < 0x20 || byte == 0x7F) {
      static const char kHex[] = "0123456789ABCDEF";
      text += c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : std::string("\\x") + kHex[byte >> 4] + kHex[byte & 15];
    } else {
      text += c;
    }
  }
  return text + "\"";
}

Vocabulary vocabulary_from_gguf(const GgufFile& file) {
  Vocabulary vocab;
  vocab.source = file.path();
  const std::optional<std::string> model = file.string("tokenizer.ggml.model");
  if (!model) throw InputError::missing_field(file.path(), "tokenizer.ggml.model", "the tokenizer model");
  vocab.model = *model;
  vocab.pre = file.string("tokenizer.ggml.pre").value_or("default");
  read_pieces(file, vocab);
  check_unique_pieces(file, vocab);
  warn_missing_pre_tokenizer(file, vocab);
  read_scores_and_types(file, vocab);
  read_merges(file, vocab);
  set_model_defaults(vocab);
  read_special_tokens(file, vocab);
  read_flags(file, vocab);
  set_strip_tokens(file, vocab);
  return vocab;
}

std::vector<std::int32_t> end_tokens(const Vocabulary& vocab) {
  std::vector<std::int32_t> ids;
  for (const std::optional<std::int32_t>& id : {vocab.eos, vocab.eot, vocab.eom})
    if (id) ids.push_back(*id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace attnviz
