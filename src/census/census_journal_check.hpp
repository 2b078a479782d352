// What a valid text line of a census journal is (issue 22): --resume adds the journal's texts to
// the census without running them again, so each line is checked as strictly as --merge checks a
// census.json. census_journal reads the file and its header; this checks one parsed text line.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <optional>
#include <tuple>
#include <vector>

#include "census/corpus_census.hpp"
#include "model/model_run.hpp"

namespace attnviz {

/// Checks the text lines of one journal against the run its header names.
class JournalLineChecker {
 public:
  /// `path` for messages; the heads and bounds come from `provenance` (model layers and heads,
  /// settings.layers, max_tokens and sink_epsilon), which the header was checked to equal.
  /// Throws InputError "FILE: line 1: …" when those members are not a run's.
  JournalLineChecker(const std::string& path, const CensusProvenance& provenance);

  /// The text of `line` (line `line_number` of the file). A valid line has exactly the members
  /// index (an integer), tokens (an integer ≥ 1, ≤ settings.max_tokens when that is > 0) and
  /// heads: [stack, kind, layer, head, values] for each of the run's heads exactly once (a
  /// decoder-only model's selected layers × heads; an encoder-decoder's encoder self-attention
  /// and decoder self- and cross-attention, the decoder as deep as on the first text line),
  /// values one per corpus statistic: a number in statistic_range_for (max_tokens narrowed to
  /// the text's tokens), sink_rate exactly 0 or 1, null only where the statistic may be
  /// undefined (never for statistic_always_defined; always where statistic_applies is false);
  /// for self-attention, the statistics undefined only on a one-token text null together (and,
  /// for a decoder-only model, whose tokens are the text's, exactly when tokens is 1),
  /// induction_score null where they are, and first_token_mass ≤ sink_epsilon where sink_rate is 0
  /// and above it where sink_rate is 1 (a decoder-only model's sliding window: above
  /// sink_epsilon / tokens), previous_token_score ≤ previous_token_mass, mean_distance ≤
  /// (tokens − 1)/2 for a causal decoder's self-attention; each statistic null on every head of
  /// one kind of block or on none (where it is defined is the text's, not the head's).
  /// Throws InputError "FILE: line L: …" naming the member, head and statistic, and the value.
  TextStatistics check(const nlohmann::ordered_json& line, long line_number);

 private:
  using HeadKey = std::tuple<std::string, std::string, int, int>;  // stack, kind, layer, head
  [[noreturn]] void fail(long line_number, const std::string& detail) const;
  void expect_heads(bool blocks, int decoder_layers, long line_number);
  // A self-attention head's values against each other (as census_check's across one head).
  void check_self_attention(const std::vector<std::optional<double>>& row, long tokens, long line_number, const std::string& where,
                            const std::string& stack) const;
  std::string path_;
  long long layers_ = 0, heads_ = 0, max_tokens_ = 0;
  double sink_epsilon_ = 0;
  std::string layers_text_;
  LayerSelection selected_;
  bool heads_known_ = false;
  std::set<HeadKey> expected_;
};

}  // namespace attnviz
