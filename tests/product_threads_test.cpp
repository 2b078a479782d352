// ProductThreads (issue 22): small work runs Eigen on one thread whatever the budget, large work
// gets the budget, and the budget comes back. (A stories260K text took 12x longer with the
// default threads than with --threads 1 before the feed-forward used it; the timing is in
// scripts/bench/RESULTS.md, not asserted here.)
#include "core/product_threads.hpp"

#include "support/test_support.hpp"

using namespace attnviz;

TEST_CASE("product_threads: small work runs on one thread, large work on the budget, the budget restored", "[parallel]") {
  const int saved = Eigen::nbThreads();
  Eigen::setNbThreads(4);
  {
    const ProductThreads small(1.4e6);  // stories260K's feed-forward on 16 tokens
    CHECK(Eigen::nbThreads() == 1);
  }
  CHECK(Eigen::nbThreads() == 4);
  {
    const ProductThreads medium(2.5 * kProductFlopsPerThread);
    CHECK(Eigen::nbThreads() == 2);
  }
  {
    const ProductThreads large(1e12);
    CHECK(Eigen::nbThreads() == 4);  // never above --threads
  }
  CHECK(Eigen::nbThreads() == 4);
  Eigen::setNbThreads(saved);
}

// The rule every parallel region follows (ALTI's rows, the dump parser's rows, the overview's
// heads): a short text's work stays on the caller's thread whatever --threads allows.
TEST_CASE("product_threads: threads_for_work gives one thread per unit of work, within the budget", "[parallel]") {
  CHECK(threads_for_work(0, 8) == 1);
  CHECK(threads_for_work(2.0 * 16 * 10 * 16 * 64, 8) == 1);  // ALTI of 16 tokens, 8 heads, d_model 64
  CHECK(threads_for_work(3.5 * kProductFlopsPerThread, 8) == 3);
  CHECK(threads_for_work(3.5 * kProductFlopsPerThread, 2) == 2);
  CHECK(threads_for_work(1e30, 6) == 6);                      // no int overflow on huge work
  CHECK(threads_for_work(5e5, 4, 1 << 20) == 1);             // half a MiB of JSON rows
  CHECK(threads_for_work(3.0 * (1 << 20), 4, 1 << 20) == 3);
  CHECK(threads_for_work(1e9, 0) == 1);                       // a budget below one still runs the work
}
