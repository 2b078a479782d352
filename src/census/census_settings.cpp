#include "census/census_settings.hpp"

namespace attnviz {

std::string canonical_layers(const LayerSelection& selection, int num_layers) {
  if (selection.all()) return "all";
  const auto& r = selection.ranges;
  if (num_layers > 0 && r.size() == 1 && r.front().first == 0 && r.front().second == num_layers - 1) return "all";
  std::string text;
  for (const auto& [first, last] : r) {
    if (!text.empty()) text += ",";
    text += std::to_string(first);
    if (last != first) text += "-" + std::to_string(last);
  }
  return text;
}

long canonical_limit(long limit, bool cut) { return limit >= 0 && cut ? limit : -1; }

}  // namespace attnviz
