#include "model/residual_trace.hpp"

#include <cassert>

namespace attnviz {

void ResidualTrace::begin(const Matrix& embedded) {
  embedding = embedded.bottomRows(1).transpose();
}

void ResidualTrace::enter_layer(const Matrix& x) {
  if (keep_layer_inputs) layer_inputs.push_back(x);
  before_ = x.bottomRows(1).transpose();
}

void ResidualTrace::leave_layer(const AttentionLayer& layer, const AttentionResult& result, const Matrix& x) {
  assert(!result.head_outputs.empty() && result.output.rows() > 0);
  const long d_v = layer.d_v(), d_model = layer.w_o.cols(), last = result.output.rows() - 1;
  Matrix writes(layer.num_heads, d_model);  // [h, d_model]
  for (int h = 0; h < layer.num_heads; ++h)
    writes.row(h) = result.head_outputs[static_cast<std::size_t>(h)].row(last) * layer.w_o.middleRows(h * d_v, d_v);
  head_writes.push_back(std::move(writes));
  const Vector bias = layer.b_o.size() ? layer.b_o : Vector::Zero(d_model);
  attn_bias.push_back(bias);
  const Vector update = result.output.row(last).transpose();
  attn_updates.push_back(update);
  // The block adds its attention update, then the MLP's: what x gained beyond the attention is
  // the MLP's (its output bias, when a family has one, goes to mlp_bias).
  mlp_writes.push_back(x.bottomRows(1).transpose() - before_ - update);
  mlp_bias.push_back(Vector::Zero(d_model));
  final_residual = x.bottomRows(1).transpose();
}

}  // namespace attnviz
