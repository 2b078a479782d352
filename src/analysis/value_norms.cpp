#include "analysis/value_norms.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cassert>
#include <cmath>

namespace attnviz {

namespace {

// 16 float32 weights: one 64-byte cache line.
constexpr long kKeyBlock = 16;

}  // namespace

NormMeasures head_weighted_norms(const std::vector<Matrix>& weights, Matrix value_norms) {
  assert(!weights.empty() && value_norms.rows() == static_cast<long>(weights.size()));
  NormMeasures m;
  m.value_norms = std::move(value_norms);  // [h, n_k]
  // α ≥ 0, so ‖α f‖ = α ‖f‖: one scaling of each column.
  for (std::size_t h = 0; h < weights.size(); ++h) {
    assert(weights[h].cols() == m.value_norms.cols());
    m.norms.push_back(weights[h] * m.value_norms.row(static_cast<long>(h)).asDiagonal());
  }
  return m;
}

NormMeasures value_weighted_norms(const std::vector<Matrix>& weights, const std::vector<Matrix>& value_vectors,
                                  bool with_layer_norms) {
  assert(weights.size() == value_vectors.size() && !weights.empty());
  const long heads = static_cast<long>(weights.size());
  const long n_q = weights.front().rows();
  const long n_k = weights.front().cols();
  if (!with_layer_norms) {
    Matrix value_norms(heads, n_k);  // [h, n_k]
    for (long h = 0; h < heads; ++h)
      value_norms.row(h) = value_vectors[h].cast<double>().rowwise().norm().cast<Scalar>().transpose();
    return head_weighted_norms(weights, std::move(value_norms));
  }
  const long d_out = value_vectors.front().cols();
  // G_j [h, h] per key, in float64: the norm of a sum of nearly cancelling heads stays accurate.
  // Its diagonal is ‖f^h(x_j)‖².
  std::vector<Eigen::MatrixXd> gram(static_cast<std::size_t>(n_k), Eigen::MatrixXd(heads, heads));
  Matrix value_norms(heads, n_k);  // [h, n_k]
  for (long j = 0; j < n_k; ++j) {
    Eigen::MatrixXd f_j(heads, d_out);  // row h = f^h(x_j)
    for (long h = 0; h < heads; ++h) f_j.row(h) = value_vectors[h].row(j).cast<double>();
    gram[j].noalias() = f_j * f_j.transpose();
    value_norms.col(j) = gram[j].diagonal().cwiseMax(0.0).cwiseSqrt().cast<Scalar>();
  }
  NormMeasures m = head_weighted_norms(weights, std::move(value_norms));
  // Per key j, all queries at once: with a_j [n_q, h] the weights of key j in every head,
  // ‖·‖²_i = Σ_h (a_j G_j)_ih · (a_j)_ih: one [n_q, h] × [h, h] product instead of n_q small ones
  // (the per-pair form cost 1.5× the whole forward pass of stories260K, whose h equals d_k).
  // Keys go kKeyBlock at a time so that each row of the (row-major) weights is read one cache
  // line at a time rather than one float per line.
  m.layer_norms.resize(n_q, n_k);
  // Rows before a key's first non-zero weight (all of them above the diagonal under a causal
  // mask) are 0 and skipped: half the work of a decoder.
  std::vector<Eigen::MatrixXd> a(kKeyBlock, Eigen::MatrixXd(n_q, heads));  // a[jj] = a_(j0 + jj)
  std::vector<long> first(kKeyBlock);
  for (long j0 = 0; j0 < n_k; j0 += kKeyBlock) {
    const long width = std::min(kKeyBlock, n_k - j0);
    std::fill(first.begin(), first.end(), n_q);
    for (long h = 0; h < heads; ++h)
      for (long i = 0; i < n_q; ++i)
        for (long jj = 0; jj < width; ++jj) {
          const Scalar w = weights[h](i, j0 + jj);
          a[jj](i, h) = w;
          if (w != 0 && i < first[jj]) first[jj] = i;
        }
    for (long jj = 0; jj < width; ++jj) {
      const long rows = n_q - first[jj];
      m.layer_norms.col(j0 + jj).head(first[jj]).setZero();
      if (rows == 0) continue;
      const Eigen::Ref<const Eigen::MatrixXd> live = a[jj].bottomRows(rows);
      const Eigen::VectorXd squared = (live * gram[j0 + jj]).cwiseProduct(live).rowwise().sum();
      m.layer_norms.col(j0 + jj).tail(rows) = squared.cwiseMax(0.0).cwiseSqrt().cast<Scalar>();
    }
  }
  return m;
}

Matrix normalise_rows(const Matrix& m) {
  Matrix out = m;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const double sum = m.row(i).cast<double>().sum();
    if (sum > 0) out.row(i) = (m.row(i).cast<double>() / sum).cast<Scalar>();
  }
  return out;
}

}  // namespace attnviz
