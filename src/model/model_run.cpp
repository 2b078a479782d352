#include "model/model_run.hpp"

#include <algorithm>
#include <charconv>

#include "core/error.hpp"

namespace attnviz {

namespace {

// Highest layer index accepted before the model's layer count is known: no model has more, and
// a range up to it stays a small list.
constexpr int kMaxLayerIndex = 9999;

// One whole number of a --layers item, all of `text`; nullopt for anything else ("", "-1", "2x").
std::optional<int> parse_index(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::string AttentionBlock::head_name(int head) const {
  const std::string name = "L" + std::to_string(layer) + "H" + std::to_string(head);
  if (!encoder_decoder) return name;
  return (stack == "encoder" ? "enc." : "dec.") + name;
}

bool LayerSelection::contains(int layer) const {
  return layers.empty() || std::binary_search(layers.begin(), layers.end(), layer);
}

LayerSelection parse_layer_selection(const std::string& text, int num_layers) {
  const std::string option = "--layers";
  const std::string forms = "expected all, a layer (2), a list (0,3) or a range (1-4)";
  if (text == "all") return {};
  LayerSelection selection;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t dash = item.find('-');
    const auto first = parse_index(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_index(item.substr(dash + 1));
    if (!first || !last || *last < *first) {
      throw UsageError::bad_option(option, forms + ", got '" + text + "'");
    }
    if (num_layers <= 0 && *last > kMaxLayerIndex) {
      throw UsageError::bad_option(option, "layer " + std::to_string(*last) + " is beyond any model (at most " +
                                               std::to_string(kMaxLayerIndex) + ")");
    }
    if (num_layers > 0 && *last >= num_layers) {
      throw UsageError::bad_option(option, "layer " + std::to_string(*last) + " does not exist: the model has " +
                                               std::to_string(num_layers) + " layers, 0 to " +
                                               std::to_string(num_layers - 1));
    }
    for (int layer = *first; layer <= *last; ++layer) selection.layers.push_back(layer);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  std::sort(selection.layers.begin(), selection.layers.end());
  selection.layers.erase(std::unique(selection.layers.begin(), selection.layers.end()), selection.layers.end());
  return selection;
}

}  // namespace attnviz
