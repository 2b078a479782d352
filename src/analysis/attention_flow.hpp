// Attention flow (Abnar & Zuidema, ACL 2020, "Quantifying Attention Flow in Transformers", §3;
// issue 20 §2): the layers as a graph of positions, node (l+1, i) joined to node (l, j) with
// capacity Â_l(i, j), the rollout's residual-mixed attention (attention/rollout.hpp,
// Â_l = ½·mean_h A_l + ½·I, rows renormalised). flow(i ← j) is the maximum flow from the last
// layer's node i to input node j (max_flow.hpp), each row then divided by its sum. Costly:
// n² max-flow problems over a graph of L·n² edges, hence kMaxFlowTokens. Pure maths.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// The most tokens --flow accepts: n² max-flows over L·n² edges each (scripts/bench/RESULTS.md:
/// 64 tokens take 0.2 s of CPU over 5 layers, 0.9 s over 32; the cost grows as n⁴·L).
inline constexpr long kMaxFlowTokens = 64;

/// Collects Â_l layer by layer (layer 0 first), then computes the flow once.
class AttentionFlow {
 public:
  /// Â_l from layer l's mean over heads [n, n] and its mask, as Rollout does (residual ½).
  void add_layer(const Matrix& head_mean, const MaskMatrix& allowed);
  int layers() const { return static_cast<int>(mixed_.size()); }
  /// [n, n]: row i the flow from each input j to output position i, rows summing to 1 (a row
  /// with no flow stays zero). Requires: at least one layer.
  Eigen::MatrixXd flow() const;

 private:
  std::vector<Eigen::MatrixXd> mixed_;  ///< Â_0 … Â_(L−1)
};

}  // namespace attnviz
