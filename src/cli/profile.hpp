// --profile: wall time per pipeline phase, printed as "profile: <phase> <seconds> s".
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace attnviz {

/// Collects phase timings; prints them only when enabled.
class PhaseTimer {
 public:
  explicit PhaseTimer(bool enabled);
  /// Ends the current phase under `phase` and starts the next one. `set_aside_seconds` of it,
  /// timed separately and recorded with add(), are not counted in `phase`.
  void lap(const std::string& phase, double set_aside_seconds = 0);
  /// Records `seconds` of work timed by the caller, as the next phase (a model dump's JSON
  /// formatting, done layer by layer inside the compute phase).
  void add(const std::string& phase, double seconds);
  /// One "profile: <phase> <seconds> s" line per phase, in order.
  void print(std::ostream& err) const;

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace attnviz
