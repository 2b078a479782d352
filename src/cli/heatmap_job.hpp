// `heatmaps` and `render`: from an AttentionRecord to PNG files in memory — the grid of all
// heads and one image per head, through the same renderer (a single head is a 1 × 1 grid).
// Does not write to disk (run() commits the returned OutputSet).
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "io/atomic_output.hpp"
#include "io/attention_record.hpp"

namespace attnviz {

/// The figure title of a record's pictures: "[model · ][layer L · ]self-attention weights" (or
/// cross-attention), then " · causal mask", " · padding mask", " · RoPE (style)" when applied.
std::string heatmap_figure_title(const AttentionRecord& record);

/// Renders grid.png and head_<h>.png for every head (h from 0) into `options.output`/.
/// Appends renderer warnings (missing glyphs, thinned labels, downsampling).
/// Throws UsageError (bad --cmap/--scale/--cols), LimitError (image or memory too large).
/// `memory_budget` bounds each image's pixel memory (LimitError above it).
OutputSet render_heatmaps(const AttentionRecord& record, const Options& options,
                          std::vector<std::string>& warnings, double memory_budget);

}  // namespace attnviz
