// Large buffers on 2 MiB pages: a raster of a few megabytes is otherwise thousands of 4 KiB page
// faults, each dear on this project's virtual machines (issue 38).
#pragma once

#include <cstddef>
#include <new>

namespace attnviz {

/// Bytes from which a block gets its own mapping on transparent huge pages (1 MiB).
inline constexpr std::size_t kHugePageBlockBytes = std::size_t{1} << 20;

/// Reserves `bytes` (>= kHugePageBlockBytes) as an anonymous mapping aligned to 2 MiB and
/// marked MADV_HUGEPAGE (Linux transparent huge pages, "madvise" mode), so that touching it costs
/// one fault per 2 MiB instead of one per 4 KiB: a 2462 × 1283 grid raster faulted 2,320 times,
/// at ~5-7 µs each here. Where the kernel offers no huge pages (THP "never", or not Linux) it
/// returns nullptr and the caller uses the ordinary heap. The smallest kept block that fits is
/// reused first (no fault, no clearing); when none fits, the kept blocks are released before a
/// new one is mapped, so that the memory held stays what is in use at once.
/// Throws std::bad_alloc when the mapping fails.
void* allocate_huge_page_block(std::size_t bytes);

/// Takes back a block of allocate_huge_page_block(bytes) (same `bytes`): kept for a later block
/// that fits in it (up to 64 MiB of blocks in all), otherwise returned to the kernel.
void free_huge_page_block(void* block, std::size_t bytes) noexcept;

/// Whether this process maps large blocks on transparent huge pages (Linux with THP "always" or
/// "madvise"); read once from /sys/kernel/mm/transparent_hugepage/enabled.
bool transparent_huge_pages_available() noexcept;

/// Bytes of freed blocks kept for reuse now (for tests and measurements).
std::size_t huge_page_bytes_kept() noexcept;

/// std::allocator for large trivially-constructed buffers (raster pixels): blocks of at least
/// kHugePageBlockBytes come from allocate_huge_page_block, smaller ones (or all, without huge
/// pages) from operator new. Stateless: every instance equals every other.
template <class T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBlockBytes)
      if (void* block = allocate_huge_page_block(bytes)) return static_cast<T*>(block);
    return static_cast<T*>(::operator new(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kHugePageBlockBytes && transparent_huge_pages_available())
      free_huge_page_block(p, bytes);
    else
      ::operator delete(p);
  }

  template <class U>
  friend bool operator==(const HugePageAllocator&, const HugePageAllocator<U>&) noexcept {
    return true;
  }
};

}  // namespace attnviz
