// Statistics of `compare` on hand-computed inputs (issue #4) and BH-12's mean over heads.
#include "attention/head_stats.hpp"

#include <cmath>

#include "attention/mask.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using attnviz::test::check_matrix_near;
using attnviz::test::matrix;

TEST_CASE("head_stats: a one-hot row has entropy 0 and a uniform row ln n", "[stats]") {
  const Matrix w = matrix({{1, 0, 0, 0}, {0.25, 0.25, 0.25, 0.25}});
  const HeadStats s = head_statistics({w}, {}, {0, 1}, false).front();
  CHECK_THAT(s.entropy_min, WithinAbs(0.0, 1e-12));
  CHECK_THAT(s.entropy_max, WithinAbs(std::log(4.0), 1e-7));
  CHECK_THAT(s.entropy_mean, WithinAbs(std::log(4.0) / 2, 1e-7));
  CHECK_THAT(*s.entropy_normalised_mean, WithinAbs(0.5, 1e-7));
  CHECK_THAT(s.max_weight_mean, WithinAbs((1 + 0.25) / 2, 1e-7));
  CHECK(s.argmax_keys == std::vector<long>{0, 0});
  CHECK_FALSE(s.mean_distance.has_value());
}

TEST_CASE("head_stats: positional statistics of self-attention", "[stats]") {
  // Row 0 on itself, row 1 on the previous token, row 2 split between itself and token 0.
  const Matrix w = matrix({{1, 0, 0}, {1, 0, 0}, {0.5, 0, 0.5}});
  const HeadStats s = head_statistics({w}, {}, {0, 1, 2}, true).front();
  CHECK_THAT(*s.mean_distance, WithinAbs((0 + 1 + 0.5 * 2) / 3.0, 1e-7));
  CHECK_THAT(*s.diagonal_mass, WithinAbs((1 + 0 + 0.5) / 3.0, 1e-7));
  CHECK_THAT(*s.previous_mass, WithinAbs((1 + 0) / 2.0, 1e-7));
  CHECK_THAT(*s.first_token_mass, WithinAbs((1 + 1 + 0.5) / 3.0, 1e-7));
}

TEST_CASE("head_stats: fully masked rows are skipped, entropy is normalised by the keys a row may see", "[stats]") {
  const MaskMatrix allowed = build_mask(3, 3, true, {0, 1, 1});  // row 0 sees nothing (BH-01)
  const Matrix w = matrix({{0, 0, 0}, {0, 1, 0}, {0, 0.5, 0.5}});
  const std::vector<long> rows = rows_for_statistics(3, allowed, {});
  REQUIRE(rows == std::vector<long>{1, 2});
  const HeadStats s = head_statistics({w}, allowed, rows, true).front();
  CHECK(s.argmax_keys == std::vector<long>{-1, 1, 1});
  CHECK_THAT(s.entropy_mean, WithinAbs(std::log(2.0) / 2, 1e-7));
  CHECK_THAT(*s.entropy_normalised_mean, WithinAbs(1.0, 1e-7));  // row 1 sees one key: left out; row 2: ln2/ln2
  CHECK_THAT(*s.diagonal_mass, WithinAbs((1 + 0.5) / 2, 1e-7));
}

// Found by a hostile tester: a row that sees one key has H/ln k = 0/0 and was counted as 0,
// pulling a uniform head's mean below 1; with one token previous-token mass read 0, not undefined.
TEST_CASE("head_stats: a uniform causal head has H/ln k exactly 1 over the rows that see two keys or more", "[stats]") {
  const MaskMatrix allowed = build_mask(4, 4, true, {1, 1, 1, 1});
  const Matrix w = matrix({{1, 0, 0, 0}, {0.5, 0.5, 0, 0}, {1.0 / 3, 1.0 / 3, 1.0 / 3, 0}, {0.25, 0.25, 0.25, 0.25}});
  const HeadStats s = head_statistics({w}, allowed, rows_for_statistics(4, allowed, {}), true).front();
  REQUIRE(s.entropy_normalised_mean);
  CHECK_THAT(*s.entropy_normalised_mean, WithinAbs(1.0, 1e-7));  // rows 1..3; with row 0 as 0 it read 0.75
  CHECK_THAT(*s.previous_mass, WithinAbs((0.5 + 1.0 / 3 + 0.25) / 3, 1e-7));
}

