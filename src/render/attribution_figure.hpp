// attribution.png (and .svg, and the page attribution.html): the two layer × head maps of `attnviz attribute`, direct
// logit attribution above and ablation below, each on its own diverging scale centred at 0
// (rdbu: red pushes towards the target, blue away), values printed in the cells, the target
// and the position in the title.
#pragma once

#include <string>
#include <vector>

#include "analysis/head_attribution.hpp"
#include "io/atomic_output.hpp"
#include "render/head_grid.hpp"
#include "render/picture_settings.hpp"

namespace attnviz {

/// What the title names: the model, the target's label and the position's token label.
struct AttributionTitle {
  std::string model;
  std::string target_token;
  std::string position_token;
};

/// The maps' grid requests, top to bottom: "dla" then (when the attribution has them)
/// "ablation". Each is [layer, head], symmetric scale ±max|value|.
std::vector<GridRequest> attribution_requests(const HeadAttribution& attribution, const AttributionTitle& title,
                                              const PictureSettings& options, double memory_budget);

/// Queues folder/attribution.png, .svg and .html (attribution_page.hpp, with `top_heads` lines)
/// as options.formats asks. Appends the grids' warnings. Throws as render_grid().
void add_attribution_pictures(const HeadAttribution& attribution, const AttributionTitle& title, const PictureSettings& options,
                              const std::string& folder, double memory_budget, const std::vector<std::string>& top_heads,
                              OutputSet& files, std::vector<std::string>& warnings);

}  // namespace attnviz
