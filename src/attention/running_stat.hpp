// A statistic over many texts kept as (count, mean, M2), so that shards of a corpus computed
// apart combine exactly (issue 22): Welford's update for one value, Chan, Golub and LeVeque's
// pairwise formula for two partial results ("Updating formulae and a pairwise algorithm for
// computing sample variances", 1979, Eq. 2.1), all in double.
#pragma once

#include <optional>

namespace attnviz {

/// count n, mean x̄ and M2 = Σ (x − x̄)² of the values seen.
struct RunningStat {
  long long count = 0;
  double mean = 0;
  double m2 = 0;

  /// Welford: n ← n + 1, δ = x − x̄, x̄ ← x̄ + δ/n, M2 ← M2 + δ·(x − x̄).
  void add(double x);
  /// Chan et al.: n = n_a + n_b, δ = x̄_b − x̄_a, x̄ = x̄_a + δ·n_b/n, M2 = M2_a + M2_b + δ²·n_a·n_b/n.
  void merge(const RunningStat& other);
  /// Sample standard deviation √(M2 / (n − 1)); nullopt when n < 2.
  std::optional<double> sample_std() const;
  /// Student-t 95% interval of the mean, x̄ ∓ t_{0.975, n−1}·s/√n; nullopt when n < 2.
  std::optional<double> ci95_low() const;
  std::optional<double> ci95_high() const;
};

/// The two-sided 95% quantile of Student's t with `df` ≥ 1 degrees of freedom, t_{0.975, df}
/// (12.706 for df = 1, 1.95996… as df → ∞), found by bisection on the regularised incomplete
/// beta function I_x(df/2, 1/2) to 1e-13 absolute.
double student_t_975(long long df);

}  // namespace attnviz
