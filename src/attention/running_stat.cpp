#include "attention/running_stat.hpp"

#include <cmath>

namespace attnviz {

void RunningStat::add(double x) {
  ++count;
  const double delta = x - mean;
  mean += delta / static_cast<double>(count);
  m2 += delta * (x - mean);
}

void RunningStat::merge(const RunningStat& other) {
  if (other.count == 0) return;
  if (count == 0) {
    *this = other;
    return;
  }
  const double n_a = static_cast<double>(count), n_b = static_cast<double>(other.count);
  const double n = n_a + n_b;
  const double delta = other.mean - mean;
  mean += delta * n_b / n;
  m2 += other.m2 + delta * delta * n_a * n_b / n;
  count += other.count;
}

std::optional<double> RunningStat::sample_std() const {
  if (count < 2) return std::nullopt;
  return std::sqrt(m2 / static_cast<double>(count - 1));
}

std::optional<double> RunningStat::ci95_low() const {
  if (count < 2) return std::nullopt;
  return mean - student_t_975(count - 1) * *sample_std() / std::sqrt(static_cast<double>(count));
}

std::optional<double> RunningStat::ci95_high() const {
  if (count < 2) return std::nullopt;
  return mean + student_t_975(count - 1) * *sample_std() / std::sqrt(static_cast<double>(count));
}

namespace {

// Continued fraction of the incomplete beta function (Numerical Recipes, 3rd ed., §6.4, betacf,
// modified Lentz's method).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-16) break;
  }
  return h;
}

// I_x(a, b), the regularised incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

// P(|T| > t) for Student's t with df degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
double two_sided_tail(double t, double df) { return incomplete_beta(df / 2, 0.5, df / (df + t * t)); }

}  // namespace

double student_t_975(long long df) {
  // A census asks for the same few df for every head and statistic: remembered, not re-bisected.
  thread_local long long last_df = 0;
  thread_local double last_t = 0;
  if (df == last_df) return last_t;
  const double nu = static_cast<double>(df);
  double low = 0, high = 1000;  // the tail at 1000 is below 0.05 for every df >= 1
  while (high - low > 1e-13) {
    const double mid = 0.5 * (low + high);
    if (two_sided_tail(mid, nu) > 0.05) low = mid;
    else high = mid;
  }
  last_df = df;
  last_t = 0.5 * (low + high);
  return last_t;
}

}  // namespace attnviz
