// The picture of a whole model's head census (census/head_census, `compare --model … --census
// FILE`): one layer × head heat-table per statistic, a part per kind of block, in PNG, SVG and
// HTML as --format asks; and the census as the HTML report's table.
#pragma once

#include <string>
#include <vector>

#include "census/head_census.hpp"
#include "io/atomic_output.hpp"
#include "render/head_grid.hpp"
#include "render/picture_settings.hpp"
#include "render/text_table.hpp"

namespace attnviz {

/// The census as a text table for the HTML report: the CSV's header and cells, verbatim (so the
/// page shows exactly the numbers census.csv holds), one row per head.
TextTable head_census_table(const CensusCollector& census);

/// The census picture's parts, top to bottom: one per kind of block (encoder self, decoder
/// self, decoder cross; one part for a decoder-only model), each a layer × head table per
/// statistic that applies to that kind, on its own min–max scale, values printed in the
/// cells. An encoder-decoder's rows are labelled with their block ("enc.L0") and each part's
/// title names it; its parts share --max-size's height and `memory_budget` (bytes).
std::vector<GridRequest> head_census_requests(const CensusCollector& census, const ModelRunInfo& info,
                                              const ModelPictureSettings& options, double memory_budget);

/// The head_census_requests drawn and stacked: PNG bytes; warnings name `path`.
std::string head_census_png(const CensusCollector& census, const ModelRunInfo& info, const ModelPictureSettings& options,
                            const std::string& path, double memory_budget, std::vector<std::string>& warnings);

/// The picture in every format options.formats asks for, as compare writes its figure: `path`
/// (PNG), the same name with .svg (the parts stacked) and with .html (a view per part).
/// Throws as render_grid().
void add_head_census_pictures(const CensusCollector& census, const ModelRunInfo& info, const ModelPictureSettings& options,
                              const std::string& path, double memory_budget, OutputSet& files,
                              std::vector<std::string>& warnings);

}  // namespace attnviz
