// The runs `compare` puts side by side: one computed run, or one or two attention JSON files
// (A and B, which must have the same tokens), and the heads chosen from them. Does not draw
// or measure them (compare_figure and compare_stats do).
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "cli/profile.hpp"
#include "attention/attention_record.hpp"

namespace attnviz {

/// One run to compare, labelled "" for a single run and "A", "B" for two.
struct CompareRun {
  std::string label;
  AttentionRecord record;
  std::vector<std::string> names;  ///< per head, when not record.head_name (heads of several layers)
};

/// The head's name: names[head] when given, else record.head_name(head).
std::string head_name(const CompareRun& run, int head);

/// The head's name after the run's label: "A · L0H3", or "L0H3" for a single run.
std::string head_label(const CompareRun& run, int head);

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
