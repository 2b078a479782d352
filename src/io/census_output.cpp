#include "io/census_output.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace attnviz {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json optional_number(const std::optional<double>& x) { return x ? ordered_json(*x) : ordered_json(nullptr); }

std::string csv_number(const std::optional<double>& x) {
  if (!x) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", *x);
  return text;
}

bool any_induction(const std::vector<CensusRow>& rows) {
  for (const CensusRow& row : rows)
    if (row.induction) return true;
  return false;
}

}  // namespace

std::string census_to_csv(const std::vector<CensusRow>& rows) {
  std::string csv =
      "layer,head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,mean_distance,"
      "diagonal_mass,previous_token_mass,first_token_mass,induction_score\n";
  for (const CensusRow& r : rows) {
    const HeadStats& s = r.stats;
    csv += std::to_string(r.layer) + "," + std::to_string(r.head);
    for (const std::optional<double>& x :
         {std::optional<double>(s.entropy_mean), std::optional<double>(s.entropy_min), std::optional<double>(s.entropy_max),
          std::optional<double>(s.entropy_normalised_mean), std::optional<double>(s.max_weight_mean), s.mean_distance,
          s.diagonal_mass, s.previous_mass, s.first_token_mass, r.induction}) {
      csv += "," + csv_number(x);
    }
    csv += "\n";
  }
  return csv;
}

std::string census_to_json(const std::vector<CensusRow>& rows) {
  ordered_json heads = ordered_json::array();
  for (const CensusRow& r : rows) {
    const HeadStats& s = r.stats;
    heads.push_back({{"layer", r.layer},
                     {"head", r.head},
                     {"entropy_mean", s.entropy_mean},
                     {"entropy_min", s.entropy_min},
                     {"entropy_max", s.entropy_max},
                     {"entropy_normalised_mean", s.entropy_normalised_mean},
                     {"max_weight_mean", s.max_weight_mean},
                     {"mean_distance", optional_number(s.mean_distance)},
                     {"diagonal_mass", optional_number(s.diagonal_mass)},
                     {"previous_token_mass", optional_number(s.previous_mass)},
                     {"first_token_mass", optional_number(s.first_token_mass)},
                     {"induction_score", optional_number(r.induction)}});
  }
  ordered_json document = {{"units", {{"entropy", "nats"}, {"mean_distance", "tokens"}, {"masses", "mean weight"}}}};
  if (!any_induction(rows)) document["induction_score"] = "null: the text repeats no token, so there is nothing to measure";
  document["heads"] = heads;
  return document.dump(2) + "\n";
}

}  // namespace attnviz
