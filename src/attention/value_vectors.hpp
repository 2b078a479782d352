// What each head writes per unit of attention weight: f^h(x_j) = (x_j·W_V^g + b_V^g)·W_O^h
// (Kobayashi et al., EMNLP 2020, "Attention is Not Only a Weight", Eq. 6; issue 20), the term
// whose size the weight alone does not show. The head output is Σ_j α^h_ij f^h(x_j) and the
// block's output Σ_h Σ_j α^h_ij f^h(x_j) + b_O. Pure maths, as attention.hpp.
#pragma once

#include <vector>

#include "attention/attention.hpp"
#include "core/types.hpp"

namespace attnviz {

/// f^h(x_j) for every query head h and key j: h × [n_k, d_out].
/// v [n_k, h_kv·d_v] is X_kv·W_V + b_V (all key/value heads); query head h reads key/value head
/// g = h / (h / h_kv) (grouped-query attention), and W_O^h is rows [h·d_v, (h+1)·d_v) of W_O
/// [h·d_v, d_out] (the engine's [in, out] layout). Without W_O (a layer file that has none) the
/// layer's output is the concat, so f^h(x_j) is v^g_j placed in head h's columns of a
/// [n_k, h·d_v] matrix (zeros elsewhere). Requires v's width to match `layer`.
std::vector<Matrix> head_value_vectors(const AttentionLayer& layer, const Eigen::Ref<const Matrix>& v);

/// ‖f^h(x_j)‖₂ for every query head h and key j: [h, n_k], without forming f. In float64,
/// ‖v^g_j W_O^h‖² = v^g_j G^h v^g_jᵀ with the Gram matrix G^h = W_O^h W_O^hᵀ [d_v, d_v]
/// (h·d_v²·d_out + n_k·h·d_v² work instead of n_k·h·d_v·d_out; issue 20's speed item). Without
/// W_O, ‖v^g_j‖₂. v and the grouping as head_value_vectors; requires v's width to match `layer`.
Matrix head_value_norms(const AttentionLayer& layer, const Eigen::Ref<const Matrix>& v);

}  // namespace attnviz
