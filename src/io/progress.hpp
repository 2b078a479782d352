// Progress of a long run on standard error (census --corpus, issue 22): on a terminal a live
// bar redrawn in place (texts done/total, tokens/s, elapsed, ETA); elsewhere one plain line
// every 10 s, with no escape codes, so a log file or a pipe reads cleanly; or nothing (--quiet).
// A few lines of our own: no library needed for one line of text.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace attnviz {

class Progress {
 public:
  /// mode: "bar", "lines" or "none" (Options::progress). `total` texts to do in this run.
  Progress(std::ostream& err, std::string mode, long total);
  /// `done` texts and `tokens` tokens so far in this run. Draws at most every 0.1 s (bar) or 10 s (lines).
  void update(long done, long long tokens);
  /// Leaves the bar's line (a newline) or prints nothing more.
  void finish();
  /// "texts 120/500 · 3400 tokens/s · elapsed 0:12 · ETA 0:38" for the given state.
  static std::string line(long done, long total, long long tokens, double seconds);

 private:
  std::ostream& err_;
  std::string mode_;
  long total_;
  std::chrono::steady_clock::time_point start_, last_;
  bool drawn_ = false;
};

}  // namespace attnviz
