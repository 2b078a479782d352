#include "model/tokenizers/text_fragments.hpp"

#include <algorithm>
#include <cctype>

namespace attnviz {

namespace {

// Ids of the tokens looked for, longest piece first (ties by id, so the order is fixed).
std::vector<std::int32_t> special_by_length(const Vocabulary& vocab, bool parse_special) {
  std::vector<std::int32_t> ids;
  for (std::size_t id = 0; id < vocab.types.size() && id < vocab.size(); ++id) {
    if (is_partitioned_type(vocab.types[id], parse_special) && !vocab.pieces[id].empty()) {
      ids.push_back(static_cast<std::int32_t>(id));
    }
  }
  const auto longer = [&vocab](std::int32_t a, std::int32_t b) { return vocab.pieces[a].size() > vocab.pieces[b].size(); };
  std::stable_sort(ids.begin(), ids.end(), longer);
  return ids;
}

bool contains(const std::vector<std::int32_t>& ids, std::int32_t id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

bool is_c_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Replaces every plain fragment of `fragments` that holds `piece` by the runs around it and
// the token; lstrip/rstrip drop the white space next to it from those runs.
std::vector<TextFragment> split_at(const std::vector<TextFragment>& fragments, std::string_view piece, std::int32_t id,
                                   bool lstrip, bool rstrip) {
  std::vector<TextFragment> out;
  for (const TextFragment& fragment : fragments) {
    if (fragment.token) {
      out.push_back(fragment);
      continue;
    }
    std::string_view rest = fragment.text;
    for (std::size_t at = rest.find(piece); at != std::string_view::npos; at = rest.find(piece)) {
      std::string_view left = rest.substr(0, at);
      if (lstrip)
        while (!left.empty() && is_c_space(left.back())) left.remove_suffix(1);
      if (!left.empty()) out.push_back({left, std::nullopt});
      out.push_back({rest.substr(at, piece.size()), id});
      rest.remove_prefix(at + piece.size());
      if (rstrip)
        while (!rest.empty() && is_c_space(rest.front())) rest.remove_prefix(1);
    }
    if (!rest.empty()) out.push_back({rest, std::nullopt});
  }
  return out;
}

}  // namespace

bool is_partitioned_type(TokenType type, bool parse_special) {
  if (type == TokenType::UserDefined) return true;
  return parse_special && (type == TokenType::Control || type == TokenType::Unknown);
}

std::vector<TextFragment> split_at_special_tokens(const Vocabulary& vocab, std::string_view text, bool parse_special) {
  std::vector<TextFragment> fragments;
  if (!text.empty()) fragments.push_back({text, std::nullopt});
  for (const std::int32_t id : special_by_length(vocab, parse_special))
    fragments = split_at(fragments, vocab.pieces[id], id, contains(vocab.lstrip_tokens, id), contains(vocab.rstrip_tokens, id));
  return fragments;
}

}  // namespace attnviz
