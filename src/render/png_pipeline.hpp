// Pictures made beside the work that produces them (issue 38): a model run hands each head's
// picture, and each layer's grid, to a pipeline as it comes, and worker threads draw and encode
// them (render_grid, then encode_png: mostly zlib's deflate) while the forward pass goes on and
// while the next pictures are handed in. At most `workers` pictures wait or are being made at
// once, each holding one head's cells, so the bound of issue 23 holds: one head held per thread.
// With one worker the caller's thread makes each picture in submit() and no thread is started.
// Each picture is made by one thread, so its bytes do not depend on the thread count.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "render/font.hpp"
#include "render/png_batch.hpp"

namespace attnviz {

class PngPipeline {
 public:
  /// `fonts` must outlive the pipeline; `workers` threads (at least one) make the pictures
  /// (png_workers() of --threads gives the usual count). Rasters of a megabyte or more sit on
  /// huge pages and are reused picture after picture (core/huge_page_allocator.hpp).
  PngPipeline(const FontSet& fonts, int workers);
  /// Stops the workers after the pictures being made; pictures waiting or not taken are dropped.
  ~PngPipeline();
  PngPipeline(const PngPipeline&) = delete;
  PngPipeline& operator=(const PngPipeline&) = delete;

  /// The fonts every picture is drawn with.
  const FontSet& fonts() const { return fonts_; }
  /// The most pictures in memory at once.
  int workers() const { return workers_; }

  /// Queues `job` and returns its ticket; first waits while `workers` pictures are waiting or
  /// being made. Once a picture has failed, later jobs are not made: submit waits for the
  /// pictures being made and rethrows the first failure in submission order (what render_pngs
  /// would throw for the same jobs).
  std::size_t submit(PngJob job);

  /// The picture of `ticket`, waiting for it; each ticket is taken once. Rethrows what making
  /// it threw (render_grid's or encode_png's errors).
  RenderedPng take(std::size_t ticket);

 private:
  struct Finished {
    RenderedPng picture;
    std::exception_ptr error;
  };
  void work();
  void make(std::size_t ticket, const PngJob& job);  // stores the result; requires: no lock held
  void rethrow_first_failure(std::unique_lock<std::mutex>& lock);

  const FontSet& fonts_;
  int workers_;
  std::vector<std::thread> threads_;  ///< started at the first submit, when workers_ > 1
  std::mutex mutex_;
  std::condition_variable wake_workers_, space_, finished_;
  std::deque<std::pair<std::size_t, PngJob>> queue_;
  std::map<std::size_t, Finished> done_;
  std::size_t busy_ = 0;         ///< pictures being made
  std::size_t next_ticket_ = 0;
  bool failed_ = false;
  bool stop_ = false;
};

}  // namespace attnviz
