// The page `attnviz serve` answers at / (issue 36): a text box and a Run button over the report
// of the last run, shown in a frame from /run/ID (the page `heatmaps --format html` writes).
#pragma once

#include <string>

namespace attnviz {

/// The whole HTML of /, titled with `model_name`. No network but its own server: the page POSTs
/// /api/run, then shows /run/ID and puts #run=ID in its address, which reloads that run while
/// the server keeps it.
std::string serve_page(const std::string& model_name);

}  // namespace attnviz
