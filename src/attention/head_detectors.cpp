#include "attention/head_detectors.hpp"

#include <cassert>

namespace attnviz {

DetectionCells DetectionCells::of(const std::vector<std::int32_t>& token_ids) {
  DetectionCells cells;
  cells.n = static_cast<long>(token_ids.size());
  const auto t = [&](long i) { return token_ids[static_cast<std::size_t>(i)]; };
  for (long i = 1; i < cells.n; ++i) cells.previous.push_back({i, i - 1});
  for (long i = 0; i < cells.n; ++i) {
    for (long j = 0; j < i; ++j)
      if (t(j) == t(i)) cells.duplicate.push_back({i, j});
    for (long j = 1; j <= i; ++j)
      if (t(j - 1) == t(i)) cells.induction.push_back({i, j});
  }
  return cells;
}

std::array<std::optional<double>, 3> detection_scores(const Matrix& weights, const DetectionCells& cells) {
  assert(weights.rows() == cells.n && weights.cols() == cells.n);
  if (cells.n < 2) return {};
  // All n rows' mass, as TL's denominator, summed in double row by row (no n² copy).
  double total = 0;
  for (Eigen::Index i = 0; i < weights.rows(); ++i) total += weights.row(i).cast<double>().sum();
  return detection_scores(weights, cells, total);
}

std::array<std::optional<double>, 3> detection_scores(const Matrix& weights, const DetectionCells& cells, double total) {
  assert(weights.rows() == cells.n && weights.cols() == cells.n);
  if (cells.n < 2) return {};
  if (total <= 0) return {};  // every row fully masked: TL would divide by zero
  const auto score = [&](const std::vector<std::pair<long, long>>& list) {
    double matched = 0;
    for (const auto& [i, j] : list) matched += weights(i, j);
    return std::optional<double>(matched / total);
  };
  return {score(cells.previous), score(cells.duplicate), score(cells.induction)};
}

std::optional<double> detection_score(const Matrix& weights, const std::vector<std::int32_t>& token_ids,
                                      DetectionPattern pattern) {
  const long n = static_cast<long>(token_ids.size());
  assert(weights.rows() == n && weights.cols() == n);
  if (n < 2) return std::nullopt;
  const auto t = [&](long i) { return token_ids[static_cast<std::size_t>(i)]; };
  double matched = 0;
  // Every pattern is lower-triangular (j <= i): only that part is visited for the numerator.
  for (long i = 0; i < n; ++i) {
    switch (pattern) {
      case DetectionPattern::PreviousToken:
        if (i >= 1) matched += weights(i, i - 1);
        break;
      case DetectionPattern::DuplicateToken:
        for (long j = 0; j < i; ++j)
          if (t(j) == t(i)) matched += weights(i, j);
        break;
      case DetectionPattern::Induction:
        for (long j = 1; j <= i; ++j)
          if (t(j - 1) == t(i)) matched += weights(i, j);
        break;
    }
  }
  const double total = weights.cast<double>().sum();  // all n rows' mass, as TL's denominator
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
