// The lookups every tokenizer needs from a Vocabulary: piece text -> id, built once per call
// of tokenize(). Internal to model/ (the tokenizer_*.cpp files); does not own the pieces, so
// it must not outlive the Vocabulary it was built from.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

class PieceIndex {
 public:
  /// Indexes vocab.pieces. The loaders refuse a vocabulary with a non-empty piece listed twice
  /// (vocabulary_from_gguf, vocabulary_from_tokenizer_json); for one built in code, the lower
  /// id wins.
  explicit PieceIndex(const Vocabulary& vocab);

  /// The id of the token whose piece is exactly `piece`, or nullopt.
  std::optional<std::int32_t> find(std::string_view piece) const;

  /// Longest piece in bytes (the WordPiece search window).
  std::size_t max_piece_bytes() const { return max_piece_bytes_; }

 private:
  std::unordered_map<std::string_view, std::int32_t> ids_;
  std::size_t max_piece_bytes_ = 0;
};

}  // namespace attnviz
