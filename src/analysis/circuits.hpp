// QK and OV circuits of one head (Elhage et al. 2021, "A Mathematical Framework for Transformer
// Circuits"): W_QK = W_Q^h W_K^hᵀ and W_OV = W_V^h W_O^h, both d_model × d_model of rank ≤ d_k,
// analysed through d_k × d_k matrices only (never the d_model² product). Pure maths: no files.
#pragma once

#include <complex>
#include <optional>
#include <vector>

#include "attention/attention.hpp"
#include "core/types.hpp"

namespace attnviz {

/// Double-precision dense matrix for the spectra (singular values of float32 weights are
/// computed in float64 so the d_k route and a full SVD agree to 1e-5 and beyond).
using WideCircuitMatrix = Eigen::MatrixXd;

/// The singular value decomposition of a product A·Bᵀ, A [m, r], B [n, r], through thin QR
/// factorisations A = Q_a R_a, B = Q_b R_b: A·Bᵀ = Q_a (R_a R_bᵀ) Q_bᵀ, so the SVD of the small
/// R_a R_bᵀ = U' S V'ᵀ gives A·Bᵀ = (Q_a U') S (Q_b V')ᵀ. Costs O((m + n)·r²), not O(m·n·r).
struct LowRankSvd {
  std::vector<double> singular_values;  ///< min(m, n, r) of them, descending
  WideCircuitMatrix u;                  ///< [m, k] left singular vectors (columns)
  WideCircuitMatrix v;                  ///< [n, k] right singular vectors (columns)
};
LowRankSvd low_rank_svd(const WideCircuitMatrix& a, const WideCircuitMatrix& b);

/// The parts of a whole model that the full OV circuit and the token lists read: the token
/// embeddings W_E of the queries' side and of the keys' (and values') side, [n_vocab, d_model]
/// each (the same matrix for a decoder's self-attention; source and target embeddings for
/// cross-attention), and W_U [d_model, n_vocab] with the final norm's gain folded into its rows,
/// or empty when the head's values do not come from the vocabulary W_U predicts (cross- and
/// encoder attention: no copying score). The pieces name each embedding row.
/// Kept in float32 as the model stores them (a 32 000 × 4096 table is 0.5 GB; float64 copies
/// would double that); the products they enter are summed in float64.
struct VocabularyCircuit {
  Matrix embedding;      ///< W_E of the queries' side [n_vocab_q, d_model]
  Matrix key_embedding;  ///< W_E of the keys' side [n_vocab_k, d_model]; empty = embedding
  Matrix unembedding;    ///< diag(g_final)·W_U [d_model, n_vocab], or empty
  Tokens pieces;         ///< n_vocab_q labels
  Tokens key_pieces;     ///< n_vocab_k labels; empty = pieces
  const Matrix& keys() const { return key_embedding.size() != 0 ? key_embedding : embedding; }
  const Tokens& key_labels() const { return key_pieces.empty() ? pieces : key_pieces; }
};

/// One head's circuits (see circuits.hpp's header comment).
struct HeadCircuits {
  std::vector<double> qk_singular_values;                            ///< of W_QK, descending (d_k of them)
  std::optional<std::vector<double>> ov_singular_values;            ///< of W_OV; unset without W_O
  /// Eigenvalues of W_OV (those of the d_v × d_v matrix W_O^h W_V^h, the same nonzero ones),
  /// by descending modulus; unset without W_O or when W_OV is not square.
  std::optional<std::vector<std::complex<double>>> ov_eigenvalues;
  /// Σλ/Σ|λ| over the eigenvalues of W_E W_V^h W_O^h W_U (through the d_v × d_v matrix
  /// W_O^h W_U W_E W_V^h, W_E of the keys' side); unset without W_O or an unembedding.
  std::optional<double> copying_score;
  LowRankSvd qk;  ///< the SVD of W_QK (its u: query side, v: key side)
};

/// W_U W_E [d_model, d_model] (keys' side W_E): the vocabulary's loop that every head's full OV
/// circuit W_E W_V^h W_O^h W_U passes through, formed once per layer (d²·n_vocab, summed in float64
/// over blocks of the vocabulary) so that each head then costs d_v·d² instead of 2·d_v·d·n_vocab.
/// Empty when `vocabulary` has no unembedding or its two sides differ in size.
WideCircuitMatrix vocabulary_loop(const VocabularyCircuit& vocabulary);

/// Head `head`'s circuits from `layer`'s weights. `input_gain` [d_model] (or empty) is the gain
/// of the norm before the layer, folded into the rows of W_Q, W_K and W_V as TransformerLens's
/// fold_ln does; `key_gain` the same for the key/value side when it has another norm (cross-
/// attention), else empty (then input_gain applies to both). Without RoPE and without the scale.
/// `loop` is vocabulary_loop() of the model's vocabulary, or null/empty: no copying score.
HeadCircuits head_circuits(const AttentionLayer& layer, int head, const Vector& input_gain, const Vector& key_gain,
                           const WideCircuitMatrix* loop);

/// For direction `direction` [d_model], the `count` rows of `embedding` [n, d_model] with the
/// largest projection and the `count` with the most negative, as row indices (largest first,
/// most negative first).
struct DirectionTokens {
  std::vector<long> top, bottom;
};
DirectionTokens extreme_tokens(const Matrix& embedding, const Eigen::VectorXd& direction, int count);

}  // namespace attnviz
