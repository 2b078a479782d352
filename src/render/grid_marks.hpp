// Marks drawn over a panel's cells that are not values: the end of the prompt (--generate) as
// lines across rows and columns, and the attention sink's column under --exclude-sink (issue 23).
// Geometry and legend words only; PNG (head_grid.cpp) and SVG (svg_grid.cpp) draw the rects.
#pragma once

#include <string>
#include <vector>

#include "render/head_grid.hpp"

namespace attnviz {

/// The marks' colour: matplotlib's tab:red, apart from every sequential map's colours.
inline constexpr Rgb kMarkColour{214, 39, 40};

/// Rects (image pixels) to fill with kMarkColour on one panel: a 1-px line along the top of
/// query row request.prompt_query_rows and one along the left of key column
/// request.prompt_key_cols (each across the whole panel), and with request.exclude_sink a 3-px
/// bar just above key column 0. None for a thumbnail's sink bar (no gap above its cells).
std::vector<Rect> grid_mark_rects(const GridRequest& request, const GridLayout& layout, const PanelLayout& panel);

/// The legend lines that explain the marks the request asks for, in words (empty when none):
/// "red lines: the prompt ends after token 11; rows below and columns right of them are
/// generated" and "red bar over key 0: …".
std::vector<std::string> grid_mark_legend(const GridRequest& request);

}  // namespace attnviz
