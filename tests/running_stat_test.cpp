// RunningStat (issue 22): Welford's update and Chan et al.'s merge against a two-pass
// computation, merging in any grouping, and Student-t quantiles against published tables.
#include "attention/running_stat.hpp"

#include <cmath>
#include <vector>

#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

const std::vector<double> kValues = {0.31, 0.02, 1e-9, 0.97, 0.5, 0.5, 0.12345678901234, 0.88, 0.41, 0.0, 0.66, 0.73, 1.0};

// Two-pass mean and M2 in long double: the values everything else is held to.
std::pair<double, double> two_pass(const std::vector<double>& xs) {
  long double sum = 0;
  for (double x : xs) sum += x;
  const long double mean = sum / xs.size();
  long double m2 = 0;
  for (double x : xs) m2 += (x - mean) * (x - mean);
  return {static_cast<double>(mean), static_cast<double>(m2)};
}

}  // namespace

TEST_CASE("running_stat: Welford's mean and M2 equal a two-pass computation", "[census]") {
  RunningStat r;
  for (double x : kValues) r.add(x);
  const auto [mean, m2] = two_pass(kValues);
  CHECK(r.count == static_cast<long long>(kValues.size()));
  CHECK_THAT(r.mean, WithinRel(mean, 1e-14));
  CHECK_THAT(r.m2, WithinRel(m2, 1e-13));
  CHECK_THAT(*r.sample_std(), WithinRel(std::sqrt(m2 / (kValues.size() - 1)), 1e-13));
}

TEST_CASE("running_stat: merging parts in any order equals one pass (Chan et al.)", "[census]") {
  RunningStat whole;
  for (double x : kValues) whole.add(x);
  // Strided shards, as --shard K/N makes them, merged in two orders and with an empty part.
  for (int shards : {2, 3, 5}) {
    std::vector<RunningStat> parts(static_cast<std::size_t>(shards) + 1);  // the last stays empty
    for (std::size_t i = 0; i < kValues.size(); ++i) parts[i % static_cast<std::size_t>(shards)].add(kValues[i]);
    RunningStat forward, backward;
    for (const RunningStat& p : parts) forward.merge(p);
    for (auto p = parts.rbegin(); p != parts.rend(); ++p) backward.merge(*p);
    for (const RunningStat* merged : {&forward, &backward}) {
      CHECK(merged->count == whole.count);
      CHECK_THAT(merged->mean, WithinRel(whole.mean, 1e-14));
      CHECK_THAT(merged->m2, WithinRel(whole.m2, 1e-12));
    }
  }
}

TEST_CASE("running_stat: fewer than two values have no std or interval", "[census]") {
  RunningStat r;
  CHECK_FALSE(r.sample_std());
  r.add(0.4);
  CHECK_FALSE(r.sample_std());
  CHECK_FALSE(r.ci95_low());
  CHECK_FALSE(r.ci95_high());
  r.add(0.6);
  // n = 2: s = √0.02, t_{0.975,1} = tan(0.475π), half width t·s/√2 = t/10.
  CHECK_THAT(*r.ci95_low(), WithinAbs(0.5 - 1.2706204736174696, 1e-11));
  CHECK_THAT(*r.ci95_high(), WithinAbs(0.5 + 1.2706204736174696, 1e-11));
}

TEST_CASE("running_stat: Student-t 0.975 quantiles match the tables", "[census]") {
  // Exact for df = 1 (Cauchy: tan(0.475π)) and df = 2 (0.95 / √(2·0.975·0.025)); scipy.stats.t.ppf(0.975, df)
  // for the others (itself good to ~1e-9).
  CHECK_THAT(student_t_975(1), WithinAbs(12.706204736174696, 1e-10));
  CHECK_THAT(student_t_975(2), WithinAbs(0.95 / std::sqrt(2 * 0.975 * 0.025), 1e-11));
  CHECK_THAT(student_t_975(10), WithinAbs(2.2281388519649385, 1e-8));
  CHECK_THAT(student_t_975(30), WithinAbs(2.0422724563012373, 1e-8));
  CHECK_THAT(student_t_975(1000000), WithinAbs(1.9599663568141066, 1e-8));
}
