#include "model/tokenizers/ct2_vocabulary.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "model/tokenizers/utf8_chars.hpp"

namespace attnviz {

namespace {

// The SentencePiece word-boundary mark, U+2581.
constexpr std::string_view kSentencePieceSpace = "\xE2\x96\x81";
// BPE's (subword-nmt) continuation mark as it appears once tokens are joined with spaces.
constexpr std::string_view kBpeJoiner = "@@ ";

bool is_special(const std::string& token) {
  return token.size() > 2 && token.front() == '<' && token.back() == '>';
}

std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (std::size_t at = 0; at < text.size(); at += utf8_char_length_at(text, at)) ++n;
  return n;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable(path, std::strerror(errno));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> read_json_list(const std::string& path) {
  const nlohmann::json document = read_json_file(path, 0, JsonRoot::Any);  // a list, often over 64 KiB
  if (!document.is_array()) {
    throw InputError::bad_value(path, "", "a list of tokens", std::string(document.type_name()));
  }
  std::vector<std::string> tokens;
  tokens.reserve(document.size());
  for (std::size_t i = 0; i < document.size(); ++i) {
    if (!document[i].is_string()) {
      throw InputError::bad_value(path, "/" + std::to_string(i), "a string", std::string(document[i].type_name()));
    }
    tokens.push_back(document[i].get<std::string>());
  }
  return tokens;
}

}  // namespace

std::int32_t Ct2Vocabulary::find(const std::string& token) const {
  const auto it = ids.find(token);
  return it == ids.end() ? -1 : it->second;
}

Ct2Vocabulary read_ct2_vocabulary(const std::string& path, const std::string& unk_token) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError::unreadable(path, "is a directory");
  Ct2Vocabulary vocab;
  vocab.file = path;
  vocab.tokens = path.ends_with(".json") ? read_json_list(path) : read_lines(path);
  if (vocab.tokens.empty()) throw InputError::unreadable(path, "the vocabulary is empty");
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
    vocab.ids.emplace(vocab.tokens[i], static_cast<std::int32_t>(i));
  }
  if (vocab.find(unk_token) < 0) {
    vocab.ids.emplace(unk_token, static_cast<std::int32_t>(vocab.tokens.size()));
    vocab.tokens.push_back(unk_token);
  }
  vocab.unk = vocab.find(unk_token);
  vocab.character_level = true;
  for (const std::string& token : vocab.tokens) {
    if (!is_special(token) && code_points(token) != 1) {
      vocab.character_level = false;
      break;
    }
  }
  return vocab;
}

Tokens split_on_spaces(std::string_view text) {
  Tokens tokens;
  std::size_t start = 0;
  while (true) {
    start = text.find_first_not_of(" \t\r\n", start);
    if (start == std::string_view::npos) break;
    const std::size_t end = text.find_first_of(" \t\r\n", start);
    tokens.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end;
  }
  return tokens;
}

Tokens split_characters(std::string_view text) {
  Tokens characters;
  for (std::size_t at = 0; at < text.size(); at += characters.back().size()) {
    characters.emplace_back(text.substr(at, utf8_char_length_at(text, at)));
  }
  return characters;
}

std::vector<std::int32_t> ct2_token_ids(const Ct2Vocabulary& vocab, const Tokens& tokens,
                                        const std::string& role, std::vector<std::string>& warnings) {
  std::vector<std::int32_t> ids;
  ids.reserve(tokens.size());
  std::string unknown;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::int32_t id = vocab.find(tokens[i]);
    if (id < 0) unknown += std::string(unknown.empty() ? "" : ", ") + "'" + tokens[i] + "' (position " + std::to_string(i) + ")";
    ids.push_back(id < 0 ? vocab.unk : id);
  }
  if (!unknown.empty()) {
    warnings.push_back(role + " tokens not in " + vocab.file + ", read as " + vocab.tokens[vocab.unk] + ": " + unknown);
  }
  return ids;
}

std::string ct2_join_tokens(const Ct2Vocabulary& vocab, const Tokens& tokens) {
  std::string text;
  bool sentencepiece = false;
  for (const std::string& token : tokens) sentencepiece = sentencepiece || token.find(kSentencePieceSpace) != std::string::npos;
  const bool concatenate = vocab.character_level || sentencepiece;
  for (const std::string& token : tokens) {
    if (is_special(token)) continue;
    if (!concatenate && !text.empty()) text += ' ';
    text += token;
  }
  if (sentencepiece) {
    std::string spaced;
    for (std::size_t i = 0; i < text.size();) {
      if (text.compare(i, kSentencePieceSpace.size(), kSentencePieceSpace) == 0) {
        spaced += ' ';
        i += kSentencePieceSpace.size();
      } else {
        spaced += text[i++];
      }
    }
    return !spaced.empty() && spaced.front() == ' ' ? spaced.substr(1) : spaced;
  }
  if (!vocab.character_level) {
    for (std::size_t at = text.find(kBpeJoiner); at != std::string::npos; at = text.find(kBpeJoiner, at)) {
      text.erase(at, kBpeJoiner.size());
    }
    if (text.ends_with("@@")) text.resize(text.size() - 2);
  }
  return text;
}

}  // namespace attnviz
