// ALTI, Aggregation of Layer-wise Token-to-token Interactions (Ferrando, Gállego and
// Costa-jussà, EMNLP 2022, "Measuring the Mixing of Contextual Information in the Transformer",
// §3, Eqs. 6–10; issue 20 §1): how much each input token of a layer contributes to each
// output, the residual stream included. Per layer
//   T_i(x_j) = Σ_h α^h_ij f^h(x_j) + δ_ij r_j        (r_j: the residual entering the layer)
//   y_i      = Σ_j T_i(x_j) + b_O
//   c_ij     = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁),  then each row divided by its sum,
// and layers compose by matrix product, first layer applied first (the paper's code). Pure
// maths, float64 inside: no I/O.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <vector>

#include "core/types.hpp"
#include "model/post_layer_norm.hpp"

namespace attnviz {

/// c_ij of one block: [n_q, n_k], rows summing to 1 (a row with no positive term stays zero).
/// weights h × [n_q, n_k]; value_vectors h × [n_k, d_out] (head_value_vectors); residual
/// [n_q, d_out] (self-attention: n_q = n_k, r_i added to T_i(x_i)); b_o [d_out] or empty.
/// Requires (asserted): n_q == n_k, residual's width d_out; the caller refuses other layers.
Matrix alti_contributions(const std::vector<Matrix>& weights, const std::vector<Matrix>& value_vectors,
                          const Matrix& residual, const Vector& b_o, const std::optional<PostLayerNorm>& post_norm = std::nullopt);

/// The running product R_l = C_l · C_(l−1) · … · C_0, fed one layer at a time from layer 0.
class AltiRollout {
 public:
  /// R ← C_l · R (R_0 = C_0). contributions: [n, n], the same n every layer.
  void add_layer(const Matrix& contributions);
  /// R after the layers added so far: [n, n]; empty before the first.
  const Eigen::MatrixXd& current() const { return rollout_; }
  int layers() const { return layers_; }

 private:
  int layers_ = 0;
  Eigen::MatrixXd rollout_;
};

}  // namespace attnviz