TEST_CASE("head_stats: with one token H/ln k and previous-token mass are undefined, not 0", "[stats]") {
  const MaskMatrix allowed = build_mask(1, 1, true, {1});
  const HeadStats s = head_statistics({matrix({{1}})}, allowed, {0}, true).front();
  CHECK_FALSE(s.entropy_normalised_mean.has_value());
  CHECK_FALSE(s.previous_mass.has_value());
  CHECK_THAT(*s.diagonal_mass, WithinAbs(1.0, 1e-12));  // defined: the one row sees itself
  CHECK_THAT(*s.first_token_mass, WithinAbs(1.0, 1e-12));
}

TEST_CASE("head_stats: rows a file gave all zeros are left out, as are rows with no allowed key", "[stats]") {
  CHECK(rows_for_statistics(3, {}, {1}) == std::vector<long>{0, 2});
  CHECK(rows_for_statistics(2, build_mask(2, 2, false, {0, 0}), {}).empty());
}

TEST_CASE("head_stats: Jensen-Shannon divergence is 0 for identical heads, ln 2 for disjoint ones, symmetric",
          "[stats]") {
  const Matrix a = matrix({{1, 0}, {0.5, 0.5}});
  const Matrix b = matrix({{0, 1}, {0.5, 0.5}});
  const Eigen::MatrixXd d = head_divergence_matrix({a, a, b}, {0, 1});
  CHECK_THAT(d(0, 1), WithinAbs(0.0, 1e-12));
  CHECK_THAT(d(0, 2), WithinAbs(std::log(2.0) / 2, 1e-9));  // row 0 disjoint (ln 2), row 1 identical (0)
  CHECK(d(2, 0) == d(0, 2));
  CHECK(d(1, 1) == 0.0);
  Eigen::RowVectorXd p(2), q(2);
  p << 0.9, 0.1;
  q << 0.5, 0.5;
  const double expected = 0.5 * (0.9 * std::log(0.9 / 0.7) + 0.1 * std::log(0.1 / 0.3)) +
                          0.5 * (0.5 * std::log(0.5 / 0.7) + 0.5 * std::log(0.5 / 0.3));
  CHECK_THAT(js_divergence(p, q), WithinAbs(expected, 1e-12));
}

TEST_CASE("head_stats: the mean over heads is the element-wise mean of F-A's heads (BH-12)", "[stats][golden]") {
  const Matrix h0 = matrix({{0.00423168, 0.85056513, 0.14520318},
                            {0.29635406, 0.10260583, 0.60104011},
                            {0.26807470, 0.18823897, 0.54368632}});
  const Matrix h1 = matrix({{0.16902193, 0.34279590, 0.48818217},
                            {0.29635406, 0.60104011, 0.10260583},
                            {0.09955862, 0.83053245, 0.06990892}});
  check_matrix_near(mean_over_heads({h0, h1}), matrix({{0.08662681, 0.59668052, 0.31669268},
                                                       {0.29635406, 0.35182297, 0.35182297},
                                                       {0.18381666, 0.50938571, 0.30679762}}), 1e-7);
}

TEST_CASE("head_stats: induction score is the weight on the token after an earlier copy", "[stats]") {
  // "a b c a b": query 3 (a) had a at 0, so key 1; query 4 (b) had b at 1, so key 2.
  const Tokens tokens = {"a", "b", "c", "a", "b"};
  const Matrix w = matrix({{1, 0, 0, 0, 0},
                           {0.5, 0.5, 0, 0, 0},
                           {0.2, 0.3, 0.5, 0, 0},
                           {0.1, 0.6, 0.1, 0.2, 0},
                           {0.1, 0.1, 0.5, 0.2, 0.1}});
  const std::optional<double> score = induction_score(w, tokens, {0, 1, 2, 3, 4});
  REQUIRE(score.has_value());
  CHECK_THAT(*score, WithinAbs((0.6 + 0.5) / 2, 1e-7));
  // Only rows in `rows` count.
  CHECK_THAT(*induction_score(w, tokens, {0, 1, 2, 4}), WithinAbs(0.5, 1e-7));
}

TEST_CASE("head_stats: induction score skips the token itself and texts without repeats", "[stats]") {
  // "a a a": query 1's earlier copy is at 0, whose successor is query 1 itself: not counted;
  // query 2 has copies at 0 and 1: key 1 counts (key 2 is itself).
  const Matrix w = matrix({{1, 0, 0}, {0.4, 0.6, 0}, {0.2, 0.3, 0.5}});
  CHECK_THAT(*induction_score(w, {"a", "a", "a"}, {0, 1, 2}), WithinAbs(0.3, 1e-7));
  CHECK_FALSE(induction_score(w, {"a", "b", "c"}, {0, 1, 2}).has_value());
}
