// Rasters on 2 MiB pages (issue 38): large blocks are mapped apart and kept for reuse, small
// ones come from the heap, and the pixels an Image holds do not depend on where they live.
#include "core/huge_page_allocator.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "render/image.hpp"

using attnviz::HugePageAllocator;

TEST_CASE("huge page allocator: a large block is 2 MiB-aligned and reused once freed", "[core]") {
  HugePageAllocator<std::uint8_t> allocator;
  const std::size_t bytes = 3 * attnviz::kHugePageBlockBytes + 12345;
  std::uint8_t* block = allocator.allocate(bytes);
  REQUIRE(block != nullptr);
  block[0] = 1;
  block[bytes - 1] = 2;  // the whole block is writable
  if (!attnviz::transparent_huge_pages_available()) {
    allocator.deallocate(block, bytes);
    SUCCEED("no transparent huge pages on this machine: the heap serves every block");
    return;
  }
  CHECK(reinterpret_cast<std::uintptr_t>(block) % (std::size_t{2} << 20) == 0);
  allocator.deallocate(block, bytes);
  // The same size class (rounded up to 2 MiB) takes the kept block: no new mapping, no faults.
  std::uint8_t* again = allocator.allocate(bytes + 1000);
  CHECK(again == block);
  allocator.deallocate(again, bytes + 1000);
}

TEST_CASE("huge page allocator: a kept block serves a smaller one, and a larger one releases it first", "[core]") {
  if (!attnviz::transparent_huge_pages_available()) {
    SUCCEED("no transparent huge pages on this machine: the heap serves every block");
    return;
  }
  HugePageAllocator<std::uint8_t> allocator;
  const std::size_t mib = std::size_t{1} << 20;
  std::uint8_t* grid = allocator.allocate(9 * mib);  // a grid raster: 10 MiB mapped
  allocator.deallocate(grid, 9 * mib);
  const std::size_t kept = attnviz::huge_page_bytes_kept();
  CHECK(kept >= 10 * mib);
  std::uint8_t* head = allocator.allocate(3 * mib / 2);  // a head's raster takes the kept grid's block
  CHECK(head == grid);
  CHECK(attnviz::huge_page_bytes_kept() == kept - 10 * mib);
  allocator.deallocate(head, 3 * mib / 2);  // kept as the 10 MiB block it is
  CHECK(attnviz::huge_page_bytes_kept() == kept);
  // Nothing kept fits 40 MiB: the kept blocks go back to the kernel before 40 MiB are mapped, so
  // the memory held is what is in use (the --max-memory bound of tests/limits_test.py).
  std::uint8_t* larger = allocator.allocate(40 * mib);
  CHECK(attnviz::huge_page_bytes_kept() == 0);
  larger[40 * mib - 1] = 1;
  allocator.deallocate(larger, 40 * mib);
  CHECK(attnviz::huge_page_bytes_kept() == 40 * mib);
}

TEST_CASE("huge page allocator: blocks under 1 MiB come from the heap", "[core]") {
  HugePageAllocator<int> allocator;
  int* small = allocator.allocate(1000);
  for (int i = 0; i < 1000; ++i) small[i] = i;
  CHECK(small[999] == 999);
  allocator.deallocate(small, 1000);
  CHECK(HugePageAllocator<int>() == HugePageAllocator<char>());
}

TEST_CASE("huge page allocator: an image on kept pages starts as its background", "[core][render]") {
  // A large raster freed with pixels drawn on it, then one of the same size: the new one must not
  // show the old one's pixels (reused blocks are not zeroed by the kernel).
  const attnviz::Rgb background{250, 251, 252};
  {
    attnviz::Image first(1000, 700, background);
    first.fill_rect({0, 0, 1000, 700}, attnviz::Rgb{1, 2, 3});
  }
  const attnviz::Image second(1000, 700, background);
  CHECK(second.at(0, 0) == background);
  CHECK(second.at(999, 699) == background);
  CHECK(second.at(500, 350) == background);
}
