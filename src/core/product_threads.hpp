// Eigen's threads for one piece of work, chosen by its size (issue 22: small models must not pay
// for threads). Eigen splits any product over ~50k multiply-adds across its OpenMP threads; on a
// tiny model (stories260K: 1.4 Mflop per feed-forward) each split costs a parallel region whose
// wake-up and barrier take longer than the product, and on a machine shared with other jobs a
// worker that is not scheduled stalls the region for a time slice: a 16-token text took 0.12 s
// with the default threads against 0.01 s with --threads 1.
#pragma once

#include <Eigen/Core>
#include <algorithm>

namespace attnviz {

/// Work below which a second thread is not worth it: ~1.5 ms of one core's GEMM (the threshold
/// attention.cpp's projections use, measured on a 2-core machine shared with other jobs).
inline constexpr double kProductFlopsPerThread = 100e6;

/// Threads worth giving `work` operations out of `budget`: one per `work_per_thread` (at least
/// one, at most `budget`). The rule every parallel region of attnviz follows, so that a small
/// model's tiny regions run on the caller's thread alone instead of waking workers whose
/// start and barrier cost more than the work (and which stall a time slice when another job
/// holds the other core). work_per_thread > 0.
inline int threads_for_work(double work, int budget, double work_per_thread = kProductFlopsPerThread) {
  return std::max(1, std::min(budget, static_cast<int>(std::min(work / work_per_thread, 1e9))));
}

/// While alive, Eigen uses at most min(budget, flops / kProductFlopsPerThread) threads (at least
/// one), budget being Eigen::nbThreads() when made (--threads, default all cores). Restores the
/// budget on destruction.
class ProductThreads {
 public:
  // Eigen's thread count is one global: it is written only when it changes, so that with a
  // budget of 1 (attribute's parallel reruns set it before starting their threads) the
  // ProductThreads of concurrent passes only read it.
  explicit ProductThreads(double flops) : budget_(Eigen::nbThreads()) {
    const int threads = threads_for_work(flops, budget_);
    if (threads != budget_) Eigen::setNbThreads(threads);
  }
  ~ProductThreads() {
    if (Eigen::nbThreads() != budget_) Eigen::setNbThreads(budget_);
  }
  ProductThreads(const ProductThreads&) = delete;
  ProductThreads& operator=(const ProductThreads&) = delete;

 private:
  int budget_;
};

}  // namespace attnviz
