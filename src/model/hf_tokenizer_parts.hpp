// Pieces of a tokenizer.json that every kind reads alike (hf_tokenizer: byte-level BPE;
// hf_tokenizer_kinds: SentencePiece-style BPE and WordPiece). Internal to model/.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>
#include <nlohmann/json_fwd.hpp>

#include "io/json_reader.hpp"
#include "model/vocabulary.hpp"

namespace attnviz::hf_json {

/// The object at `pointer`, or nullptr when it is absent or null (how Hugging Face writes
/// "none"). Throws InputError::bad_value for another kind of value.
const nlohmann::json* optional_object(const JsonSettings& t, const std::string& pointer);

/// Refuses `pointer` (InputError::unsupported_tokenizer, naming it and `meaning`) unless it is
/// absent or holds `inert`, the value that leaves ids alone.
void require_flag(const JsonSettings& t, const std::string& pointer, bool inert, const std::string& meaning);

/// Refuses /truncation, and /padding that reaches one text (a Fixed length, pad_to_multiple_of).
void require_no_length_change(const JsonSettings& t);

/// /added_tokens/I: its id and content, and how the library matches it in text. lstrip,
/// rstrip and single_word must be false (refused otherwise, naming the member).
struct AddedToken {
  std::size_t id;
  std::string content;
  bool special;
  bool normalized;  ///< matched in the normalized text (the library's default for a non-special token)
};
std::vector<AddedToken> added_tokens(const JsonSettings& t);

/// Puts each piece at its id in a Vocabulary sized beforehand, refusing (InputError naming both
/// JSON pointers) an id given two pieces or a piece given two ids.
class PieceAssigner {
 public:
  PieceAssigner(const std::string& path, Vocabulary& vocab);
  void operator()(std::size_t id, const std::string& piece, const std::string& pointer, TokenType type);

 private:
  const std::string& path_;
  Vocabulary& vocab_;
  std::vector<std::string> where_;  // the JSON pointer that gave each id its piece; "" for none yet
  std::unordered_map<std::string, std::size_t> ids_;
};

}  // namespace attnviz::hf_json
