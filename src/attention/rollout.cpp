#include "attention/rollout.hpp"

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

Rollout::Rollout(double residual) : residual_(residual) { assert(residual >= 0 && residual <= 1); }

void Rollout::add_layer(const Matrix& head_mean, const MaskMatrix& allowed) {
  const Eigen::MatrixXd a_hat = residual_attention(head_mean, allowed, residual_);     // Â_l: [n, n]
  if (layers_ == 0) {
    rollout_ = a_hat;                                                                  // R_0 = Â_0
  } else {
    assert(a_hat.rows() == rollout_.rows());
    rollout_ = (a_hat * rollout_).eval();                                              // R_l = Â_l · R_(l−1)
  }
  ++layers_;
}

}  // namespace attnviz
