#include "attention/attention.hpp"

#include <cassert>
#include <cmath>

#include "attention/mask.hpp"
#include "attention/softmax.hpp"

namespace attnviz {

namespace {

// X·W + b for all heads at once: one GEMM instead of one per head.
Matrix project(const Matrix& x, const Matrix& w, const Vector& b) {
  Matrix y = x * w;  // [n, width]
  if (b.size() != 0) y.rowwise() += b.transpose();
  return y;
}

}  // namespace

Scalar AttentionLayer::logit_scale() const {
  if (scale) return *scale;
  return static_cast<Scalar>(1.0 / std::sqrt(static_cast<double>(d_k())));
}

AttentionResult multi_head_attention(const AttentionLayer& layer, const Matrix& x_q,
                                     const Matrix& x_kv, const MaskMatrix& allowed,
                                     const AttentionWants& wants,
                                     const std::optional<RopeRequest>& rope) {
  assert(layer.num_heads > 0 && layer.num_heads % layer.num_kv_heads == 0);
  const long d_k = layer.d_k();
  const long d_v = layer.d_v();
  const int heads_per_kv = layer.num_heads / layer.num_kv_heads;
  const Scalar scale = layer.logit_scale();

  Matrix q = project(x_q, layer.w_q, layer.b_q);    // [n_q, h·d_k]
  Matrix k = project(x_kv, layer.w_k, layer.b_k);   // [n_k, h_kv·d_k]
  const Matrix v = project(x_kv, layer.w_v, layer.b_v);  // [n_k, h_kv·d_v]
  if (rope) {
    apply_rope(q, d_k, rope->settings, rope->query_positions);
    apply_rope(k, d_k, rope->settings, rope->key_positions);
  }

  AttentionResult result;
  if (!q.allFinite() || !k.allFinite() || !v.allFinite()) {
    result.overflow = "the projections Q, K, V (X·W + b)";
    return result;
  }
  result.fully_masked_rows = fully_masked_rows(allowed);
  result.weights.reserve(layer.num_heads);
  for (int h = 0; h < layer.num_heads; ++h) {
    const int g = h / heads_per_kv;  // this query head's key/value head
    Matrix scores = q.middleCols(h * d_k, d_k) * k.middleCols(g * d_k, d_k).transpose();
    scores *= scale;  // [n_q, n_k], Eq. (1): QKᵀ/√d_k
    if (!scores.allFinite()) {
      result.overflow = "the scores of head " + std::to_string(h);
      return result;
    }
    if (wants.scores) {
      Matrix masked = scores;
      softmax_mask_scores(masked, allowed);
      result.scores.push_back(std::move(masked));
    }
    softmax_rows_in_place(scores, allowed);  // now the weights A_h
    if (wants.outputs) {
      result.head_outputs.push_back(scores * v.middleCols(g * d_v, d_v));  // [n_q, d_v]
    }
    result.weights.push_back(std::move(scores));
  }
  if (wants.outputs) {
    result.concat.resize(x_q.rows(), layer.num_heads * d_v);
    for (int h = 0; h < layer.num_heads; ++h) {
      result.concat.middleCols(h * d_v, d_v) = result.head_outputs[h];
    }
    if (layer.w_o.size() != 0) result.output = project(result.concat, layer.w_o, layer.b_o);
    if (!result.output.allFinite()) result.overflow = "the output concat·W_O + b_O";
  }
  return result;
}

}  // namespace attnviz
