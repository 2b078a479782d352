// `heatmaps` and `render`: from an AttentionRecord to PNG files in memory — the grid of all
// heads and one image per head, through the same renderer (a single head is a 1 × 1 grid).
// Does not write to disk (run() commits the returned OutputSet).
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "io/atomic_output.hpp"
#include "io/attention_record.hpp"
#include "render/html_report.hpp"

namespace attnviz {

/// The figure title of a record's pictures: "[model · ][layer L · ]self-attention weights" (or
/// cross-attention), then " · causal mask", " · padding mask", " · RoPE (style)" when applied.
std::string heatmap_figure_title(const AttentionRecord& record);

/// Renders grid.png and head_<h>.png for every head (h from 0) into `options.output`/, and
/// grid.svg and head_<h>.svg when options.formats asks for svg (only those without png).
/// Appends renderer warnings (missing glyphs, thinned labels, downsampling).
/// Throws UsageError (bad --cmap/--scale/--cols), LimitError (image or memory too large).
/// `memory_budget` bounds each image's pixel memory (LimitError above it).
OutputSet render_heatmaps(const AttentionRecord& record, const Options& options,
                          std::vector<std::string>& warnings, double memory_budget);

/// The HTML report's view of `record`: the grid that grid.png shows (same titles, head names,
/// colour map and scale), named `name` in the page's selector. Throws UsageError (bad --cmap),
/// LimitError when the view's values need more than `memory_budget` bytes beside the record
/// (kReportBytesPerValue each).
ReportView heatmap_report_view(const AttentionRecord& record, const Options& options, std::string name,
                               double memory_budget);

}  // namespace attnviz
