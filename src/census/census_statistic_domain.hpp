// What one census statistic's values can be (issue 22): the range of a per-text value, narrowed
// by a run's max_tokens, on which heads it exists and where it is always defined. Shared by the
// checks of census.json (census_check) and of the journal (census_journal_check); checks nothing.
#pragma once

#include <string>

namespace attnviz {

/// The range a census statistic's per-text value (and so its mean) lies in, where it is certain:
/// [low, high], high = +inf where unbounded above. `what` says why, for messages.
struct StatisticRange {
  double low = 0, high = 0;
  const char* what = "";
};

/// The range of `statistic` (one of corpus_statistic_names()). Throws std::out_of_range for
/// another name.
const StatisticRange& statistic_range(const std::string& statistic);

/// Slack a mean may be outside its statistic's range by: sums of float32 weights round.
inline constexpr double kStatisticRangeSlack = 1e-9;

/// statistic_range narrowed by a run's settings.max_tokens (> 0; 0: no bound), since a text has
/// n ≤ max_tokens tokens and a row sees k ≤ n keys: entropy ≤ ln max_tokens, mean distance ≤
/// max_tokens − 1, max weight ≥ 1 / max_tokens (each row's largest of k weights summing to 1).
StatisticRange statistic_range_for(const std::string& statistic, long long max_tokens);

/// Slack a value may pass a bound statistic_range_for derives from max_tokens by: float32
/// weights summing to 1 ± 1e-7 shift an entropy or a distance by about that much, relatively.
inline constexpr double kTokenBoundSlack = 1e-6;

/// The slack for statistic_range_for(statistic, max_tokens): kStatisticRangeSlack, plus
/// kTokenBoundSlack × the bound where max_tokens narrowed it.
double statistic_range_slack(const std::string& statistic, long long max_tokens);

/// Whether a head of `kind` ("cross": cross-attention; anything else: self-attention) has
/// `statistic` at all: cross-attention has the first three (docs/corpus.md).
bool statistic_applies(const std::string& statistic, const std::string& kind);

/// Whether `statistic` is defined on every text for a head of `kind` (docs/corpus.md's
/// "never" undefined): entropy_mean and max_weight_mean for every head; mean_distance,
/// diagonal_mass, first_token_mass and sink_rate for self-attention too.
bool statistic_always_defined(const std::string& statistic, const std::string& kind);

}  // namespace attnviz
