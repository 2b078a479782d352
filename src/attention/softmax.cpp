#include "attention/softmax.hpp"

#include <cmath>
#include <limits>

namespace attnviz {

namespace {
constexpr Scalar kMinusInfinity = -std::numeric_limits<Scalar>::infinity();
}  // namespace

void softmax_mask_scores(Matrix& scores, const MaskMatrix& allowed) {
  if (allowed.size() == 0) return;
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    for (Eigen::Index j = 0; j < scores.cols(); ++j) {
      if (allowed(i, j) == 0) scores(i, j) = kMinusInfinity;
    }
  }
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
    row = (row.array() - row_max).exp();  // exp(-inf) == 0 for masked keys
    row /= row.sum();
  }
}

}  // namespace attnviz
