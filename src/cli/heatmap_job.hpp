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
/// `block` is an encoder-decoder's block ("enc", "dec" or "cross", see block_names), "" for any
/// other record: it names the kind ("encoder self-attention weights", "decoder self-attention
/// weights", "decoder cross-attention weights") and prefixes head names ("enc.L3H0"), so that
/// the encoder's and the decoder's self-attention pictures differ. `measure` (--measure) names
/// what is drawn instead of "weights": "value-weighted norms ‖α·f(x)‖ …", "ALTI contributions …".
std::string heatmap_figure_title(const AttentionRecord& record, const std::string& block = "", const std::string& measure = "weights");

/// Renders grid.png and head_<h>.png for every head (h from 0) into `options.output`/, and
/// grid.svg and head_<h>.svg when options.formats asks for svg (only those without png).
/// Appends renderer warnings (missing glyphs, thinned labels, downsampling).
/// Throws UsageError (bad --cmap/--scale/--cols), LimitError (image or memory too large).
/// `memory_budget` bounds each image's pixel memory (LimitError above it).
/// `block` as for heatmap_figure_title.
OutputSet render_heatmaps(const AttentionRecord& record, const Options& options,
                          std::vector<std::string>& warnings, double memory_budget, const std::string& block = "");

/// The HTML report's view of `record`: the grid that grid.png shows (same titles, head names,
/// colour map and scale), named `name` in the page's selector. Throws UsageError (bad --cmap),
/// LimitError when the view's values need more than `memory_budget` bytes beside the record
/// (kReportBytesPerValue each).
ReportView heatmap_report_view(const AttentionRecord& record, const Options& options, std::string name,
                               double memory_budget, const std::string& block = "");

/// The report's views of `record`: heatmap_report_view under options.measure, then one for each
/// other measure the record holds (weights always, norms, ALTI): the page's switch between them
/// (issue 20).
std::vector<ReportView> heatmap_report_views(const AttentionRecord& record, const Options& options, const std::string& name,
                                             double memory_budget, const std::string& block = "");

}  // namespace attnviz
