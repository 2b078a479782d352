// The attention picture as SVG: the same GridLayout as the PNG (layout_grid), so every cell,
// label, title, the colour bar and the legend sit at the PNG's pixel positions; cells are
// <rect>s in the colour-map colour (masked cells grey with the PNG's 1-px hatch, as a pattern),
// labels are <text> in DejaVu Sans, and --annotate's values <text> in the cells. A picture with more than kMaxVectorCells drawn cells embeds
// each panel's cells as one PNG raster instead (labels and axes stay vector). Never writes files.
#pragma once

#include <string>

#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/svg_document.hpp"

namespace attnviz {

/// Above this many drawn cells in one picture (all panels), cells are embedded as one PNG
/// raster per panel: 50 000 <rect>s make an SVG of about 3 MB, which editors still open.
inline constexpr long kMaxVectorCells = 50000;

/// Font family of every <text> (the PNG's default font, then generic fallbacks).
inline constexpr const char* kSvgFontFamily = "DejaVu Sans, Verdana, sans-serif";

/// The grid of `request` as SVG elements; ids in its defs start with `id_prefix` (distinct
/// prefixes let several pictures share one document). Cells are in row-major order, panel by
/// panel, inside <g class="cells"> (one per panel), as <rect class="c"> (allowed) or
/// <rect class="m"> (masked), or a single <image class="raster"> per panel past kMaxVectorCells.
/// Throws as layout_grid().
SvgPicture grid_svg(const GridRequest& request, const FontSet& fonts, const std::string& id_prefix);

}  // namespace attnviz
