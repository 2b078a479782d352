// core/parallel_for: every index in exactly one block, whatever n and the thread count.
#include "core/parallel_for.hpp"

#include <atomic>
#include <vector>

#include "support/test_support.hpp"

using namespace attnviz;

TEST_CASE("parallel_for_blocks: covers indices 0 to n - 1 exactly once in contiguous blocks", "[core][parallel]") {
  const std::size_t n = GENERATE(std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1536});
  const int threads = GENERATE(0, 1, 2, 3, 64);
  INFO("n = " << n << ", threads = " << threads);
  std::vector<std::atomic<int>> visits(n);
  std::atomic<int> blocks{0};
  parallel_for_blocks(n, threads, [&](std::size_t begin, std::size_t end) {
    if (begin < end) ++blocks;
    for (std::size_t i = begin; i < end; ++i) ++visits[i];
  });
  for (std::size_t i = 0; i < n; ++i) REQUIRE(visits[i] == 1);
  // No more blocks (threads) than asked for or than indices; at least one to do any work.
  CHECK(blocks <= std::max(threads, 1));
  CHECK(blocks <= static_cast<int>(n));
  if (n > 0) CHECK(blocks >= 1);
  if (n == 1536 && threads == 2) CHECK(blocks == 2);
}
