#include "model/residual_trace.hpp"

#include <cassert>

namespace attnviz {

void ResidualTrace::begin(const Matrix& embedded, const Matrix* positions) {
  embedding = embedded.bottomRows(1).transpose();
  if (positions) {
    position = positions->bottomRows(1).transpose();
    embedding -= position;
  }
}

void ResidualTrace::enter_layer(const Matrix& x) {
  if (keep_layer_inputs) layer_inputs.push_back(x);
  before_ = x.bottomRows(1).transpose();
}

void ResidualTrace::leave_layer(const AttentionLayer& layer, const AttentionResult& result, const Matrix& x,
                                const Vector& write_gain, const Vector& mlp_output_bias) {
  assert(!result.head_outputs.empty() && result.output.rows() > 0);
  const long d_v = layer.d_v(), d_model = layer.w_o.cols(), last = result.output.rows() - 1;
  const auto joined = [&](Vector v) -> Vector {  // as the vector joins the residual stream
    if (write_gain.size()) v.array() *= write_gain.array();
    return v;
  };
  Matrix writes(layer.num_heads, d_model);  // [h, d_model]
  for (int h = 0; h < layer.num_heads; ++h)
    writes.row(h) = joined((result.head_outputs[static_cast<std::size_t>(h)].row(last) * layer.w_o.middleRows(h * d_v, d_v)).transpose()).transpose();
  head_writes.push_back(std::move(writes));
  attn_bias.push_back(joined(layer.b_o.size() ? layer.b_o : Vector::Zero(d_model)));
  const Vector update = joined(result.output.row(last).transpose());
  attn_updates.push_back(update);
  // The block adds its attention update, then the MLP's: what x gained beyond the attention is
  // the MLP's, its output bias counted apart.
  const Vector bias = mlp_output_bias.size() ? mlp_output_bias : Vector::Zero(d_model);
  mlp_writes.push_back(x.bottomRows(1).transpose() - before_ - update - bias);
  mlp_bias.push_back(bias);
  final_residual = x.bottomRows(1).transpose();
}

}  // namespace attnviz
