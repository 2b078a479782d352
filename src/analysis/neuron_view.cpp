#include "analysis/neuron_view.hpp"

#include <cassert>
#include <limits>
#include <string>

#include "attention/softmax.hpp"
#include "core/error.hpp"

namespace attnviz {

namespace {

// x·W[:, first … first+width) + b[first …]: one head's block of a projection (§3.2.2).
Matrix project_block(const Matrix& x, const Matrix& w, const Vector& b, long first, long width) {
  Matrix y = x * w.middleCols(first, width);  // [n, width]
  if (b.size() != 0) y.rowwise() += b.segment(first, width).transpose();
  return y;
}

}  // namespace

NeuronView neuron_view(const LayerInputs& in, int head, long query) {
  const AttentionLayer& layer = *in.layer;
  assert(head >= 0 && head < layer.num_heads && query >= 0 && query < in.x_q->rows());
  const long d_k = layer.d_k(), d_v = layer.d_v(), n_k = in.x_kv->rows();
  const int g = head / (layer.num_heads / layer.num_kv_heads);  // the key/value head (GQA)
  NeuronView view;
  view.head = head;
  view.query = query;
  view.scale = layer.logit_scale();

  // As the engine does: QK-norm (Qwen 3, Gemma 3: per head; OLMo 2: over all heads, so the
  // whole projection is normalised before this head's block is taken), then RoPE.
  const auto projected = [&](const Matrix& x, const Matrix& w, const Vector& b, const Vector& gain, long first) {
    if (gain.size() == 0 || gain.size() == d_k) {
      Matrix y = project_block(x, w, b, first, d_k);
      normalize_heads(y, d_k, gain, layer.qk_norm_epsilon);
      return y;
    }
    Matrix all = project_block(x, w, b, 0, w.cols());
    normalize_heads(all, d_k, gain, layer.qk_norm_epsilon);
    return Matrix(all.middleCols(first, d_k));
  };
  Matrix q = projected(in.x_q->row(query), layer.w_q, layer.b_q, layer.q_norm, head * d_k);  // [1, d_k]
  view.k = projected(*in.x_kv, layer.w_k, layer.b_k, layer.k_norm, g * d_k);                 // [n_k, d_k]
  if (in.rope != nullptr && *in.rope) {
    const RopeRequest& rope = **in.rope;
    apply_rope(q, d_k, rope.settings, {rope.query_positions[static_cast<std::size_t>(query)]});
    apply_rope(view.k, d_k, rope.settings, rope.key_positions);
  }
  view.q = q.row(0).transpose();
  view.products = view.k.array().rowwise() * q.row(0).array();                        // [n_k, d_k]
  // Summed in float64, so that scores_raw = scale·Σ_d products holds to the last bit of float32.
  // The engine's GEMM ((scale·q)·kᵀ over all heads at once) rounds in its own order: the two
  // agree to float32's spacing (about 1e-5 at stories260K's scores of 30), not bit for bit.
  view.scores_raw = (static_cast<double>(view.scale) * view.products.cast<double>().rowwise().sum()).cast<Scalar>();  // [n_k]

  MaskMatrix row_allowed(1, n_k);
  if (in.allowed != nullptr && in.allowed->size() != 0) row_allowed = in.allowed->row(query);
  else row_allowed.setOnes();
  view.masked.resize(static_cast<std::size_t>(n_k));
  for (long j = 0; j < n_k; ++j) view.masked[static_cast<std::size_t>(j)] = row_allowed(0, j) == 0 ? 1 : 0;
  if (row_allowed.cast<int>().sum() == 0)
    throw InputError("query " + std::to_string(query) + ": every key is masked (causal/padding), so the row has no weights to explain");

  Matrix scores = view.scores_raw.transpose();  // [1, n_k]
  const Scalar cap = in.soft_cap ? *in.soft_cap : layer.logit_softcap;
  if (cap > 0) scores = (scores.array() / cap).tanh() * cap;  // Gemma 2: c·tanh(s / c), before the mask (Team Gemma 2024, §2)
  Matrix weights = scores;
  softmax_mask_scores(scores, row_allowed);
  view.scores = scores.row(0).transpose();
  softmax_rows_in_place(weights, row_allowed);
  view.weights = weights.row(0).transpose();

  view.v = project_block(*in.x_kv, layer.w_v, layer.b_v, g * d_v, d_v);               // [n_k, d_v]
  view.weighted_values = view.v.array().colwise() * view.weights.array();             // [n_k, d_v]
  view.output = view.weighted_values.colwise().sum().transpose();                     // [d_v]
  return view;
}

}  // namespace attnviz
