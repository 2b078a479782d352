// `heatmaps` and `render`: from an AttentionRecord to PNG files in memory — the grid of all
// heads and one image per head, through the same renderer (a single head is a 1 × 1 grid).
// Does not write to disk (run() commits the returned OutputSet).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attention/attention_record.hpp"
#include "cli/options.hpp"
#include "io/atomic_output.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/html_report.hpp"
#include "render/png_batch.hpp"
#include "render/png_pipeline.hpp"

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
/// options.heads (--heads), when given, are the only heads drawn: their pictures, and the grid
/// of them alone (UsageError for a head the record lacks, or with --measure alti).
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

/// render_heatmaps for a record whose heads come one at a time (issue 23: a model run at 8192
/// tokens holds one head's weights, not a layer's): each head's head_<h>.png is drawn as it
/// comes and only its cells as grid.png aggregates them are kept; grid.png is drawn when the
/// record closes. Same files, bit for bit, as render_heatmaps of the whole record, for the
/// pictures it applies to (applies()).
/// A layer's pictures handed to a PngPipeline and not taken yet: grid.png first, then each
/// head's, as render_heatmaps gives them; and the warnings the layer gave before its pictures'
/// and after them.
struct PendingPictures {
  std::string folder;  ///< the layer's folder, made with its files
  std::vector<std::string> warnings;
  std::vector<std::string> warnings_after;
  std::vector<std::pair<std::string, std::size_t>> pictures;  ///< path and pipeline ticket
};

/// The heads a heatmaps picture set draws: options.heads (--heads) in the order given, or every
/// head of `record` (0 … num_heads−1). Throws UsageError naming the valid heads for a head the
/// record lacks, and for --heads with --measure alti (one map per layer, no heads).
std::vector<int> drawn_heads(const AttentionRecord& record, const Options& options, const std::string& measure);

/// The files of `pending`, taken from `pipeline` in order (waiting for them); appends
/// pending.warnings, each picture's warnings not in `warnings` yet, then pending.warnings_after.
/// Throws what the first
/// failing picture threw (render_heatmaps' errors).
OutputSet take_pictures(PngPipeline& pipeline, const PendingPictures& pending, std::vector<std::string>& warnings);

class HeadByHeadHeatmaps {
 public:
  /// True when the options' pictures can be made head by head: PNG and the HTML report
  /// (report_heads.hpp), no SVG; --scale fixed or log (the colours of a head need no other
  /// head); --measure weights.
  static bool applies(const Options& options);

  /// `options.output` is the record's folder, as for render_heatmaps. The pictures are made by
  /// `pictures` (with its fonts), which must outlive this; a run's layers share one, so that a
  /// head's picture is drawn and encoded while the next heads come (issue 38).
  HeadByHeadHeatmaps(const Options& options, double memory_budget, std::string block, PngPipeline& pictures);
  /// Head `head` of `record` (whose own weights are empty): heads in order from 0; its picture
  /// is handed to the pipeline. Throws as render_heatmaps (a picture's own error at finish, or
  /// at a later add_head).
  void add_head(const AttentionRecord& record, int head, const Matrix& weights);
  /// Hands grid.png to the pipeline: the record is complete. The layer's pictures are taken later
  /// (take_pictures), so that the grid, the largest, is made while the next layer's heads come.
  PendingPictures finish();

 private:
  Options options_;
  double memory_budget_;
  std::string block_;
  PngPipeline& pictures_;
  GridRequest grid_;
  SharedMask allowed_;  ///< the layer's whole mask [n_q, n_k]; base_request takes the drawn rows of it
  int first_ = 0;
  float largest_ = 0;
  std::vector<std::pair<std::string, std::size_t>> heads_;  ///< each head's path and pipeline ticket
  /// Heads' pictures held back until finish() hands the grid in first, when the layer's heads'
  /// drawn cells together fit kHeldHeadBytes (else each goes in as it comes).
  std::vector<PngJob> held_heads_;
  bool hold_heads_ = false;
  std::vector<int> drawn_heads_;  ///< --heads, or every head of the record
  std::vector<std::shared_ptr<const DrawnCells>> drawn_cells_;  ///< the grid's cells, in drawn_heads_' order
  /// A short text's heads are held whole (32 tokens: 8 heads of a few KiB); a long text's
  /// pictures go to the pipeline as they come, as the bound of issue 23 asks.
  static constexpr std::size_t kHeldHeadBytes = std::size_t{4} << 20;
};

}  // namespace attnviz
