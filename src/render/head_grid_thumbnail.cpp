// The head grid below the size where its text fits (issue 24): fit_thumbnail() of
// head_grid_internal.hpp places the panels' cells alone. Measures nothing, draws nothing.
#include <algorithm>

#include "render/head_grid_internal.hpp"

namespace attnviz {

namespace {

constexpr int kThumbnailMarginPx = 2;  // a frame's pixel outside the cells, and one more
constexpr int kThumbnailGapPx = 4;     // between panels

// Cells only, `cols` columns of cell_px cells aggregating block × block; every text rect empty.
GridLayout place_thumbnail(const GridRequest& request, int cols, int cell_px, int block) {
  GridLayout layout = cell_grid(request, cols, cell_px, block);
  layout.thumbnail = true;
  const int cells_w = layout.drawn_cols * cell_px, cells_h = layout.drawn_rows * cell_px;
  for (std::size_t p = 0; p < request.panels.size(); ++p) {
    const int r = static_cast<int>(p) / layout.panel_cols, c = static_cast<int>(p) % layout.panel_cols;
    PanelLayout panel;
    panel.cells = {kThumbnailMarginPx + c * (cells_w + kThumbnailGapPx),
                   kThumbnailMarginPx + r * (cells_h + kThumbnailGapPx), cells_w, cells_h};
    panel.bounds = panel.cells;
    for (Rect* text : {&panel.title, &panel.query_labels, &panel.key_labels, &panel.query_axis_title,
                       &panel.key_axis_title}) {
      *text = {panel.cells.x_px, panel.cells.y_px, 0, 0};
    }
    layout.panels.push_back(panel);
  }
  layout.width_px = 2 * kThumbnailMarginPx + layout.panel_cols * cells_w + (layout.panel_cols - 1) * kThumbnailGapPx;
  layout.height_px = 2 * kThumbnailMarginPx + layout.panel_rows * cells_h + (layout.panel_rows - 1) * kThumbnailGapPx;
  return layout;
}

}  // namespace

std::optional<GridLayout> fit_thumbnail(const GridRequest& request, const std::vector<int>& choices,
                                        int preferred_cell_px, int max_side, int max_height) {
  const auto fits = [&](const GridLayout& l) { return l.width_px <= max_side && l.height_px <= max_height; };
  std::optional<GridLayout> best;
  for (const int cols : choices) {
    // Only cells larger than the best so far can win.
    for (int cell_px = preferred_cell_px; cell_px >= 1 && (!best || cell_px > best->cell_px); --cell_px) {
      GridLayout layout = place_thumbnail(request, cols, cell_px, 1);
      if (fits(layout)) {
        best = std::move(layout);
        break;
      }
    }
  }
  if (best) return best;
  const int n_max = static_cast<int>(std::max(request.query_tokens.size(), request.key_tokens.size()));
  for (const int cols : choices) {
    for (int block = 2; block <= n_max; ++block) {
      GridLayout layout = place_thumbnail(request, cols, 1, block);
      if (fits(layout)) return layout;
    }
  }
  return std::nullopt;
}

}  // namespace attnviz
