#include "records/head_stat_fields.hpp"

#include <cstdio>

namespace attnviz {

const std::array<HeadStatField, 9>& head_stat_fields() {
  static const std::array<HeadStatField, 9> fields{{
      {"entropy_mean", [](const HeadStats& s) -> std::optional<double> { return s.entropy_mean; }},
      {"entropy_min", [](const HeadStats& s) -> std::optional<double> { return s.entropy_min; }},
      {"entropy_max", [](const HeadStats& s) -> std::optional<double> { return s.entropy_max; }},
      {"entropy_normalised_mean", [](const HeadStats& s) { return s.entropy_normalised_mean; }},
      {"max_weight_mean", [](const HeadStats& s) -> std::optional<double> { return s.max_weight_mean; }},
      {"mean_distance", [](const HeadStats& s) { return s.mean_distance; }},
      {"diagonal_mass", [](const HeadStats& s) { return s.diagonal_mass; }},
      {"previous_token_mass", [](const HeadStats& s) { return s.previous_mass; }},
      {"first_token_mass", [](const HeadStats& s) { return s.first_token_mass; }},
  }};
  return fields;
}

std::string csv_statistic(const std::optional<double>& x) {
  if (!x) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", *x);
  return text;
}

}  // namespace attnviz
