// A one-off parallel loop on plain threads. OpenMP stays for the maths (attention.cpp), where
// regions follow each other; for a single loop between serial phases, libgomp's idle workers
// busy-wait for milliseconds afterwards and take a core from whatever runs next (issue 7,
// P1: the PNG encoders after the weights parse; 14 ms of CPU per run).
#pragma once

#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace attnviz {

/// Calls body(begin, end) on contiguous blocks covering [0, n), one block per thread, on at
/// most `threads` threads (the caller's included; fewer when the system refuses more). `body`
/// must not throw: it runs on other threads.
template <typename Body>
void parallel_for_blocks(std::size_t n, int threads, const Body& body) {
  const std::size_t workers = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1, std::max<std::size_t>(n, 1));
  const std::size_t block = (n + workers - 1) / workers;
  std::vector<std::thread> helpers;
  std::size_t begin = block;  // the caller takes [0, block)
  for (; begin < n; begin += block) {
    const std::size_t end = std::min(n, begin + block);
    try {
      helpers.emplace_back([&body, begin, end] { body(begin, end); });
    } catch (const std::system_error&) {
      break;  // no more threads: the caller does the rest
    }
  }
  body(0, std::min(n, block));
  if (begin < n) body(begin, n);
  for (std::thread& helper : helpers) helper.join();
}

}  // namespace attnviz
