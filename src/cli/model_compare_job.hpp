// `compare --model`: heads of different layers side by side (--heads L0H3,L4H1, through
// compare_job) and the head census of every (layer, head) (--census FILE, census_job), from
// one run of the model. Keeps only the chosen heads' weights and the census rows.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/profile.hpp"

namespace attnviz {

/// Runs the model, then writes -o (the heads' comparison with --heads, else the census
/// picture) and --census together. Prints the statistics table (--heads) or the heads the
/// census ranks first for each positional habit (heads named as model_head_name does). Throws
/// UsageError for --heads without layers (0,3), a head or layer the model does not have, a plain
/// L0H3 on an encoder-decoder model (the message lists enc.L0H3, dec.L0H3 and cross.L0H3), a
/// block name on a decoder-only model, heads of two kinds of block, or neither --heads nor
/// --census.
void run_model_compare(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings);

}  // namespace attnviz
