#include "core/split_product.hpp"

#include <algorithm>

namespace attnviz {

// Eigen's thread count is one global: written only when it changes, so that concurrent callers
// that already run with 1 (attribute's parallel reruns) only read it.
OneThreadEigen::OneThreadEigen() : budget_(Eigen::nbThreads()) {
  if (budget_ != 1) Eigen::setNbThreads(1);
}

OneThreadEigen::~OneThreadEigen() {
  if (Eigen::nbThreads() != budget_) Eigen::setNbThreads(budget_);
}

Matrix split_product(const Matrix& x, const Eigen::Ref<const Matrix>& w, int threads) {
  Matrix y(x.rows(), w.cols());
  const OneThreadEigen one_thread;
  const long blocks = (w.cols() + kProductBlockColumns - 1) / kProductBlockColumns;
  threads = std::max(1, std::min(threads, static_cast<int>(blocks)));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long b = 0; b < blocks; ++b) {
    const long first = b * kProductBlockColumns;
    const long width = std::min(kProductBlockColumns, static_cast<long>(w.cols()) - first);
    y.middleCols(first, width).noalias() = x * w.middleCols(first, width);
  }
  return y;
}

}  // namespace attnviz
