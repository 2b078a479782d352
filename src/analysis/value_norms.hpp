// Value-weighted norms (Kobayashi et al., EMNLP 2020, "Attention is Not Only a Weight", §3,
// Eq. 6; issue 20 §1): how much each key actually moves each query's output, as the size of
// α^h_ij f^h(x_j) rather than the weight α^h_ij alone. Consumes the weights and the head value
// vectors the engine hands on (attention/value_vectors.hpp). Pure maths: no I/O.
#pragma once

#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// The three norm fields of a dump (docs/output-formats.md).
struct NormMeasures {
  std::vector<Matrix> norms;  ///< h × [n_q, n_k]: N^h_ij = ‖α^h_ij f^h(x_j)‖₂ = α^h_ij ‖f^h(x_j)‖₂
  Matrix value_norms;         ///< [h, n_k]: ‖f^h(x_j)‖₂
  Matrix layer_norms;         ///< [n_q, n_k]: ‖Σ_h α^h_ij f^h(x_j)‖₂ (what the block writes from key j)
};

/// The norms of one block. weights: h × [n_q, n_k] (α ≥ 0); value_vectors: h × [n_k, d_out]
/// (head_value_vectors). layer_norms uses each key's Gram matrix G_j[h, h'] = ⟨f^h(x_j), f^h'(x_j)⟩
/// in float64 (‖Σ_h a_h f_h‖² = aᵀ G_j a): n_k·h²·d_out + n_q·n_k·h² work instead of
/// n_q·n_k·h·d_out. Requires: matching h, n_k and d_out (asserted).
/// Without `with_layer_norms` (every picture; only a dump writes them) layer_norms stays empty
/// and the per-key Gram matrices are not built.
NormMeasures value_weighted_norms(const std::vector<Matrix>& weights, const std::vector<Matrix>& value_vectors,
                                  bool with_layer_norms = true);

/// norms and value_norms alone (layer_norms left empty) from ‖f^h(x_j)‖ [h, n_k]
/// (head_value_norms): N^h_ij = α^h_ij ‖f^h(x_j)‖, as α ≥ 0. What every picture of --measure
/// norms reads; only a dump writes layer_norms. weights h × [n_q, n_k]; requires matching h, n_k.
NormMeasures head_weighted_norms(const std::vector<Matrix>& weights, Matrix value_norms);

/// m with each row divided by its sum; all-zero rows stay zero. [n_q, n_k] → [n_q, n_k].
/// Overview, rollout and census read N so: a row of N as a distribution over keys.
Matrix normalise_rows(const Matrix& m);

}  // namespace attnviz
