// Row-wise, numerically stable softmax with masking. Does not scale or mask scores itself
// beyond the given allowed matrix.
#pragma once

#include "attention/row_spans.hpp"
#include "core/types.hpp"

namespace attnviz {

/// Masked row softmax, in place: scores [n_q, n_k] -> weights [n_q, n_k].
///   w_ij = exp(s_ij - m_i) / sum_{j' allowed} exp(s_ij' - m_i),  m_i = max_{j allowed} s_ij,
/// and w_ij = 0 where allowed(i, j) == 0 (logit -inf, Vaswani et al. 2017 §3.2.3).
/// Subtracting the row max keeps exp() <= 1, so logits of any size give no overflow.
/// A row with no allowed key gets all zeros (never NaN), the convention of PyTorch's
/// _safe_softmax. `allowed` empty means every pair is allowed.
/// Rows whose allowed keys fill their span (RowSpans) read only that span, in chunks of 16
/// floats; rows with holes read the whole row.
void softmax_rows_in_place(Matrix& scores, const MaskMatrix& allowed);
/// The same with `allowed`'s spans found once (RowSpans::of(allowed, n_q, n_k)) for many heads.
void softmax_rows_in_place(Matrix& scores, const MaskMatrix& allowed, const RowSpans& spans);

/// Sets scores(i, j) = -inf wherever allowed(i, j) == 0: the logits that enter the softmax.
void softmax_mask_scores(Matrix& scores, const MaskMatrix& allowed);

/// The two above on rows first_row … first_row + rows − 1 of a matrix (`scores` is that row
/// block; `allowed` the whole matrix's mask or empty): the same operations row by row, so a
/// matrix done in row blocks (one head's rows split over threads) gets the same bits.
void softmax_rows_in_place(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row);
/// The row-block form with the whole matrix's spans found once.
void softmax_rows_in_place(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row, const RowSpans& spans);
void softmax_mask_scores(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row);

}  // namespace attnviz
