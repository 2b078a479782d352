#include "records/explain_json.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace attnviz {

namespace {

using json = nlohmann::ordered_json;

json vector_json(const Vector& v) {
  json out = json::array();
  for (Eigen::Index i = 0; i < v.size(); ++i) out.push_back(v(i));
  return out;
}

json matrix_json(const Matrix& m) {
  json out = json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) out.push_back(vector_json(m.row(r).transpose()));
  return out;
}

// Masked keys have no score: null, as a dump writes a masked pair's score.
json scores_json(const Vector& scores, const std::vector<std::uint8_t>& masked) {
  json out = json::array();
  for (Eigen::Index j = 0; j < scores.size(); ++j) {
    if (masked[static_cast<std::size_t>(j)]) out.push_back(nullptr);
    else out.push_back(scores(j));
  }
  return out;
}

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json eigenvalues_json(const std::optional<std::vector<std::complex<double>>>& values) {
  if (!values) return nullptr;
  json out = json::array();
  for (const std::complex<double>& l : *values) out.push_back(json::array({l.real(), l.imag()}));
  return out;
}

json directions_json(const std::optional<std::vector<QkDirectionTokens>>& directions) {
  if (!directions) return nullptr;
  json out = json::array();
  for (const QkDirectionTokens& d : *directions) {
    out.push_back({{"singular_value", d.singular_value},
                   {"query_top", d.query_top},
                   {"query_bottom", d.query_bottom},
                   {"key_top", d.key_top},
                   {"key_bottom", d.key_bottom}});
  }
  return out;
}

}  // namespace

std::string explanation_to_json(const Explanation& e) {
  const NeuronView& v = e.view;
  json masked = json::array();
  for (const std::uint8_t m : v.masked) masked.push_back(m != 0);
  const json doc = {
      {"format", kExplainFormatName},
      {"version", kExplainFormatVersion},
      {"query_tokens", e.query_tokens},
      {"key_tokens", e.key_tokens},
      {"query", v.query},
      {"scale", v.scale},
      {"q", vector_json(v.q)},
      {"k", matrix_json(v.k)},
      {"products", matrix_json(v.products)},
      {"scores_raw", vector_json(v.scores_raw)},
      {"scores", scores_json(v.scores, v.masked)},
      {"weights", vector_json(v.weights)},
      {"masked", masked},
      {"v", matrix_json(v.v)},
      {"weighted_values", matrix_json(v.weighted_values)},
      {"output", vector_json(v.output)},
      {"circuits",
       {{"qk_singular_values", e.circuits.qk_singular_values},
        {"ov_singular_values", optional_json(e.circuits.ov_singular_values)},
        {"ov_eigenvalues", eigenvalues_json(e.circuits.ov_eigenvalues)},
        {"copying_score", optional_json(e.circuits.copying_score)},
        {"folded", e.folded}}},
      {"qk_top_tokens", directions_json(e.qk_top_tokens)},
  };
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace attnviz
