// attribution.html (issue 34 §3): attribute's own page, not the attention report (whose head and
// text views drew "attention lines" from layers to heads): the maps of attribution.png as tables,
// layer rows by head columns, each cell coloured as the PNG colours it (rdbu, symmetric about 0
// over the map) and holding its value, the head and the value again on hover; and the top heads.
// Static HTML, no script, no request (the report's Content-Security-Policy).
#pragma once

#include <string>
#include <vector>

#include "render/head_grid.hpp"

namespace attnviz {

/// The page of `maps` (attribution_requests: one per map, each panel [layer, head] with its
/// title; the first holds the figure title) with `top_heads` lines under the title ("top direct
/// logit attribution: L4H0 1.264, …"). `head_prefixes[m][p]`: the block prefix of map m's panel
/// p's heads ("" decoder-only; "enc.", "dec.", "cross."). Each cell carries data-layer, data-head
/// and data-value (the value, shortest round-trip decimal).
std::string attribution_page_html(const std::vector<GridRequest>& maps, const std::vector<std::vector<std::string>>& head_prefixes,
                                  const std::vector<std::string>& top_heads);

}  // namespace attnviz
