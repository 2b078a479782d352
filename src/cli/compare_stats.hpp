// compare's statistics: every chosen head of every run measured over the same real query rows,
// printed as a text table, drawn as the figure's table, and saved with --stats FILE.json/.csv.
// The statistics are defined in attention/head_stats and the saved formats in records/stats_output.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/compare_runs.hpp"
#include "core/types.hpp"
#include "records/stats_output.hpp"
#include "render/text_table.hpp"

namespace attnviz {

/// ".json" or ".csv" (lower case) from the --stats file name. Throws UsageError for any other.
std::string stats_format(const std::string& path);

/// Each run's chosen heads (in `heads` order, runs interleaved) measured over the query rows
/// that are real and have a key in `allowed` [n_q, n_k] in every run, each with its own mask;
/// and their Jensen–Shannon divergences. Throws InputError when no such row is left.
StatsReport collect_stats(const std::vector<CompareRun>& runs, const std::vector<int>& heads, const MaskMatrix& allowed);

/// The statistics table and the divergence matrix as text, 3 decimals, for the terminal.
void print_stats(const StatsReport& report, std::ostream& out);

/// The statistics table as drawn in the figure: the same numbers as printed.
TextTable stats_table(const StatsReport& report);

}  // namespace attnviz
