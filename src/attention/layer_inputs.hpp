// The arguments of one multi_head_attention call, borrowed: what an analysis of a layer (the
// neuron view, circuits) needs to recompute any head exactly as the engine did. No maths here.
#pragma once

#include <optional>

#include "attention/attention.hpp"
#include "core/types.hpp"

namespace attnviz {

/// One attention layer's parameters, its query-side input x_q [n_q, d_model_q] and key/value-
/// side input x_kv [n_k, d_model_kv] (after the layer's norm), the allowed pairs [n_q, n_k]
/// (empty: all), and RoPE when the layer rotates Q and K. Pointers borrow: the caller keeps
/// them alive while the struct is used; `rope` may be null (no RoPE).
struct LayerInputs {
  const AttentionLayer* layer = nullptr;
  const Matrix* x_q = nullptr;
  const Matrix* x_kv = nullptr;
  const MaskMatrix* allowed = nullptr;
  const std::optional<RopeRequest>* rope = nullptr;
  /// The attention logit soft-cap c of the families that have one (Gemma 2's
  /// attn_logit_softcapping: scores = c·tanh(scores / c) before the mask and softmax); unset: none.
  std::optional<Scalar> soft_cap;
};

}  // namespace attnviz
