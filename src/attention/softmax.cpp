#include "attention/softmax.hpp"

#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

namespace attnviz {

namespace {
constexpr Scalar kMinusInfinity = -std::numeric_limits<Scalar>::infinity();
}  // namespace

void softmax_mask_scores(Matrix& scores, const MaskMatrix& allowed) {
  if (allowed.size() == 0) return;
  // Both are row-major [n_q, n_k]: one flat pass the compiler vectorises (a blend per lane),
  // where (i, j) indexing compared one cell at a time (a tenth of a corpus census's time).
  assert(allowed.rows() == scores.rows() && allowed.cols() == scores.cols());
  Scalar* s = scores.data();
  const std::uint8_t* a = allowed.data();
  for (Eigen::Index c = 0; c < scores.size(); ++c) s[c] = a[c] != 0 ? s[c] : kMinusInfinity;
}

void softmax_rows_in_place(Matrix& scores, const MaskMatrix& allowed) {
  softmax_mask_scores(scores, allowed);
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    auto row = scores.row(i);
    const Scalar row_max = row.maxCoeff();
    if (row_max == kMinusInfinity) {  // every key masked: no distribution exists
      row.setZero();
      continue;
    }
    row = (row.array() - row_max).exp();
    // Eigen's vectorised exp clamps its argument (to about -88.4 on SSE/AVX2 builds), so
    // exp(-inf) comes out as ~2.9e-39, not 0: masked keys are set to exactly 0 here.
    if (allowed.size() != 0) {
      Scalar* r = row.data();
      const std::uint8_t* a = allowed.row(i).data();
      for (Eigen::Index j = 0; j < row.size(); ++j) r[j] = a[j] != 0 ? r[j] : Scalar(0);
    }
    row /= row.sum();
  }
}

void softmax_mask_scores(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row) {
  if (allowed.size() == 0) return;
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    for (Eigen::Index j = 0; j < scores.cols(); ++j) {
      if (allowed(first_row + i, j) == 0) scores(i, j) = kMinusInfinity;
    }
  }
}

void softmax_rows_in_place(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row) {
  softmax_mask_scores(scores, allowed, first_row);
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    auto row = scores.row(i);
    const Scalar row_max = row.maxCoeff();
    if (row_max == kMinusInfinity) {
      row.setZero();
      continue;
    }
    row = (row.array() - row_max).exp();
    if (allowed.size() != 0) {
      for (Eigen::Index j = 0; j < row.size(); ++j)
        if (allowed(first_row + i, j) == 0) row(j) = 0;
    }
    row /= row.sum();
  }
}

}  // namespace attnviz
