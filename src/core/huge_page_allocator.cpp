#include "core/huge_page_allocator.hpp"

#include <cstdint>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attnviz {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

// Freed blocks are kept for the next block that fits in one: a run makes its pictures one after
// another at a few sizes (a head, a grid), and a kept block costs neither a fault nor the kernel's
// clearing of 2 MiB pages (7% of the README run's CPU when every picture mapped afresh). Only
// memory that was in use is kept, up to kKeptBytes, and a block that none of them fits releases
// them all before it is mapped: the peak is what is in use at once, as with the heap (the
// --max-memory checks of tests/limits_test.py hold it).
constexpr std::size_t kKeptBytes = std::size_t{64} << 20;

struct Blocks {
  std::mutex mutex;
  std::multimap<std::size_t, void*> kept;  // mapped size → freed block
  std::size_t kept_bytes = 0;
  std::map<void*, std::size_t> lent;       // block in use → its mapped size
};

Blocks& blocks() {
  static Blocks* all = new Blocks;  // never destroyed: blocks may be freed at exit
  return *all;
}

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

bool read_thp_setting() {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // "always [madvise] never": the bracketed word is the setting.
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(file, text);
  return text.find("[always]") != std::string::npos || text.find("[madvise]") != std::string::npos;
#else
  return false;
#endif
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
// A fresh mapping of `size` bytes (a multiple of 2 MiB) starting on a 2 MiB boundary.
void* map_aligned(std::size_t size) {
  // Over-reserve by one huge page so that an aligned start exists, then give back the slack.
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = round_up(start, kHugePage);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t tail = start + size + kHugePage - (aligned + size);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* block = reinterpret_cast<void*>(aligned);
  madvise(block, size, MADV_HUGEPAGE);  // advice only: without it the block still works
  return block;
}
#endif

}  // namespace

bool transparent_huge_pages_available() noexcept {
  static const bool available = [] {
    try {
      return read_thp_setting();
    } catch (...) {
      return false;
    }
  }();
  return available;
}

std::size_t huge_page_bytes_kept() noexcept {
  Blocks& all = blocks();
  const std::lock_guard<std::mutex> lock(all.mutex);
  return all.kept_bytes;
}

void* allocate_huge_page_block(std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (!transparent_huge_pages_available()) return nullptr;
  const std::size_t size = round_up(bytes, kHugePage);
  Blocks& all = blocks();
  const std::lock_guard<std::mutex> lock(all.mutex);
  void* block = nullptr;
  std::size_t mapped = size;
  if (const auto fit = all.kept.lower_bound(size); fit != all.kept.end()) {  // the smallest that fits
    mapped = fit->first;
    block = fit->second;
    all.kept.erase(fit);
    all.kept_bytes -= mapped;
  } else {
    for (const auto& [kept_size, kept_block] : all.kept) munmap(kept_block, kept_size);
    all.kept.clear();
    all.kept_bytes = 0;
    block = map_aligned(size);
  }
  try {
    all.lent.emplace(block, mapped);
  } catch (...) {
    munmap(block, mapped);
    throw;
  }
  return block;
#else
  (void)bytes;
  return nullptr;
#endif
}

void free_huge_page_block(void* block, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  Blocks& all = blocks();
  const std::lock_guard<std::mutex> lock(all.mutex);
  std::size_t mapped = round_up(bytes, kHugePage);
  if (const auto it = all.lent.find(block); it != all.lent.end()) {
    mapped = it->second;
    all.lent.erase(it);
  }
  if (all.kept_bytes + mapped <= kKeptBytes) {
    try {
      all.kept.emplace(mapped, block);
      all.kept_bytes += mapped;
      return;
    } catch (const std::bad_alloc&) {  // no room to note it: give it back instead
    }
  }
  munmap(block, mapped);
#else
  (void)block;
  (void)bytes;
#endif
}

}  // namespace attnviz
