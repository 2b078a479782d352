#include "attention/rollout.hpp"

#include <algorithm>
#include <cassert>

namespace attnviz {

Eigen::MatrixXd residual_attention(const Matrix& head_mean, const MaskMatrix& allowed, double residual) {
  assert(head_mean.rows() == head_mean.cols() && residual >= 0 && residual <= 1);
  const Eigen::Index n = head_mean.rows();
  Eigen::MatrixXd mixed = (1 - residual) * head_mean.cast<double>();                   // [n, n]
  for (Eigen::Index i = 0; i < n; ++i) {
    if (allowed.size() == 0 || allowed(i, i) != 0) mixed(i, i) += residual;           // + α·I on allowed cells
  }
  const Eigen::VectorXd row_sum = mixed.rowwise().sum();                               // [n]
  for (Eigen::Index i = 0; i < n; ++i) {
    if (row_sum(i) > 0) mixed.row(i) /= row_sum(i);  // a row with nothing to attend to stays 0
  }
  return mixed;
}

namespace {

bool is_lower_triangular(const Eigen::MatrixXd& m) {
  for (Eigen::Index j = 1; j < m.cols(); ++j) {
    if (!m.col(j).head(std::min(j, m.rows())).isZero(0)) return false;
  }
  return true;
}

}  // namespace

Rollout::Rollout(double residual) : residual_(residual) { assert(residual >= 0 && residual <= 1); }

void Rollout::add_layer(const Matrix& head_mean, const MaskMatrix& allowed) {
  const Eigen::MatrixXd a_hat = residual_attention(head_mean, allowed, residual_);     // Â_l: [n, n]
  if (layers_ == 0) {
    rollout_ = a_hat;                                                                  // R_0 = Â_0
  } else if (is_lower_triangular(a_hat)) {
    // Causal models: Â_l is lower triangular, and a triangular product does half the
    // multiplications of a dense one (n³ of them for 2048 tokens: seconds a layer).
    rollout_ = (a_hat.triangularView<Eigen::Lower>() * rollout_).eval();                // R_l = Â_l · R_(l−1)
  } else {
    assert(a_hat.rows() == rollout_.rows());
    rollout_ = (a_hat * rollout_).eval();                                              // R_l = Â_l · R_(l−1)
  }
  ++layers_;
}

}  // namespace attnviz
