#include "census/census_statistic_domain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "census/corpus_census.hpp"

namespace attnviz {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

const StatisticRange& statistic_range(const std::string& statistic) {
  static const StatisticRange kMass{0, 1, "a mass of attention weights, each row summing to 1"};
  static const std::map<std::string, StatisticRange> ranges = {
      {"entropy_mean", {0, kInf, "an entropy in nats"}},
      {"entropy_normalised_mean", {0, 1, "an entropy over its maximum ln k"}},
      {"max_weight_mean", kMass},
      {"mean_distance", {0, kInf, "a distance in tokens"}},
      {"diagonal_mass", kMass},
      {"previous_token_mass", kMass},
      {"first_token_mass", kMass},
      {"induction_score", kMass},
      {"sink_rate", {0, 1, "a rate of 0/1 indicators"}},
      {"previous_token_score", {0, 1, "a share of attention weights"}},
      {"duplicate_token_score", {0, 1, "a share of attention weights"}},
      {"induction_score_tl", {0, 1, "a share of attention weights"}}};
  return ranges.at(statistic);
}

StatisticRange statistic_range_for(const std::string& statistic, long long max_tokens) {
  StatisticRange range = statistic_range(statistic);
  if (max_tokens <= 0) return range;
  const double n = static_cast<double>(max_tokens);
  if (statistic == "entropy_mean") range = {0, std::log(n), "an entropy in nats, at most ln k for k <= /settings/max_tokens keys"};
  if (statistic == "mean_distance") range = {0, n - 1, "a distance in tokens, at most /settings/max_tokens - 1"};
  if (statistic == "max_weight_mean") range = {1 / n, 1, "the largest of k <= /settings/max_tokens weights summing to 1"};
  return range;
}

double statistic_range_slack(const std::string& statistic, long long max_tokens) {
  const bool narrowed = max_tokens > 0 && (statistic == "entropy_mean" || statistic == "mean_distance" || statistic == "max_weight_mean");
  return kStatisticRangeSlack + (narrowed ? kTokenBoundSlack * statistic_range_for(statistic, max_tokens).high : 0.0);
}

bool statistic_applies(const std::string& statistic, const std::string& kind) {
  const std::vector<std::string>& names = corpus_statistic_names();
  return kind != "cross" || std::find(names.begin(), names.begin() + 3, statistic) != names.begin() + 3;
}

bool statistic_always_defined(const std::string& statistic, const std::string& kind) {
  if (statistic == "entropy_mean" || statistic == "max_weight_mean") return true;
  // sink_rate: self-attention's row 0 always sees key 0 (causal or not), so α_1 always exists.
  const bool positional = statistic == "mean_distance" || statistic == "diagonal_mass" || statistic == "first_token_mass" ||
                          statistic == "sink_rate";
  return positional && kind != "cross";
}

}  // namespace attnviz
