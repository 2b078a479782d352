// What the head grid says in words about how it was drawn: notes on thinned labels, aggregated
// cells and values left out (drawn in its legend and returned as warnings), and a warning per
// character no font could draw. Builds text only; does not place or draw it.
#pragma once

#include <string>
#include <vector>

#include "render/font.hpp"
#include "render/head_grid.hpp"

namespace attnviz {

/// The notes `layout` calls for, in this order, each only when it applies: a thumbnail ("the
/// grid of 8 heads is drawn as a 268 × 100 px thumbnail of its cells alone: with its labels,
/// titles and colour bar it needs at least 377 × 623 px (…)"), thinned labels
/// ("every 4th query and key label shown"), aggregated cells ("each pixel shows the max over
/// 10 × 10 cells (…)") and, with request.annotate, values not printed ("values not printed:
/// cells of 9 px are too small"). Needs only the layout's strides, block, sizes and
/// annotation font.
std::vector<std::string> layout_notes(const GridRequest& request, const GridLayout& layout);

/// One warning per character (grapheme cluster) with code points no font has, naming them
/// joined by + and the first text it occurs in (token labels as
/// drawn, named by their token as given; titles; the colour bar label). None for a thumbnail.
std::vector<std::string> missing_glyph_warnings(const GridRequest& request, const FontSet& fonts,
                                                const GridLayout& layout);

/// The code point ("U+732B"), or the code points of one character joined by '+'
/// ("U+1F44D+U+1F3FD"), a missing_glyph_warnings warning is about, whatever picture and text it
/// names; "" for any other warning. Lets a run with several pictures report each
/// character once.
std::string missing_glyph_code(const std::string& warning);

}  // namespace attnviz
