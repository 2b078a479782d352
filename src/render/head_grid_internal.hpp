// What the head grid's layout (head_grid_layout.cpp, head_grid_thumbnail.cpp) and drawing
// (head_grid.cpp) share: the sizes of the text both place, the panels' arrangement, the
// thumbnail layout, and the masks a request's panels are drawn with. Internal to
// render/: other modules use head_grid.hpp.
#pragma once

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/types.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"

namespace attnviz {

inline constexpr int kFigureTitleFontPx = 18;
inline constexpr int kPanelTitleFontPx = 15;
inline constexpr int kAxisTitleFontPx = 13;
inline constexpr int kLegendFontPx = 13;
inline constexpr int kSwatchGapPx = 6;  // between the masked-cell swatch and its legend text

/// Line height of `fonts` at `font_px`.
inline int line_px(const FontSet& fonts, int font_px) { return fonts.line_metrics(font_px).line_height_px; }

/// Side of a legend line's swatch (a small masked cell): the legend font's ascent.
inline int swatch_px(const FontSet& fonts) { return fonts.line_metrics(kLegendFontPx).ascent_px; }

/// The mask, or an empty one when there is none (for `allowed`: everything allowed).
const MaskMatrix& mask_or_empty(const SharedMask& mask);

/// (rows, cols) of panels for `cols` columns (cut to the panel count).
inline std::pair<int, int> grid_shape(int n_panels, int cols) {
  cols = std::clamp(cols, 1, n_panels);
  return {(n_panels + cols - 1) / cols, cols};
}

/// A layout's cell grid alone: token counts, panel rows and columns for `cols`, cell size and
/// aggregation block, drawn rows and columns (ceil(n / block)); nothing placed yet.
GridLayout cell_grid(const GridRequest& request, int cols, int cell_px, int block);

/// The thumbnail layout (GridLayout::thumbnail: cells alone, 2 px margins, 4 px between panels)
/// for the first of `choices` (column counts) whose cells are largest, from preferred_cell_px
/// down to 1 px; else the smallest block at 1 px per cell in the first choice that fits; nullopt
/// when not even one pixel per panel fits. Leaves labels, titles and the labelled size empty.
std::optional<GridLayout> fit_thumbnail(const GridRequest& request, const std::vector<int>& choices,
                                        int preferred_cell_px, int max_side, int max_height);

/// request.allowed, or an empty mask (everything allowed).
inline const MaskMatrix& allowed_cells(const GridRequest& request) { return mask_or_empty(request.allowed); }

}  // namespace attnviz
