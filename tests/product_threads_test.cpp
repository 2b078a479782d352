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
