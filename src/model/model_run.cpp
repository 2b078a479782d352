#include "model/model_run.hpp"

#include <algorithm>
#include <charconv>

#include "core/error.hpp"

namespace attnviz {

bool LayerSelection::contains(int layer) const {
  if (ranges.empty()) return true;
  // The first range that ends at or after `layer` holds it if it starts at or before it.
  const auto range = std::lower_bound(ranges.begin(), ranges.end(), layer,
                                      [](const std::pair<int, int>& r, int value) { return r.second < value; });
  return range != ranges.end() && range->first <= layer;
}

long LayerSelection::count() const {
  long total = 0;
  for (const auto& [first, last] : ranges) total += static_cast<long>(last) - first + 1;
  return total;
}

namespace {

// A whole number ≥ 0 spelled with digits only ("07" is 7; "+1", "1.0", "" are not numbers).
bool parse_index(std::string_view text, int& value) {
  if (text.empty() || text.size() > 9) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0;
}

}  // namespace

LayerSelection parse_layer_selection(const std::string& text, int num_layers) {
  LayerSelection selection;
  if (text == "all") return selection;
  if (text.empty())  // an empty --layers "" (a shell variable left unset) is no choice: not "all" in silence
    throw UsageError::bad_option("--layers", "is empty; expected all, a layer (2), a list (0,3) or a range (1-4)");
  const std::string range = num_layers > 0 ? " (this model has layers 0-" + std::to_string(num_layers - 1) + ")" : "";
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t dash = item.find('-');
    int first = 0, last = 0;
    const bool ok = dash == std::string_view::npos
                        ? parse_index(item, first) && (last = first, true)
                        : parse_index(item.substr(0, dash), first) && parse_index(item.substr(dash + 1), last);
    if (!ok || last < first)
      throw UsageError::bad_option("--layers", "expected all, a layer (2), a list (0,3) or a range (1-4), got \"" +
                                                   std::string(item) + "\"" + range);
    if (num_layers > 0 && last >= num_layers)
      throw UsageError::bad_option("--layers", "layer " + std::to_string(last) + " does not exist" + range);
    selection.ranges.emplace_back(first, last);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  // Sorted, then overlapping or adjacent ranges merged ("0,2-3,2,1" is 0-3).
  std::sort(selection.ranges.begin(), selection.ranges.end());
  std::vector<std::pair<int, int>> merged;
  for (const auto& next : selection.ranges) {
    if (!merged.empty() && next.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, next.second);
    } else {
      merged.push_back(next);
    }
  }
  selection.ranges = std::move(merged);
  return selection;
}

}  // namespace attnviz
