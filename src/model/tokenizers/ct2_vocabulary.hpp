// The vocabularies of a CTranslate2 model directory and the token handling around them:
// reading a vocabulary file, turning the user's tokens into ids (unknown -> <unk>), splitting
// text into characters for a character-level vocabulary, and joining output tokens into text.
//
// Files (CTranslate2 SequenceToSequenceModel, src/models/sequence_to_sequence.cc and
// vocabulary.cc): source_vocabulary.txt and target_vocabulary.txt, or shared_vocabulary.txt
// for both (CTranslate2 2.x); the same names ending in .json hold a JSON list of tokens
// (CTranslate2 3.x and later). In a .txt file line k (from 0, split on '\n' only, nothing
// trimmed: some entries are invisible format characters) is token id k. When the unknown
// token is not listed it is added as the last id, as vocabulary.cc does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Token ids in order, with the special tokens' ids.
struct Ct2Vocabulary {
  std::string file;                  ///< the path read
  std::vector<std::string> tokens;   ///< id -> token, byte for byte
  std::unordered_map<std::string, std::int32_t> ids;  ///< token -> first id it has
  std::int32_t unk = 0;              ///< id of the unknown token
  bool character_level = false;      ///< every token but <…> specials is one code point

  std::size_t size() const { return tokens.size(); }
  /// The id of `token`, or -1.
  std::int32_t find(const std::string& token) const;
};

/// Reads `path` (.txt: one token per line; .json: a list of strings). `unk_token` is appended
/// when absent. Throws InputError naming the file when it cannot be read, is empty, or (.json)
/// is not a list of strings.
Ct2Vocabulary read_ct2_vocabulary(const std::string& path, const std::string& unk_token);

/// Space-separated tokens (runs of spaces, tabs and newlines separate; none are kept).
Tokens split_on_spaces(std::string_view text);

/// The UTF-8 characters (code points) of `text`, each as its bytes; spaces are kept as " ".
Tokens split_characters(std::string_view text);

/// Ids of `tokens`. A token not in the vocabulary becomes <unk>, and one warning is appended
/// naming each such token and its position, `role` ("source", "target") and the file.
std::vector<std::int32_t> ct2_token_ids(const Ct2Vocabulary& vocab, const Tokens& tokens,
                                        const std::string& role, std::vector<std::string>& warnings);

/// The text of output tokens (specials <…> left out): a character-level vocabulary's tokens are
/// concatenated; SentencePiece pieces are concatenated with "▁" read as a space (the leading
/// one dropped); other tokens are joined with spaces and BPE's "@@ " continuation removed.
std::string ct2_join_tokens(const Ct2Vocabulary& vocab, const Tokens& tokens);

}  // namespace attnviz
