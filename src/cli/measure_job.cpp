#include "cli/measure_job.hpp"

#include <cassert>

#include "analysis/value_norms.hpp"

namespace attnviz {

bool measure_needs_value_vectors(const std::string& measure) { return measure == "norms" || measure == "alti"; }

void add_measure(const std::string& measure, const std::vector<Matrix>& value_vectors, const AltiInputs& inputs,
                 AttentionRecord& record) {
  if (measure == "norms") {
    NormMeasures m = value_weighted_norms(record.weights, value_vectors);
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

}  // namespace attnviz
