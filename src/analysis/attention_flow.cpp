#include "analysis/attention_flow.hpp"

#include <cassert>

#include "analysis/max_flow.hpp"
#include "attention/rollout.hpp"

namespace attnviz {

void AttentionFlow::add_layer(const Matrix& head_mean, const MaskMatrix& allowed) {
  mixed_.push_back(residual_attention(head_mean, allowed, kDefaultRolloutResidual));
}

Eigen::MatrixXd AttentionFlow::flow() const {
  assert(!mixed_.empty());
  const int layers = static_cast<int>(mixed_.size());
  const int n = static_cast<int>(mixed_.front().rows());
  // Node (l, j) is l·n + j: layer 0 the inputs, layer L the last layer's outputs.
  MaxFlow graph((layers + 1) * n);
  for (int l = 0; l < layers; ++l)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        if (mixed_[l](i, j) > 0) graph.add_edge((l + 1) * n + i, l * n + j, mixed_[l](i, j));
  Eigen::MatrixXd flow = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) flow(i, j) = graph.run(layers * n + i, j);
    const double sum = flow.row(i).sum();
    if (sum > 0) flow.row(i) /= sum;
  }
  return flow;
}

}  // namespace attnviz
