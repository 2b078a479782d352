// overview.png of a whole-model run (issue 13): fed one attention block at a time by the model
// run (or a model dump), it keeps only what the picture shows, each head's cells aggregated to
// at most overview_cells_per_side per side and each layer's mean over heads the same way, so a
// 32-layer × 32-head model at 2048 tokens costs a few MiB here instead of 16 GiB of weights.
#pragma once

#include <string>
#include <vector>

#include "model/model_run.hpp"
#include "render/heatmap.hpp"
#include "render/picture_settings.hpp"

namespace attnviz {

/// `text` shortened to `max` code points with "…", in quotes: how a title shows the input text.
std::string title_text(const std::string& text, std::size_t max = 40);

/// What the titles of a model run's pictures (overview, rollout, census) quote of its input:
/// title_text(info.text); for an encoder-decoder the source and its translation,
/// “ماكدونالد” → “mcdonald”; "empty text" when there is none (never the model's name in its place).
std::string run_text_title(const ModelRunInfo& info);

/// The max over block × block blocks of `w` [n_q, n_k]: [⌈n_q/b⌉, ⌈n_k/b⌉], without looking at a
/// mask (attention weights are ≥ 0 and exactly 0 where masked, so it is aggregate_cells' max).
Matrix max_pool_cells(const Matrix& w, int block);

class OverviewCollector {
 public:
  explicit OverviewCollector(const ModelPictureSettings& options) : options_(options) {}

  /// Keeps `block`'s cells (max over base_block × base_block, see aggregate_cells) and its mean
  /// over heads. Blocks of another stack or kind than the first (an encoder-decoder's) are not
  /// in the overview; the picture's warnings say so.
  /// A block without weights closes the block whose heads came to add_head.
  void add(const AttentionBlock& block);
  /// Head `head`'s weights as the forward pass hands them on (heads in order, then add(block)
  /// without weights): kept as add() keeps them, bit for bit, with the running sum of the heads
  /// (n_q × n_k floats) held until the block closes.
  void add_head(const AttentionBlock& block, int head, const Matrix& weights);

  /// What add() keeps for `layers` layers of `heads` heads over `tokens` tokens, and the copy
  /// render_png draws from: (heads + 1) maps of at most overview_cells_per_side² cells a layer,
  /// 5 bytes a cell (value and mask), twice.
  static double kept_bytes(const ModelPictureSettings& options, long tokens, int layers, int heads);

  /// Blocks kept.
  std::size_t layers() const { return maps_.size(); }

  /// overview.png as PNG bytes. Appends notes (aggregation, skipped blocks) to `warnings`.
  /// Requires: layers() > 0. Throws as render_overview.
  std::string render_png(const ModelRunInfo& info, double memory_budget, std::vector<std::string>& warnings) const;

 private:
  ModelPictureSettings options_;
  std::string stack_, kind_;
  int base_block_ = 1;
  long n_q_ = 0, n_k_ = 0;
  int num_heads_ = 0;
  std::vector<std::string> skipped_;
  std::vector<std::string> row_labels_;
  std::vector<std::string> window_layers_;  ///< "L0 (5)" for each sliding-window layer kept
  std::vector<std::vector<DrawnCells>> maps_;
  std::vector<DrawnCells> means_;
  std::vector<DrawnCells> pending_;  ///< the heads of the block being handed on (add_head)
  Matrix head_sum_;                  ///< their sum so far
  /// True when `block` is of the overview's stack and kind (the first block's, which sets them).
  bool accepts(const AttentionBlock& block);
  void skip(const AttentionBlock& block);
  void close_heads(const AttentionBlock& block);
  void keep(const AttentionBlock& block, std::vector<DrawnCells> heads, DrawnCells mean);
};

}  // namespace attnviz
