#include "render/png_pipeline.hpp"

#include <algorithm>
#include <system_error>

#include "render/png.hpp"

namespace attnviz {

PngPipeline::PngPipeline(const FontSet& fonts, int workers) : fonts_(fonts), workers_(std::max(1, workers)) {}

PngPipeline::~PngPipeline() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  wake_workers_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void PngPipeline::make(std::size_t ticket, const PngJob& job) {
  Finished result;
  try {
    RenderedGrid grid = render_grid(job.request, fonts_);
    result.picture.bytes = encode_png(grid.image, job.destination);
    result.picture.warnings = std::move(grid.warnings);
  } catch (...) {
    result.error = std::current_exception();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (result.error) failed_ = true;
  done_.emplace(ticket, std::move(result));
}

void PngPipeline::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_workers_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    if (failed_) {  // none starts after a failure: the waiting pictures are dropped
      queue_.clear();
      space_.notify_all();
      finished_.notify_all();
      continue;
    }
    auto [ticket, job] = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    make(ticket, job);
    lock.lock();
    --busy_;
    space_.notify_all();
    finished_.notify_all();
  }
}

void PngPipeline::rethrow_first_failure(std::unique_lock<std::mutex>& lock) {
  // Jobs start in ticket order and none starts after a failure, so once nothing is being made
  // every job before the first failure has finished: the error does not depend on timing.
  space_.wait(lock, [&] { return busy_ == 0; });
  queue_.clear();
  for (const auto& [ticket, result] : done_)
    if (result.error) std::rethrow_exception(result.error);
}

std::size_t PngPipeline::submit(PngJob job) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (failed_) rethrow_first_failure(lock);
  const std::size_t ticket = next_ticket_++;
  if (workers_ > 1 && threads_.empty()) {
    try {
      for (int t = 0; t < workers_; ++t) threads_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      if (threads_.empty()) workers_ = 1;  // no thread to be had: the caller makes every picture
    }
  }
  if (threads_.empty()) {
    lock.unlock();
    make(ticket, job);
    lock.lock();
    if (failed_) rethrow_first_failure(lock);
    return ticket;
  }
  space_.wait(lock, [&] { return queue_.size() + busy_ < static_cast<std::size_t>(workers_) || failed_; });
  if (failed_) rethrow_first_failure(lock);
  queue_.emplace_back(ticket, std::move(job));
  wake_workers_.notify_one();
  return ticket;
}

RenderedPng PngPipeline::take(std::size_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait(lock, [&] { return done_.count(ticket) > 0 || (failed_ && queue_.empty() && busy_ == 0); });
  if (done_.count(ticket) == 0) rethrow_first_failure(lock);  // dropped after an earlier failure
  Finished result = std::move(done_.at(ticket));
  done_.erase(ticket);
  if (result.error) std::rethrow_exception(result.error);
  return std::move(result.picture);
}

}  // namespace attnviz
