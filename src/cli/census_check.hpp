// What a valid census.json is (issue 22): `census --merge` reads files a person or a script may
// have edited, so every member is checked before a number is combined. Checks one file on its
// own; whether several files belong together is census_merge_check's.
#pragma once

#include <nlohmann/json_fwd.hpp>
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
/// diagonal_mass and first_token_mass for self-attention too.
bool statistic_always_defined(const std::string& statistic, const std::string& kind);

/// Slack a mean may be outside its statistic's range by: sums of float32 weights round.
inline constexpr double kStatisticRangeSlack = 1e-9;

/// Checks `root`, the parsed census.json at `path`, member by member. A valid census.json has
/// format kCensusFormat and version kCensusVersion (checked first), exactly the members CorpusCensus::to_json writes, at every level (an unknown one is named:
/// "unknown member /heads/3/foo"), of the right types, and:
///  - model: layers, heads ≥ 1; settings: layers a --layers selection within the model's
///    layers, sink_epsilon in [0, 1];
///  - corpus: texts ≤ settings.limit when one is set (≥ 0); skipped_lines 0 unless
///    settings.skip_bad_lines;
///  - covers: ranges sorted, disjoint, 0 ≤ first ≤ last < corpus_texts = corpus.texts, and
///    texts ≥ 1 the number of indices in them; texts ≤ tokens (a text has a token) ≤ texts ×
///    settings.max_tokens when that is > 0;
///  - statistics: corpus_statistic_names(), in order;
///  - heads: each layer × head the model and settings.layers select, once (an encoder-decoder's
///    for the encoder's self-attention and the decoder's self- and cross-attention, the decoder's
///    layers the selected ones from 0), no other; each with every statistic (a cross-attention
///    head's defined on no text past the first three);
///  - a statistic: texts an integer in [0, covers.texts], equal to covers.texts where
///    statistic_always_defined; with 0 texts mean null and m2 0; else mean finite and within
///    statistic_range_for (± kStatisticRangeSlack), m2 finite, not negative (nor -0.0), 0 with
///    one text, and at most n·(mean − low)·(high − mean) for n texts of values in [low, high]
///    (Bhatia and Davis 2000; ≤ n·(high − low)²/4, Popoviciu); sink_rate's mean k/n for an
///    integer k (to 1e-9) and m2 k(n − k)/n, as n 0/1 values give; std, ci95_low, ci95_high what
///    texts, mean and m2 give (null below 2 texts), to 1e-9 relative.
/// Throws InputError naming `path`, the JSON pointer, what was expected and the value found,
/// for the first fault met.
void check_census_json(const nlohmann::ordered_json& root, const std::string& path);

}  // namespace attnviz
