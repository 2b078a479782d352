// The pictures of a whole model beside its per-layer heatmaps (issue 13): overview.png always,
// rollout.png with --rollout. Fed the blocks one at a time, by a model run or a model dump.
#pragma once

#include <string>
#include <vector>

#include "io/atomic_output.hpp"
#include "render/html_report.hpp"
#include "render/overview_collector.hpp"
#include "render/picture_settings.hpp"
#include "render/rollout_collector.hpp"

namespace attnviz {

class ModelPictures {
 public:
  /// Keeps a reference to `options`, which must outlive this. For an encoder-decoder the
  /// overview shows the decoder's cross-attention of every layer (the translation picture).
  /// The pictures go to `folder`, drawn within `memory_budget` bytes.
  ModelPictures(const ModelPictureSettings& options, bool encoder_decoder, std::string folder, double memory_budget);
  /// Throws as RolloutCollector::add (--rollout over cross-attention or missing layers). With
  /// --measure norms the overview and rollout read each row of N normalised to sum 1 (their
  /// titles say so).
  /// A block without weights closes the block whose heads came to add_head.
  void add(const AttentionBlock& block);
  /// Head `head` of `block` as the forward pass hands it on (heads in order, then add(block)
  /// without weights): the overview keeps it as add() would. Requires takes_heads(options).
  void add_head(const AttentionBlock& block, int head, const Matrix& weights);
  /// True when the pictures can be made head by head: without --rollout (its mean over heads is
  /// taken from a whole block) and with --measure weights.
  static bool takes_heads(const ModelPictureSettings& options);
  /// Adds DIR/overview.png (and DIR/rollout.png) to `files`; nothing when no block came.
  void render(const ModelRunInfo& info, OutputSet& files, std::vector<std::string>& warnings) const;
  /// rollout.png's two grids as views of the HTML report (measure "rollout"): the last layer's R
  /// and the strip of every layer's last-query row. Empty without --rollout or before any block.
  std::vector<ReportView> report_views(const ModelRunInfo& info) const;
  /// What add() keeps across layers (for run_model's memory estimate).
  /// `by_head`: add_head's running sum of a block's heads (n² floats) too.
  static double kept_bytes(const ModelPictureSettings& options, long tokens, int layers, int heads, bool by_head = false);

 private:
  /// add() for a block whose weights are what the overview and rollout read.
  void add_distributions(const AttentionBlock& block);

  const ModelPictureSettings& options_;
  bool encoder_decoder_;
  std::string folder_;
  double memory_budget_;
  OverviewCollector overview_;
  RolloutCollector rollout_;
};

}  // namespace attnviz
