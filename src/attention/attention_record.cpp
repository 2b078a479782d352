#include "attention/attention_record.hpp"

#include "attention/mask.hpp"

namespace attnviz {

MaskMatrix AttentionRecord::allowed() const {
  MaskMatrix mask = build_mask(static_cast<long>(query_tokens.size()), static_cast<long>(key_tokens.size()), causal, key_mask);
  const MaskMatrix outside = outside_window();
  if (outside.size() != 0) mask = mask.cwiseProduct((1 - outside.array()).matrix());
  return mask;
}

MaskMatrix AttentionRecord::outside_window() const {
  if (sliding_window <= 0) return MaskMatrix();
  const auto n_q = static_cast<Eigen::Index>(query_tokens.size()), n_k = static_cast<Eigen::Index>(key_tokens.size());
  MaskMatrix outside = build_mask(n_q, n_k, causal, key_mask);
  for (Eigen::Index i = 0; i < n_q; ++i)
    for (Eigen::Index j = 0; j < n_k; ++j)
      if (i - j < sliding_window) outside(i, j) = 0;
  return outside;
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
