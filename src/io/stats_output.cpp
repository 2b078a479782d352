#include "io/stats_output.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace attnviz {

using nlohmann::json;

namespace {

json optional_number(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

std::string csv_number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

std::string csv_optional(const std::optional<double>& x) { return x ? csv_number(*x) : ""; }

// A CSV field: quoted, with quotes doubled (RFC 4180).
std::string csv_field(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string stats_to_json(const StatsReport& report) {
  json heads = json::array();
  for (std::size_t h = 0; h < report.stats.size(); ++h) {
    const HeadStats& s = report.stats[h];
    json argmax = json::array();
    for (std::size_t i = 0; i < s.argmax_keys.size(); ++i) {
      const long key = s.argmax_keys[i];
      argmax.push_back({{"query", i}, {"query_token", report.query_tokens[i]},
                        {"key", key < 0 ? json(nullptr) : json(key)},
                        {"key_token", key < 0 ? json(nullptr) : json(report.key_tokens[key])}});
    }
    heads.push_back({{"head", report.head_names[h]},
                     {"entropy_mean", s.entropy_mean},
                     {"entropy_min", s.entropy_min},
                     {"entropy_max", s.entropy_max},
                     {"entropy_normalised_mean", s.entropy_normalised_mean},
                     {"max_weight_mean", s.max_weight_mean},
                     {"mean_distance", optional_number(s.mean_distance)},
                     {"diagonal_mass", optional_number(s.diagonal_mass)},
                     {"previous_token_mass", optional_number(s.previous_mass)},
                     {"first_token_mass", optional_number(s.first_token_mass)},
                     {"argmax_keys", argmax}});
  }
  json matrix = json::array();
  for (Eigen::Index a = 0; a < report.divergence.rows(); ++a) {
    json row = json::array();
    for (Eigen::Index b = 0; b < report.divergence.cols(); ++b) row.push_back(report.divergence(a, b));
    matrix.push_back(row);
  }
  const json document = {
      {"units", {{"entropy", "nats"}, {"js_divergence", "nats"}, {"mean_distance", "tokens"}}},
      {"heads", heads},
      {"js_divergence", {{"heads", report.head_names}, {"matrix", matrix}}}};
  return document.dump(2) + "\n";
}

std::string stats_to_csv(const StatsReport& report) {
  std::string csv =
      "head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,mean_distance,"
      "diagonal_mass,previous_token_mass,first_token_mass";
  for (const std::string& name : report.head_names) csv += "," + csv_field("js_" + name);
  csv += "\n";
  for (std::size_t h = 0; h < report.stats.size(); ++h) {
    const HeadStats& s = report.stats[h];
    csv += csv_field(report.head_names[h]) + "," + csv_number(s.entropy_mean) + "," + csv_number(s.entropy_min) + "," +
           csv_number(s.entropy_max) + "," + csv_number(s.entropy_normalised_mean) + "," +
           csv_number(s.max_weight_mean) + "," + csv_optional(s.mean_distance) + "," + csv_optional(s.diagonal_mass) +
           "," + csv_optional(s.previous_mass) + "," + csv_optional(s.first_token_mass);
    for (Eigen::Index b = 0; b < report.divergence.cols(); ++b) {
      csv += "," + csv_number(report.divergence(static_cast<Eigen::Index>(h), b));
    }
    csv += "\n";
  }
  return csv;
}

}  // namespace attnviz
