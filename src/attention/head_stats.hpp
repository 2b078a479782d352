// Per-head statistics of attention weights (the numbers `compare` prints): entropy, focus,
// positional habits and head-to-head Jensen–Shannon divergence. Definitions and units are in
// docs/analysis.md "compare: statistics". Pure maths on weight matrices; nothing is printed here.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <utility>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Statistics of one head over its query rows that are not fully masked. Entropies in nats.
struct HeadStats {
  double entropy_mean = 0, entropy_min = 0, entropy_max = 0;  ///< H_i = −Σ_j a_ij ln a_ij
  /// Mean of H_i / ln(k_i) over the rows with k_i ≥ 2 (k_i = keys row i may see): a row that
  /// sees one key has H_i = 0 = ln 1 and carries no entropy information, so it is left out;
  /// nullopt when no row sees two keys (a 1-token run).
  std::optional<double> entropy_normalised_mean;
  double max_weight_mean = 0;          ///< mean over rows of max_j a_ij
  std::vector<long> argmax_keys;       ///< per query row, argmax_j a_ij (−1 for a fully masked row)
  // Self-attention only (n_q == n_k, query i is key i):
  std::optional<double> mean_distance;   ///< mean over rows of Σ_j a_ij·|i − j|, in tokens
  std::optional<double> diagonal_mass;   ///< mean over rows of a_ii
  std::optional<double> previous_mass;   ///< mean over rows i >= 1 of a_i,i−1; nullopt when no such row (1 token)
  std::optional<double> first_token_mass;  ///< mean over rows of a_i0 (the "attention sink")
  double mass = 0;                     ///< Σ over the rows of Σ_j a_ij (TransformerLens's detector denominator)
};

/// What the statistics of one block's heads share, found once for all of them: the query rows
/// (rows_for_statistics), each one's span of allowed keys (RowSpans: the statistics read only
/// it, outside it every weight is 0) and k_i, the keys it may see, with ln k_i.
struct StatisticRows {
  std::vector<long> rows;
  std::vector<std::pair<long, long>> spans;  ///< per entry of rows: [first, last] allowed key
  Eigen::ArrayXd keys, log_keys;             ///< per entry of rows: k_i and ln k_i
  /// allowed [n_q, n_k] or empty (all n_k keys allowed).
  static StatisticRows of(const MaskMatrix& allowed, const std::vector<long>& rows, long n_k);
};

/// One head's statistics (weights [n_q, n_k]) over a block's rows; the same numbers as
/// head_statistics below gives for it. Sums over a row run in float lanes of at most 16 terms
/// added in double: float's relative precision whatever the row's length. Requires rows non-empty.
HeadStats head_statistics(const Matrix& weights, const StatisticRows& rows, bool self_attention);

/// The query rows statistics are taken over: rows with at least one allowed key (allowed
/// empty = all allowed) that are not listed in `fully_masked` (rows a file gave all zeros).
std::vector<long> rows_for_statistics(long n_q, const MaskMatrix& allowed, const std::vector<long>& fully_masked);

/// Statistics of every head over `rows` (see rows_for_statistics). weights: h × [n_q, n_k];
/// allowed: [n_q, n_k] or empty, for the keys each row may see. `self_attention` enables the
/// positional statistics. Requires `rows` non-empty.
std::vector<HeadStats> head_statistics(const std::vector<Matrix>& weights, const MaskMatrix& allowed,
                                       const std::vector<long>& rows, bool self_attention);

/// Jensen–Shannon divergence of two distributions, in nats: ½KL(p‖m) + ½KL(q‖m), m = (p+q)/2.
/// Symmetric, 0 for identical rows, at most ln 2.
double js_divergence(const Eigen::Ref<const Eigen::RowVectorXd>& p, const Eigen::Ref<const Eigen::RowVectorXd>& q);

/// D(a, b) = mean over `rows` of js_divergence(A_a,i, A_b,i): h × h, symmetric, zero
/// diagonal. Requires `rows` non-empty.
Eigen::MatrixXd head_divergence_matrix(const std::vector<Matrix>& weights, const std::vector<long>& rows);

/// Induction score of one self-attention head (Olsson et al. 2022, "In-context Learning and
/// Induction Heads", §2): on text that repeats, an induction head at token t_i looks back to an
/// earlier copy t_j = t_i and attends to the token that followed it, j + 1. For query i the
/// induction keys are K_i = {j + 1 : j + 1 < i, t_j = t_i} (j + 1 = i, the token itself, is left
/// out); the score is the mean over `rows` with K_i non-empty of Σ_{k ∈ K_i} a_ik, in [0, 1].
/// weights: [n, n]; tokens: n labels, compared byte for byte. Returns nullopt when no row of
/// `rows` has an earlier copy of its token (text without repeats: there is nothing to measure).
std::optional<double> induction_score(const Matrix& weights, const Tokens& tokens, const std::vector<long>& rows);

/// induction_score's keys for one text, found once for all its heads: per row of `rows` (in
/// order) with an earlier copy of its token, the row and its induction keys K_i in order.
struct InductionKeys {
  std::vector<std::pair<long, std::vector<long>>> rows;
  static InductionKeys of(const Tokens& tokens, const std::vector<long>& rows);
};

/// induction_score over keys found by InductionKeys::of (the same value, summed in the same order).
std::optional<double> induction_score(const Matrix& weights, const InductionKeys& keys);

/// Element-wise mean over heads (a mean of probabilities, never a second softmax):
/// rows still sum to 1 (BH-12).
Matrix mean_over_heads(const std::vector<Matrix>& weights);

}  // namespace attnviz
