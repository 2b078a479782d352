// compare's statistics: every chosen head of every run measured over the same real query rows,
// printed as a text table, and saved with --stats FILE.json/.csv (drawn as the figure's table by
// render/compare_figure).
// The statistics are defined in attention/head_stats and the saved formats in records/stats_output.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "attention/compare_run.hpp"
#include "core/types.hpp"
#include "records/stats_output.hpp"

namespace attnviz {

/// ".json" or ".csv" (lower case) from the --stats file name. Throws UsageError for any other.
std::string stats_format(const std::string& path);

/// Each run's chosen heads (in `heads` order, runs interleaved) measured over the query rows
/// that are real and have a key in `allowed` [n_q, n_k] in every run, each with its own mask;
/// and their Jensen–Shannon divergences. Throws InputError when no such row is left.
StatsReport collect_stats(const std::vector<CompareRun>& runs, const std::vector<int>& heads, const MaskMatrix& allowed);

/// The statistics table and the divergence matrix as text, 3 decimals, for the terminal.
void print_stats(const StatsReport& report, std::ostream& out);

/// A statistic as the table prints it: 3 decimals ("0.125").
std::string stat_text(double x);

/// stat_text(*x), or "-" when the statistic is undefined.
std::string stat_text(const std::optional<double>& x);

}  // namespace attnviz
