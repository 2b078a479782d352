#include "cli/suggestion.hpp"

#include <algorithm>

namespace attnviz {

namespace {

// Farther than this, a suggestion is more often wrong than helpful (git and CLI11's own
// subcommand hints use similar bounds).
constexpr std::size_t kMaxSuggestionDistance = 3;

std::string without_dashes(const std::string& name) {
  const std::size_t start = name.find_first_not_of('-');
  return start == std::string::npos ? std::string() : name.substr(start);
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(const std::string& word, const std::vector<std::string>& names) {
  if (std::find(names.begin(), names.end(), word) != names.end()) return std::nullopt;
  const std::string bare = without_dashes(word);
  if (bare.empty()) return std::nullopt;
  // Half the word: "-x" is one edit from every one-letter flag and means none of them.
  const std::size_t limit = std::min(kMaxSuggestionDistance, bare.size() / 2);
  std::optional<std::string> nearest;
  std::size_t best = limit + 1;
  for (const std::string& name : names) {
    const std::size_t distance = edit_distance(bare, without_dashes(name));
    if (distance < best) best = distance, nearest = name;
  }
  if (nearest) return nearest;
  std::vector<std::string> extensions;
  for (const std::string& name : names)
    if (without_dashes(name).starts_with(bare)) extensions.push_back(name);
  if (extensions.size() == 1) return extensions.front();
  return std::nullopt;
}

}  // namespace attnviz
