#include "render/png_batch.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

#include "core/heap_reuse.hpp"
#include "render/png.hpp"

namespace attnviz {

int png_workers(int threads, std::size_t n_jobs) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int wanted = threads > 0 ? threads : cores;
  return static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(wanted), n_jobs));
}

std::vector<RenderedPng> render_pngs(const std::vector<PngJob>& jobs, const FontSet& fonts,
                                     int threads) {
  // Each picture's drawn cells and small rasters, freed, serve the next (rasters of 1 MiB or more
  // are kept by core/huge_page_allocator).
  if (jobs.size() > 1) keep_freed_memory_in_heap();
  std::vector<RenderedPng> results(jobs.size());
  std::vector<std::exception_ptr> errors(jobs.size());
  std::atomic<std::size_t> next_job{0};
  std::atomic<bool> failed{false};
  // Each worker takes the next job until none is left or one has failed. A job once taken is
  // finished, and every job before a failed one was taken before it, so the first failure in
  // job order always runs: the error rethrown below does not depend on timing.
  const auto work = [&] {
    while (!failed) {
      const std::size_t j = next_job++;
      if (j >= jobs.size()) break;
      try {
        RenderedGrid grid = render_grid(jobs[j].request, fonts);
        results[j].bytes = encode_png(grid.image, jobs[j].destination);
        results[j].warnings = std::move(grid.warnings);
      } catch (...) {
        errors[j] = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < png_workers(threads, jobs.size()); ++t) {
    try {
      helpers.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: fewer workers, same results
    }
  }
  work();
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return results;
}

}  // namespace attnviz
