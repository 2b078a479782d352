// The per-head statistics as saved: one list of field names and values, in order, that the
// --stats files (stats_output) and the census files (census_output) both write, so the two
// name, order and print them alike: names, values and their CSV text (each file builds its JSON).
#pragma once

#include <array>
#include <optional>
#include <string>

#include "attention/head_stats.hpp"

namespace attnviz {

/// One saved statistic: its JSON key and CSV column name, and its value in a HeadStats
/// (nullopt where it does not apply or is undefined: the positional statistics of
/// cross-attention, H/ln k when no row sees two keys, previous-token mass with one token).
struct HeadStatField {
  const char* name;
  std::optional<double> (*value)(const HeadStats& stats);
};

/// entropy_mean, entropy_min, entropy_max, entropy_normalised_mean, max_weight_mean,
/// mean_distance, diagonal_mass, previous_token_mass, first_token_mass (argmax_keys is not a
/// number per head and is not listed).
const std::array<HeadStatField, 9>& head_stat_fields();

/// A statistic as a CSV field: printf's %.6g, or empty where it does not apply or is undefined.
std::string csv_statistic(const std::optional<double>& x);

}  // namespace attnviz
