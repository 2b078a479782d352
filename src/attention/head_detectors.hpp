// Per-text head detectors over a corpus (issue 22): TransformerLens's `detect_head` scores and
// the attention-sink indicator of Gu et al. (ICLR 2025). Pure maths on one head's weights.
#pragma once

#include <cstdint>
#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Which detection pattern P (TransformerLens, transformer_lens/head_detector.py):
///  - PreviousToken: P_ij = 1 when j = i − 1;
///  - DuplicateToken: P_ij = 1 when j < i and t_j = t_i (token ids compared);
///  - Induction: P_ij = 1 when 1 ≤ j ≤ i and t_{j−1} = t_i, j − 1 < i (the duplicate pattern
///    shifted one key to the right and kept lower-triangular: j = i counts when t_{i−1} = t_i).
enum class DetectionPattern { PreviousToken, DuplicateToken, Induction };

/// The cells (i, j) where each pattern is 1, for one text's token ids: built once, scored for
/// every head of the text (the patterns depend on the ids only).
struct DetectionCells {
  long n = 0;
  std::vector<std::pair<long, long>> previous, duplicate, induction;
  static DetectionCells of(const std::vector<std::int32_t>& token_ids);
};

/// detection_score of every pattern at once over precomputed `cells`: {previous, duplicate,
/// induction}; all nullopt for n < 2.
std::array<std::optional<double>, 3> detection_scores(const Matrix& weights, const DetectionCells& cells);
/// The same with TL's denominator, the sum of all n² weights, already known (`total`, e.g.
/// HeadStats::mass plus any rows the statistics skipped): no pass over the whole matrix.
std::array<std::optional<double>, 3> detection_scores(const Matrix& weights, const DetectionCells& cells, double total);

/// TransformerLens's compute_head_attention_similarity_score with error_measure "mul",
/// exclude_bos = False, exclude_current_token = False (detect_head's defaults):
/// score = Σ_ij A_ij·P_ij / Σ_ij A_ij, the denominator being all n rows' mass (n for rows that sum
/// to 1, so a previous-token score is at most (n − 1)/n). weights: [n, n] self-attention;
/// token_ids: n ids. nullopt for n < 2 (detect_head asserts 1 < seq_len).
std::optional<double> detection_score(const Matrix& weights, const std::vector<std::int32_t>& token_ids,
                                      DetectionPattern pattern);

/// Gu et al. 2025, "When Attention Sink Emerges in Language Models", §3: the first key's
/// importance α_1 = mean over `rows` that may see key 0 (allowed empty = all may) of a_i0; the
/// head is a sink on this text when α_1 > epsilon: returns 1 or 0; nullopt when no row sees key 0.
std::optional<double> sink_indicator(const Matrix& weights, const MaskMatrix& allowed, const std::vector<long>& rows,
                                     double epsilon);

}  // namespace attnviz
