// The whole model at a glance (issue 13): one small attention map per (layer, head), layers as
// rows (layer 0 at the top) and heads as columns, a per-layer mean over heads drawn apart as a
// last column, one fixed 0–1 colour bar, `L<l>` / `H<h>` labels. Each map shows queries down and
// keys across, as every other picture. Maps arrive already aggregated (a model run keeps only
// these cells, never every layer's weights); the picture aggregates further when they do not
// fit and says so. Draws into memory; never writes files, never prints.
#pragma once

#include <string>
#include <vector>

#include "render/font.hpp"
#include "render/heatmap.hpp"
#include "render/image.hpp"

namespace attnviz {

/// What to draw. maps[l][h] and means[l] all share one shape, the n_q × n_k weights aggregated
/// in base_block × base_block blocks (aggregate_cells: max over allowed cells).
struct OverviewRequest {
  std::vector<std::string> row_labels;        ///< one per layer, top to bottom ("L0", …)
  std::vector<std::string> column_labels;     ///< one per head ("H0", …)
  std::vector<std::vector<DrawnCells>> maps;  ///< [layer][head]
  std::vector<DrawnCells> means;              ///< [layer] mean over heads, or empty: no mean column
  std::string mean_label;                     ///< header of the mean column ("mean of 8 heads")
  long n_q = 0, n_k = 0;                      ///< tokens before any aggregation
  int base_block = 1;                         ///< the aggregation the maps arrive with
  std::string figure_title;
  std::string mask_note;                      ///< an extra legend line about masks (sliding windows), or empty
  std::string cmap = "viridis";
  std::string colorbar_label = "attention weight";  ///< what the maps hold (--measure norms: row shares of N)
  int max_size_px = 4096;                     ///< capped at kMaxSidePx
  double max_memory_bytes = 8e9;              ///< refuse a picture whose working memory exceeds it
};

/// Where things went (for tests) and what the picture says about itself.
struct RenderedOverview {
  Image image;
  int cell_px = 0;                 ///< side of one drawn cell
  int block = 1;                   ///< total aggregation: each drawn cell is block × block weights
  int map_px = 0;                  ///< side of one map's cell area (maps are drawn_rows × cell_px high)
  std::vector<std::vector<Rect>> map_rects;  ///< [layer][column], the mean column last when drawn
  std::vector<std::string> notes;  ///< legend lines (layout, aggregation, masking) before wrapping
  bool thumbnail = false;          ///< no text fits max_size_px: the maps alone (no labels, title,
                                   ///< colour bar or legend)
  std::vector<std::string> warnings;  ///< for the user: a thumbnail (and the size its text needs),
                                      ///< aggregated cells
};

/// The largest number of drawn cells per map side worth keeping while a model runs with
/// `columns` map columns (heads, plus one for the mean) under max_size_px: aggregating to
/// this early loses nothing the picture could show.
int overview_cells_per_side(int columns, int max_size_px);

/// Lays out and draws the overview. Cell size: up to 12 px, as large as fits (maps of about
/// 160 px for short inputs); when even 1 px per cell does not fit, cells are aggregated further
/// by the smallest factor that fits. The title and legend wrap at spaces rather than widen the
/// image beyond max_size_px. When no labelled layout fits, a thumbnail of the maps alone (same
/// rule for cells; see RenderedOverview::thumbnail). Throws UsageError for an unknown cmap,
/// LimitError::image_size when not even a thumbnail fits, LimitError::memory over max_memory_bytes.
/// Requires: at least one layer and one head, every map of the same shape.
RenderedOverview render_overview(const OverviewRequest& request, const FontSet& fonts);

}  // namespace attnviz
