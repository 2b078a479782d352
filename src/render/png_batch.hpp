// Several pictures at once: renders each grid request and encodes it as PNG, spreading whole
// pictures over worker threads (issue 7: the grid and the per-head images of one run). Each
// picture is drawn and encoded by one thread, so the bytes do not depend on the thread count.
// Does not decide what to draw and never writes files (the caller commits them atomically).
#pragma once

#include <string>
#include <vector>

#include "render/font.hpp"
#include "render/head_grid.hpp"

namespace attnviz {

/// One picture to make.
struct PngJob {
  GridRequest request;
  std::string destination;  // names the picture in errors, e.g. the path it will be written to
};

/// One finished picture.
struct RenderedPng {
  std::string bytes;                  // the PNG file, as encode_png() gives it
  std::vector<std::string> warnings;  // render_grid()'s warnings for this picture
};

/// Threads render_pngs uses for `n_jobs` pictures: min(threads, n_jobs), threads <= 0 meaning
/// one per core. That many pictures are in memory at once.
int png_workers(int threads, std::size_t n_jobs);

/// render_grid() then encode_png() for every job, on png_workers(threads, jobs) threads (threads <= 0:
/// one per core; the calling thread is one of them). Jobs are started in order, so put the
/// largest first. Each thread holds one picture's pixels at a time. Returns one result per job,
/// in job order, identical for any thread count.
/// Throws what the first failing job (in job order) threw, after every thread has stopped;
/// jobs not yet started when a job fails are skipped. With several jobs, keeps freed memory in
/// the process's heap from then on (core/heap_reuse.hpp), for the rasters job after job.
std::vector<RenderedPng> render_pngs(const std::vector<PngJob>& jobs, const FontSet& fonts,
                                     int threads);

}  // namespace attnviz
