// What a whole-model run produces, whatever the file format: a summary of the model, the
// tokens it saw, and its attention blocks, handed one at a time to a sink as each is computed
// so that no more than one layer's weights need be held (issue 11: memory). GGUF decoders
// (model/llama_model) and CTranslate2 encoder-decoders (model/ct2_model) both produce this;
// dump, heatmaps, render and compare consume it. The data types live in model/model_record (the
// dump reads and writes them); here, which layers a run captures.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/model_record.hpp"

namespace attnviz {

/// Receives one head's weights of a block as the forward pass computes them, so that no more
/// than one head's are held (issue 23: one head is n² floats, 256 MiB at 8192 tokens;
/// a layer h times that). `block` is the block as the BlockSink gets it but without weights
/// (record.weights empty; tokens, layer, masks, settings filled); `head` counts from 0, in
/// order; `weights` [n_q, n_k] may be moved out. After its last head the block itself goes to
/// the BlockSink, still without weights: the sign that the block is complete.
using HeadSink = std::function<void(const AttentionBlock& block, int head, Matrix& weights)>;

/// Which layers to capture: empty = all. Parsed from --layers (all|2|0,3|1-4).
struct LayerSelection {
  /// Inclusive [first, last] ranges, sorted, disjoint and not adjacent; empty = all. Ranges, not
  /// a list: "0-999999999" costs nothing before the model says how many layers it has.
  std::vector<std::pair<int, int>> ranges;
  bool all() const { return ranges.empty(); }
  bool contains(int layer) const;
  /// How many layers are selected (all(): none counted, ask the model).
  long count() const;
  /// The highest layer selected (all(): -1).
  int last() const { return ranges.empty() ? -1 : ranges.back().second; }
};

/// Parses --layers: "all", "2", "0,3", "1-4", or a mix ("0,2-3"). Throws UsageError for
/// anything else, or (when num_layers > 0) a layer ≥ num_layers, naming the valid range.
LayerSelection parse_layer_selection(const std::string& text, int num_layers);

}  // namespace attnviz
