// The neuron view of one head at one query (Vig 2019, BertViz): every vector that makes its
// attention scores and its output, written out. Pure maths over an attention layer's inputs,
// as the forward pass hands them on; no files, no pictures.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attention/layer_inputs.hpp"
#include "core/types.hpp"

namespace attnviz {

/// One head at one query i, key j = 0 … n_k−1 (head h reads key/value head g = h / (h / h_kv)):
///   q = x_q[i]·W_Q^h + b_Q^h, rotated          [d_k]
///   k_j = x_kv[j]·W_K^g + b_K^g, rotated       [n_k, d_k]
///   products_jd = q_d · k_jd                    [n_k, d_k]
///   scores_raw_j = scale · Σ_d products_jd      [n_k]  (Vaswani et al. 2017, Eq. 1)
///   scores_j = c·tanh(scores_raw_j / c) with the layer's soft-cap c, else scores_raw_j; -inf where masked
///   weights = softmax(scores) over allowed keys, 0 where masked
///   v_j = x_kv[j]·W_V^g + b_V^g                 [n_k, d_v]
///   weighted_values_j = weights_j · v_j, output = Σ_j weighted_values_j   [d_v]
struct NeuronView {
  int head = 0;
  long query = 0;
  Scalar scale = 0;
  Vector q;                            ///< [d_k]
  Matrix k;                            ///< [n_k, d_k]
  Matrix products;                     ///< [n_k, d_k]
  Vector scores_raw;                   ///< [n_k], also where masked
  Vector scores;                       ///< [n_k], -inf where masked
  Vector weights;                      ///< [n_k], sums to 1
  std::vector<std::uint8_t> masked;    ///< [n_k], 1 = masked key
  Matrix v;                            ///< [n_k, d_v]
  Matrix weighted_values;              ///< [n_k, d_v]
  Vector output;                       ///< [d_v]
};

/// The neuron view of `head` at `query`. Requires 0 ≤ head < num_heads and 0 ≤ query < n_q
/// (the caller names bad values); throws InputError when every key of `query` is masked (the
/// row has no softmax, so no weights to explain).
NeuronView neuron_view(const LayerInputs& in, int head, long query);

}  // namespace attnviz
