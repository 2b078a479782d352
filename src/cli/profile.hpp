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
  /// Ends the current phase under `phase` and starts the next one.
  void lap(const std::string& phase);
  /// One "profile: <phase> <seconds> s" line per phase, in order.
  void print(std::ostream& err) const;

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace attnviz
