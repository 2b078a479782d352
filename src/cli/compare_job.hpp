// `compare`: chosen heads side by side on one colour scale, their difference maps, and
// per-head statistics as a table (and --stats FILE.json/.csv). Does not compute attention
// itself (attention_job does) or define the statistics (attention/head_stats does).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "attention/attention_record.hpp"
#include "cli/options.hpp"
#include "cli/profile.hpp"
#include "io/atomic_output.hpp"
#include "render/text_table.hpp"

namespace attnviz {

/// Runs `compare` as described in docs/analysis.md; writes options.output (PNG) and, when asked,
/// options.stats, atomically. Prints the statistics table to `out`.
void run_compare(const Options& options, PhaseTimer& timer, std::ostream& out,
                 std::vector<std::string>& warnings);

/// `compare --model … --heads L0H3,L4H1`: the same comparison of heads taken from several
/// layers. `record` holds the chosen heads as its heads (same tokens and mask), `names` their
/// names ("L0H3"), one per head. `extra_files` (a census) are written together with the PNG;
/// `extra_tables` (the census as text) join the statistics table in compare.html.
void run_compare_heads(AttentionRecord record, std::vector<std::string> names, const Options& options,
                       PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings,
                       OutputSet extra_files, std::vector<TextTable> extra_tables = {});

}  // namespace attnviz
