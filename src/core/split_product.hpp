// Matrix products whose numbers do not depend on the thread count (issue 22: a census's shards
// run with --threads 1 must merge into what one process with the default threads writes).
// Eigen's own parallel product splits the result where its thread count says, and the rows or
// columns at a split's edge go through kernels that sum in another order: a 1000-token census
// moved by 1e-6 between --threads 1 and 2. Here the blocks are fixed by the shapes alone and
// only spread over the threads.
#pragma once

#include "core/types.hpp"

namespace attnviz {

/// Columns of w per block of split_product (a multiple of every Eigen kernel's column step).
inline constexpr long kProductBlockColumns = 256;

/// Query rows per block of the attention products (a multiple of Eigen's float row steps: 48
/// with AVX-512, 24 with AVX, 12 with SSE).
inline constexpr long kAttentionBlockRows = 192;

/// x [m, k] · w [k, n]: w's columns in fixed blocks of kProductBlockColumns, the blocks spread
/// over `threads` threads, each product by Eigen on one thread. The same bits for every
/// `threads` ≥ 1.
Matrix split_product(const Matrix& x, const Eigen::Ref<const Matrix>& w, int threads);

/// While alive, Eigen's products run on the calling thread (Eigen::setNbThreads(1)), so that a
/// product inside one of our parallel regions is never split again; restores the count after.
class OneThreadEigen {
 public:
  OneThreadEigen();
  ~OneThreadEigen();
  OneThreadEigen(const OneThreadEigen&) = delete;
  OneThreadEigen& operator=(const OneThreadEigen&) = delete;

 private:
  int budget_;
};

}  // namespace attnviz
