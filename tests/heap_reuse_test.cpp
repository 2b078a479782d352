// core/heap_reuse: freed blocks below 32 MiB stay in the heap for the next layer (issue 20 speed).
#include "core/heap_reuse.hpp"

#include <cstdlib>

#include "support/test_support.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace attnviz;

// GCC says __SANITIZE_ADDRESS__; clang before 15 only answers __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define ATTNVIZ_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNVIZ_TEST_ASAN 1
#endif
#endif

TEST_CASE("keep_freed_memory_in_heap: a 24 MiB block comes from the heap and stays there once freed", "[measures]") {
  // AddressSanitizer replaces glibc's malloc (mallopt and mallinfo2 say nothing of its heap): the
  // check runs in the Release build only.
#if defined(__GLIBC__) && !defined(ATTNVIZ_TEST_ASAN)
  keep_freed_memory_in_heap();
  constexpr std::size_t kBytes = 24u << 20;  // above glibc's default thresholds (128 KiB, dynamic up to 32 MiB)
  const std::size_t mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(kBytes);
  REQUIRE(block != nullptr);
  static_cast<volatile char*>(block)[kBytes - 1] = 1;
  CHECK(mallinfo2().hblkhd == mapped_before);  // not a fresh mmap
  std::free(block);
  CHECK(mallinfo2().arena >= kBytes);  // not trimmed back to the kernel
#else
  WARN("glibc's heap is not in use here (another libc, or AddressSanitizer's allocator): not checked");
#endif
}
