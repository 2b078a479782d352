// Saving the head census of `compare --model … --census FILE.csv|FILE.json` (issue 13): one
// row per (layer, head) with the statistics `--stats` writes, under the same names, plus the
// induction score. Formatting only (the numbers come from attention/head_stats).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/head_stats.hpp"

namespace attnviz {

/// One head of a whole model. stack ("encoder" or "decoder") and kind ("self" or "cross") say its
/// block, as the model dump's fields do; both are empty for a model with one kind of block
/// (decoder-only), whose files keep the columns layer,head alone.
struct CensusRow {
  std::string stack, kind;
  int layer = 0, head = 0;
  HeadStats stats;                    ///< argmax_keys is not kept (not part of the census)
  std::optional<double> induction;    ///< induction_score; nullopt when the text has no repeats
};

/// CSV: [stack,kind,]layer,head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,
/// mean_distance,diagonal_mass,previous_token_mass,first_token_mass,induction_score; an empty
/// field where a statistic does not apply or is undefined (cross-attention; induction without
/// repeats; H/ln k when no row sees two keys; previous-token mass with one token). The
/// stack and kind columns come first when some row has a stack (encoder-decoder models).
std::string census_to_csv(const std::vector<CensusRow>& rows);

/// JSON: {"units": …, "induction_score": "…why it is null, when it is…", "heads": [{["stack":
/// "encoder", "kind": "self",] "layer": 0, "head": 3, "entropy_mean": …, …, "induction_score": …
/// or null}, …]}; stack and kind as in the CSV.
std::string census_to_json(const std::vector<CensusRow>& rows);

}  // namespace attnviz
