#include "analysis/value_norms.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cassert>
#include <cmath>

namespace attnviz {

NormMeasures value_weighted_norms(const std::vector<Matrix>& weights, const std::vector<Matrix>& value_vectors) {
  assert(weights.size() == value_vectors.size() && !weights.empty());
  const long heads = static_cast<long>(weights.size());
  const long n_q = weights.front().rows();
  const long n_k = weights.front().cols();
  NormMeasures m;
  m.value_norms.resize(heads, n_k);  // [h, n_k]
  for (long h = 0; h < heads; ++h) {
    assert(value_vectors[h].rows() == n_k);
    m.value_norms.row(h) = value_vectors[h].cast<double>().rowwise().norm().cast<Scalar>().transpose();
  }
  // α ≥ 0, so ‖α f‖ = α ‖f‖: one scaling of each column.
  for (long h = 0; h < heads; ++h) m.norms.push_back(weights[h] * m.value_norms.row(h).asDiagonal());
  // G_j [h, h] per key, in float64: the norm of a sum of nearly cancelling heads stays accurate.
  std::vector<Eigen::MatrixXd> gram(static_cast<std::size_t>(n_k), Eigen::MatrixXd(heads, heads));
  const long d_out = value_vectors.front().cols();
  for (long j = 0; j < n_k; ++j) {
    Eigen::MatrixXd f_j(heads, d_out);  // row h = f^h(x_j)
    for (long h = 0; h < heads; ++h) f_j.row(h) = value_vectors[h].row(j).cast<double>();
    gram[j].noalias() = f_j * f_j.transpose();
  }
  m.layer_norms.resize(n_q, n_k);
  Eigen::VectorXd a(heads);
  for (long i = 0; i < n_q; ++i) {
    for (long j = 0; j < n_k; ++j) {
      for (long h = 0; h < heads; ++h) a(h) = weights[h](i, j);
      m.layer_norms(i, j) = static_cast<Scalar>(std::sqrt(std::max(0.0, a.dot(gram[j] * a))));
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
