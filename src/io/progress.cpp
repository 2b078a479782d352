#include "io/progress.hpp"

#include <cmath>
#include <cstdio>

namespace attnviz {

namespace {

constexpr double kBarSeconds = 0.1;    // a terminal redraws at most ten times a second
constexpr double kLineSeconds = 10.0;  // a log gets one line every ten seconds
constexpr int kBarWidth = 24;          // characters of the bar itself

std::string clock_text(double seconds) {
  const long s = static_cast<long>(std::lround(seconds));
  char buffer[32];
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buffer, sizeof buffer, "%ld:%02ld", s / 60, s % 60);
  return buffer;
}

}  // namespace

Progress::Progress(std::ostream& err, std::string mode, long total)
    : err_(err), mode_(std::move(mode)), total_(total), start_(std::chrono::steady_clock::now()), last_(start_) {}

std::string Progress::line(long done, long total, long long tokens, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
  std::string text = "texts " + std::to_string(done) + "/" + std::to_string(total) + " \u00B7 " +
                     std::to_string(std::lround(rate)) + " tokens/s \u00B7 elapsed " + clock_text(seconds);
  if (done > 0 && done < total)
    text += " \u00B7 ETA " + clock_text(seconds / static_cast<double>(done) * static_cast<double>(total - done));
  return text;
}

void Progress::update(long done, long long tokens) {
  if (mode_ == "none") return;
  const auto now = std::chrono::steady_clock::now();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  const bool bar = mode_ == "bar";
  if (bar ? since_last < kBarSeconds && done < total_ : since_last < kLineSeconds) return;
  last_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  if (bar) {
    const int filled = total_ > 0 ? static_cast<int>(kBarWidth * done / total_) : kBarWidth;
    // \r returns to the line's start and ESC[K clears what a longer previous line left.
    err_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#') << std::string(static_cast<std::size_t>(kBarWidth - filled), '.')
         << "] " << line(done, total_, tokens, seconds) << "\x1b[K" << std::flush;
    drawn_ = true;
  } else {
    err_ << "attnviz: census: " << line(done, total_, tokens, seconds) << "\n" << std::flush;
  }
}

void Progress::finish() {
  if (drawn_) err_ << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace attnviz
