// census.png of a corpus census (census/corpus_census): one layer × head panel per statistic,
// showing its mean over the texts, the number of texts in the title; one part per kind of block.
#pragma once

#include <string>
#include <vector>

#include "census/corpus_census.hpp"
#include "render/head_grid.hpp"
#include "render/picture_settings.hpp"

namespace attnviz {

/// What corpus_census_png draws: one grid per kind of block (decoder-only: one), one panel per
/// statistic with its own mask of the heads where it is defined on some text; a statistic
/// defined on no text is an empty panel titled "…: defined on no text" and named in a warning.
std::vector<GridRequest> corpus_census_requests(const CorpusCensus& census, const PictureSettings& options,
                                                 std::vector<std::string>& warnings);

/// The layer × head picture of every statistic's mean (PNG bytes), the number of texts in the
/// title. Throws InputError when no head has a value to draw, or as the fonts and encoder do.
std::string corpus_census_png(const CorpusCensus& census, const PictureSettings& options, std::vector<std::string>& warnings);

}  // namespace attnviz
