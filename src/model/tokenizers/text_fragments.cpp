#include "model/tokenizers/text_fragments.hpp"

#include <algorithm>

namespace attnviz {

namespace {

// Ids of the user-defined tokens, longest piece first (ties by id, so the order is fixed).
std::vector<std::int32_t> user_defined_by_length(const Vocabulary& vocab) {
  std::vector<std::int32_t> ids;
  for (std::size_t id = 0; id < vocab.types.size() && id < vocab.size(); ++id) {
    if (vocab.types[id] == TokenType::UserDefined && !vocab.pieces[id].empty()) {
      ids.push_back(static_cast<std::int32_t>(id));
    }
  }
  const auto longer = [&vocab](std::int32_t a, std::int32_t b) { return vocab.pieces[a].size() > vocab.pieces[b].size(); };
  std::stable_sort(ids.begin(), ids.end(), longer);
  return ids;
}

// Replaces every plain fragment of `fragments` that holds `piece` by the runs around it and
// the token.
std::vector<TextFragment> split_at(const std::vector<TextFragment>& fragments, std::string_view piece,
                                   std::int32_t id) {
  std::vector<TextFragment> out;
  for (const TextFragment& fragment : fragments) {
    if (fragment.token) {
      out.push_back(fragment);
      continue;
    }
    std::string_view rest = fragment.text;
    for (std::size_t at = rest.find(piece); at != std::string_view::npos; at = rest.find(piece)) {
      if (at > 0) out.push_back({rest.substr(0, at), std::nullopt});
      out.push_back({rest.substr(at, piece.size()), id});
      rest.remove_prefix(at + piece.size());
    }
    if (!rest.empty()) out.push_back({rest, std::nullopt});
  }
  return out;
}

}  // namespace

std::vector<TextFragment> split_at_user_defined_tokens(const Vocabulary& vocab, std::string_view text) {
  std::vector<TextFragment> fragments;
  if (!text.empty()) fragments.push_back({text, std::nullopt});
  for (const std::int32_t id : user_defined_by_length(vocab)) fragments = split_at(fragments, vocab.pieces[id], id);
  return fragments;
}

}  // namespace attnviz
