#include "io/attention_record.hpp"

#include "attention/mask.hpp"

namespace attnviz {

MaskMatrix AttentionRecord::allowed() const {
  return build_mask(static_cast<long>(query_tokens.size()), static_cast<long>(key_tokens.size()), causal,
                    key_mask);
}

double AttentionRecord::value_count() const {
  double values = static_cast<double>(output.size() + value_norms.size() + layer_norms.size() + alti.size());
  for (const std::vector<Matrix>* stack : {&weights, &scores, &head_outputs, &norms}) {
    for (const Matrix& m : *stack) values += static_cast<double>(m.size());
  }
  return values;
}

double AttentionRecord::memory_bytes() const {
  const double mask = static_cast<double>(query_tokens.size()) * static_cast<double>(key_tokens.size());
  return value_count() * sizeof(Scalar) + mask;
}

std::string AttentionRecord::head_name(int head) const {
  const std::string h = "H" + std::to_string(head);
  return layer ? "L" + std::to_string(*layer) + h : h;
}

}  // namespace attnviz
