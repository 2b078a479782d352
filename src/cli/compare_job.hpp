// `compare`: chosen heads side by side on one colour scale, their difference maps, and
// per-head statistics as a table (and --stats FILE.json/.csv). Does not compute attention
// itself (attention_job does) or define the statistics (attention/head_stats does).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/profile.hpp"

namespace attnviz {

/// Runs `compare` as described in the README; writes options.output (PNG) and, when asked,
/// options.stats, atomically. Prints the statistics table to `out`.
void run_compare(const Options& options, PhaseTimer& timer, std::ostream& out,
                 std::vector<std::string>& warnings);

}  // namespace attnviz
