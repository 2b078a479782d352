#include "records/stats_output.hpp"

#include <nlohmann/json.hpp>

#include "records/head_stat_fields.hpp"

namespace attnviz {

using nlohmann::json;

namespace {

json optional_number(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }

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
    json head = {{"head", report.head_names[h]}, {"argmax_keys", argmax}};
    for (const HeadStatField& field : head_stat_fields()) head[field.name] = optional_number(field.value(s));
    heads.push_back(head);  // keys sorted (nlohmann::json), whatever the order they are set in
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
  std::string csv = "head";
  for (const HeadStatField& field : head_stat_fields()) csv += std::string(",") + field.name;
  for (const std::string& name : report.head_names) csv += "," + csv_field("js_" + name);
  csv += "\n";
  for (std::size_t h = 0; h < report.stats.size(); ++h) {
    const HeadStats& s = report.stats[h];
    csv += csv_field(report.head_names[h]);
    for (const HeadStatField& field : head_stat_fields()) csv += "," + csv_statistic(field.value(s));
    for (Eigen::Index b = 0; b < report.divergence.cols(); ++b) {
      csv += "," + csv_statistic(report.divergence(static_cast<Eigen::Index>(h), b));
    }
    csv += "\n";
  }
  return csv;
}

}  // namespace attnviz
