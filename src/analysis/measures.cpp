#include "analysis/measures.hpp"

#include <cassert>

#include "analysis/value_norms.hpp"
#include "attention/value_vectors.hpp"
#include "core/error.hpp"

namespace attnviz {

bool measure_needs_value_vectors(const std::string& measure) { return measure == "norms" || measure == "alti"; }

bool measure_needs_head_products(const std::string& measure, bool dump) {
  return measure == "alti" || (measure == "norms" && dump);
}

bool add_head_norms(const AttentionLayer& layer, const Matrix& x_kv, AttentionRecord& record) {
  Matrix v = x_kv * layer.w_v;  // [n_k, h_kv·d_v]
  if (layer.b_v.size() != 0) v.rowwise() += layer.b_v.transpose();
  if (!v.allFinite()) return false;
  Matrix value_norms = head_value_norms(layer, v);
  if (!value_norms.allFinite()) return false;
  NormMeasures m = head_weighted_norms(record.weights, std::move(value_norms));
  record.norms = std::move(m.norms);
  record.value_norms = std::move(m.value_norms);
  return true;
}

void add_measure(const std::string& measure, const std::vector<Matrix>& value_vectors, const AltiInputs& inputs,
                 AttentionRecord& record, bool layer_norms) {
  if (measure == "norms") {
    NormMeasures m = value_weighted_norms(record.weights, value_vectors, layer_norms);
    record.norms = std::move(m.norms);
    record.value_norms = std::move(m.value_norms);
    record.layer_norms = std::move(m.layer_norms);
  } else if (measure == "alti") {
    assert(inputs.residual != nullptr);
    record.alti = alti_contributions(record.weights, value_vectors, *inputs.residual, inputs.b_o, inputs.post_norm);
  }
}

std::vector<Matrix> measure_distributions(const std::string& measure, const AttentionRecord& record) {
  if (measure != "norms" || record.norms.empty()) return record.weights;
  std::vector<Matrix> rows;
  for (const Matrix& n : record.norms) rows.push_back(normalise_rows(n));
  return rows;
}

std::string measure_title_note(const std::string& measure) {
  if (measure == "norms") return " \u00B7 norms \u2016\u03B1\u00B7f(x)\u2016, each row normalised to sum 1";
  if (measure == "alti") return " \u00B7 ALTI contributions (Ferrando et al. 2022)";
  return "";
}

void compare_measure(const std::string& measure, AttentionRecord& record, std::vector<std::string>& names) {
  if (measure == "weights") return;
  const bool held = measure == "norms" ? !record.norms.empty() : record.alti.size() != 0;
  if (!held)
    throw InputError::missing_field(record.inputs.empty() ? std::string("the attention") : record.inputs.front(), "/" + measure,
                                    "--measure " + measure + " compares it (write it with attnviz dump --measure " + measure + ")");
  if (measure == "norms") {
    record.weights = measure_distributions("norms", record);
    return;
  }
  record.weights = {record.alti};
  record.num_heads = 1;
  names = {"ALTI"};
}

}  // namespace attnviz
