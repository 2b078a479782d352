// The runs `compare` puts side by side: one computed run, or one or two attention JSON files
// (A and B, which must have the same tokens), and the heads chosen from them. Does not draw
// or measure them (compare_figure and compare_stats do).
#pragma once

#include <string>
#include <vector>

#include "attention/attention_record.hpp"
#include "attention/compare_run.hpp"
#include "cli/options.hpp"
#include "cli/profile.hpp"

namespace attnviz {

/// The runs of `compare SENTENCE [WEIGHTS]`: one run computed from the inputs, or the one or
/// two attention JSON files given. Each input is read once (within `budget` bytes); laps
/// "load". Throws UsageError for computing options given with attention JSON files, and
/// InputError when the second file is not attention JSON.
std::vector<CompareRun> load_compare_runs(const Options& options, std::vector<std::string>& warnings, double budget,
                                          PhaseTimer& timer);

/// Two runs: throws InputError naming both files when their query or key tokens differ.
void require_same_tokens(const std::vector<CompareRun>& runs);

/// options.heads (numbers), or options.layer_heads (L<l>H<h>, accepted when l is the layer of
/// every run), or every head every run has when neither is given. Throws UsageError for a head
/// some run lacks, a layer that is not the runs' own (or a run that records none) and a block
/// name (enc./dec./cross., which only compare --model has): a selection is never widened.
/// Throws InputError, naming both files and counts, for two runs with different head counts
/// when no head is named (comparing only the shared heads would drop the others silently).
std::vector<int> chosen_heads(const Options& options, const std::vector<CompareRun>& runs);

}  // namespace attnviz
