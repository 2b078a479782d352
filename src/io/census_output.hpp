// Saving the head census of `compare --model … --census FILE.csv|FILE.json` (issue 13): one
// row per (layer, head) with the statistics `--stats` writes, under the same names, plus the
// induction score. Formatting only (the numbers come from attention/head_stats).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/head_stats.hpp"

namespace attnviz {

/// One head of a whole model.
struct CensusRow {
  int layer = 0, head = 0;
  HeadStats stats;                    ///< argmax_keys is not kept (not part of the census)
  std::optional<double> induction;    ///< induction_score; nullopt when the text has no repeats
};

/// CSV: layer,head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,
/// mean_distance,diagonal_mass,previous_token_mass,first_token_mass,induction_score; an empty
/// field where a statistic does not apply (cross-attention; induction without repeats).
std::string census_to_csv(const std::vector<CensusRow>& rows);

/// JSON: {"units": …, "induction_score": "…why it is null, when it is…", "heads": [{"layer": 0,
/// "head": 3, "entropy_mean": …, …, "induction_score": … or null}, …]}.
std::string census_to_json(const std::vector<CensusRow>& rows);

}  // namespace attnviz
