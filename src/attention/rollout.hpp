// Attention rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", §3):
// how much each input token feeds each position after l layers, when the residual connection
// is modelled as attention to the token itself and layers compose by matrix product:
//   Â_l = (1 − α)·mean_h(A_l) + α·I, rows renormalised to sum to 1    (α = the residual weight, ½ in the paper)
//   R_0 = Â_0,  R_l = Â_l · R_(l−1) = Â_l · Â_(l−1) · … · Â_0
// Rows of R_l are distributions over the input tokens. Self-attention only (n_q = n_k).
// Grouped-query attention changes nothing: A_l holds one matrix per query head.
// Pure maths, float64: no I/O.
#pragma once

#include <Eigen/Core>

#include "core/types.hpp"

namespace attnviz {

/// Default α: the paper's ½ (the residual stream and the attention weighted equally).
inline constexpr double kDefaultRolloutResidual = 0.5;

/// Â = (1 − α)·head_mean + α·I, then each row divided by its sum. The identity is added only on
/// diagonal cells the mask allows, so a masked key (padding) stays exactly 0; a row with no
/// weight at all (every key masked) stays all zero rather than NaN.
/// head_mean: [n, n], rows summing to 1 or all zero; allowed: [n, n] or empty (all allowed);
/// Requires: 0 <= residual <= 1. Returns [n, n].
Eigen::MatrixXd residual_attention(const Matrix& head_mean, const MaskMatrix& allowed, double residual);

/// The running product R_l, fed one layer at a time (layer 0 first), keeping only R (n × n):
/// a whole model's rollout needs no more than one layer's weights at once.
class Rollout {
 public:
  /// Requires: 0 <= residual <= 1.
  explicit Rollout(double residual = kDefaultRolloutResidual);
  /// R ← Â_l · R (R_0 = Â_0). head_mean: [n, n], the mean over heads of layer l's weights;
  /// allowed as for residual_attention. Requires: the same n for every layer.
  void add_layer(const Matrix& head_mean, const MaskMatrix& allowed);
  /// R after the layers added so far: [n, n]; empty before the first layer.
  const Eigen::MatrixXd& current() const { return rollout_; }
  int layers() const { return layers_; }
  double residual() const { return residual_; }

 private:
  double residual_;
  int layers_ = 0;
  Eigen::MatrixXd rollout_;
};

}  // namespace attnviz
