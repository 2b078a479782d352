#include "model/tokenizers/piece_index.hpp"

#include <algorithm>

namespace attnviz {

PieceIndex::PieceIndex(const Vocabulary& vocab) {
  ids_.reserve(vocab.size());
  for (std::size_t id = 0; id < vocab.size(); ++id) {
    const std::string& piece = vocab.pieces[id];
    ids_.emplace(piece, static_cast<std::int32_t>(id));  // keeps the first of duplicates
    max_piece_bytes_ = std::max(max_piece_bytes_, piece.size());
  }
}

std::optional<std::int32_t> PieceIndex::find(std::string_view piece) const {
  const auto it = ids_.find(piece);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace attnviz
