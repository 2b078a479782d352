#include "attention/head_detectors.hpp"

#include <cassert>

namespace attnviz {

namespace {

bool in_pattern(const std::vector<std::int32_t>& t, long i, long j, DetectionPattern pattern) {
  switch (pattern) {
    case DetectionPattern::PreviousToken: return j == i - 1;
    case DetectionPattern::DuplicateToken: return j < i && t[static_cast<std::size_t>(j)] == t[static_cast<std::size_t>(i)];
    case DetectionPattern::Induction:
      return j >= 1 && j <= i && t[static_cast<std::size_t>(j - 1)] == t[static_cast<std::size_t>(i)];
  }
  return false;
}

}  // namespace

std::optional<double> detection_score(const Matrix& weights, const std::vector<std::int32_t>& token_ids,
                                      DetectionPattern pattern) {
  const long n = static_cast<long>(token_ids.size());
  assert(weights.rows() == n && weights.cols() == n);
  if (n < 2) return std::nullopt;
  double matched = 0, total = 0;
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < n; ++j) {
      const double a = weights(i, j);
      total += a;
      if (in_pattern(token_ids, i, j, pattern)) matched += a;
    }
  }
  if (total <= 0) return std::nullopt;  // every row fully masked: TL would divide by zero
  return matched / total;
}

std::optional<double> sink_indicator(const Matrix& weights, const MaskMatrix& allowed, const std::vector<long>& rows,
                                     double epsilon) {
  double sum = 0;
  long seen = 0;
  for (long i : rows) {
    if (allowed.size() != 0 && allowed(i, 0) == 0) continue;
    sum += weights(i, 0);
    ++seen;
  }
  if (seen == 0) return std::nullopt;
  return sum / static_cast<double>(seen) > epsilon ? 1.0 : 0.0;
}

}  // namespace attnviz
