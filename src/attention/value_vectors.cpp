#include "attention/value_vectors.hpp"

#include <cassert>

namespace attnviz {

std::vector<Matrix> head_value_vectors(const AttentionLayer& layer, const Eigen::Ref<const Matrix>& v) {
  const long d_v = layer.d_v();
  const int heads_per_kv = layer.num_heads / layer.num_kv_heads;
  const bool has_w_o = layer.w_o.size() != 0;
  assert(v.cols() == layer.num_kv_heads * d_v);
  std::vector<Matrix> f(static_cast<std::size_t>(layer.num_heads));
  for (int h = 0; h < layer.num_heads; ++h) {
    const int g = h / heads_per_kv;  // this query head's key/value head
    Matrix& f_h = f[static_cast<std::size_t>(h)];
    if (has_w_o) {
      f_h.noalias() = v.middleCols(g * d_v, d_v) * layer.w_o.middleRows(h * d_v, d_v);  // [n_k, d_out]
    } else {
      f_h = Matrix::Zero(v.rows(), layer.num_heads * d_v);  // [n_k, h·d_v]: the concat's columns
      f_h.middleCols(h * d_v, d_v) = v.middleCols(g * d_v, d_v);
    }
  }
  return f;
}

Matrix head_value_norms(const AttentionLayer& layer, const Eigen::Ref<const Matrix>& v) {
  const long d_v = layer.d_v();
  const int heads_per_kv = layer.num_heads / layer.num_kv_heads;
  const bool has_w_o = layer.w_o.size() != 0;
  assert(v.cols() == layer.num_kv_heads * d_v);
  Matrix norms(layer.num_heads, v.rows());  // [h, n_k]
  std::vector<Eigen::MatrixXd> values(static_cast<std::size_t>(layer.num_kv_heads));  // float64 v^g [n_k, d_v]
  for (int g = 0; g < layer.num_kv_heads; ++g) values[g] = v.middleCols(g * d_v, d_v).cast<double>();
  for (int h = 0; h < layer.num_heads; ++h) {
    const Eigen::MatrixXd& v_g = values[h / heads_per_kv];
    Eigen::VectorXd squared;
    if (has_w_o) {
      const Eigen::MatrixXd w_o_h = layer.w_o.middleRows(h * d_v, d_v).cast<double>();  // [d_v, d_out]
      const Eigen::MatrixXd gram = w_o_h * w_o_h.transpose();                             // [d_v, d_v]
      squared = (v_g * gram).cwiseProduct(v_g).rowwise().sum();
    } else {
      squared = v_g.rowwise().squaredNorm();
    }
    // G^h is positive semi-definite; clamp the rounding below 0 of a zero vector.
    norms.row(h) = squared.cwiseMax(0.0).cwiseSqrt().cast<Scalar>().transpose();
  }
  return norms;
}

}  // namespace attnviz
