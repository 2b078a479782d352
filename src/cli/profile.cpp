#include "cli/profile.hpp"

#include <cstdio>
#include <ostream>

namespace attnviz {

PhaseTimer::PhaseTimer(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void PhaseTimer::lap(const std::string& phase, double moved_to_next_seconds) {
  const auto now = std::chrono::steady_clock::now();  // one reading: the phases add up to the run
  phases_.emplace_back(phase, std::chrono::duration<double>(now - start_).count() + moved_ - moved_to_next_seconds);
  moved_ = moved_to_next_seconds;
  start_ = now;
}

void PhaseTimer::print(std::ostream& err) const {
  if (!enabled_) return;
  for (const auto& [phase, seconds] : phases_) {
    char line[96];
    std::snprintf(line, sizeof line, "profile: %s %.6f s\n", phase.c_str(), seconds);
    err << line;
  }
}

}  // namespace attnviz
