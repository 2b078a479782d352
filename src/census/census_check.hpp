// What a valid census.json is (issue 22): `census --merge` reads files a person or a script may
// have edited, so every member is checked before a number is combined. Checks one file on its
// own; whether several files belong together is census_merge_check's.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "census/census_statistic_domain.hpp"

namespace attnviz {

/// Checks `root`, the parsed census.json at `path`, member by member. A valid census.json has
/// format kCensusFormat and version kCensusVersion (checked first), exactly the members CorpusCensus::to_json writes, at every level (an unknown one is named:
/// "unknown member /heads/3/foo"), of the right types, and:
///  - model: layers, heads ≥ 1; settings: layers a --layers selection within the model's
///    layers, sink_epsilon in [0, 1];
///  - settings as a run records them (census_settings): layers canonical_layers's form, truncate
///    true; corpus: texts = settings.limit when one is set (≥ 0: it left texts out);
///    skipped_lines above 0 exactly when settings.skip_bad_lines;
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
///    texts, mean and m2 give (null below 2 texts), to 1e-9 relative;
///  - across one self-attention head: previous_token_score's mean ≤ previous_token_mass's;
///    first_token_mass's mean between k·ε/n (k·ε/(n·L) for a decoder-only model's sliding
///    window) and (k + (n − k)·ε)/n for k sink texts of n, its m2 at most what k values in
///    [ε (or ε/L), 1] and n − k in [0, ε] allow (Bhatia and Davis on each group);
///  - across heads of one kind of block: each statistic's texts the same (where it is defined is
///    the text's);
///  - from covers.tokens T over n texts (no text longer than L = T − n + 1): entropy_mean ≤ ln L,
///    max_weight_mean ≥ 1/L, entropy_normalised_mean's texts ≤ T − n, induction_score's ≤
///    (T − n)/2, mean_distance ≤ (T − n)/(2n) for a decoder's (causal) self-attention and
///    (T − n)/n for an encoder's.
/// Throws InputError naming `path`, the JSON pointer, what was expected and the value found,
/// for the first fault met.
/// A JSON value as the census checks' messages show it: its text, cut to 60 characters (a whole
/// object given where a number belongs).
std::string census_value_text(const nlohmann::ordered_json& value);

/// A statistic range's bound as messages show it: "0", "1", "inf".
std::string range_bound_text(double x);

void check_census_json(const nlohmann::ordered_json& root, const std::string& path);

}  // namespace attnviz
