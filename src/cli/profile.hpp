// --profile: wall time per pipeline phase, printed as "profile: <phase> <seconds> s".
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

/// Wall seconds from `start` to now (steady clock).
double seconds_since(std::chrono::steady_clock::time_point start);

/// Collects phase timings; prints them only when enabled.
class PhaseTimer {
 public:
  explicit PhaseTimer(bool enabled);
  /// Ends the current phase under `phase` and starts the next one. `moved_to_next_seconds` of
  /// it, work of the next phase done early and timed by the caller, count in the next phase
  /// instead (a model run draws, or formats, each layer as soon as it is computed).
  void lap(const std::string& phase, double moved_to_next_seconds = 0);
  /// One "profile: <phase> <seconds> s" line per phase, in order.
  void print(std::ostream& err) const;

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  double moved_ = 0;  // seconds the previous lap moved into the current phase
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace attnviz
