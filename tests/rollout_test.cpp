// Attention rollout (issue 13): the hand values of the issue, masked keys, and rows that stay
// distributions (one widely copied implementation normalises over the wrong axis).
#include "attention/rollout.hpp"

#include <random>

#include "attention/mask.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using attnviz::test::matrix;

namespace {

void check_near(const Eigen::MatrixXd& actual, const Eigen::MatrixXd& expected, double tolerance) {
  REQUIRE(actual.rows() == expected.rows());
  REQUIRE(actual.cols() == expected.cols());
  for (Eigen::Index i = 0; i < actual.rows(); ++i) {
    for (Eigen::Index j = 0; j < actual.cols(); ++j) {
      INFO("entry (" << i << ", " << j << ")");
      CHECK_THAT(actual(i, j), WithinAbs(expected(i, j), tolerance));
    }
  }
}

Eigen::MatrixXd doubles(std::initializer_list<std::initializer_list<double>> rows) {
  return matrix(rows).cast<double>();
}

}  // namespace

TEST_CASE("rollout: two layers of one head over two tokens give the issue's hand values", "[rollout]") {
  // A_0 = A_1 = [[1, 0], [0.3, 0.7]]; Â = ½A + ½I = [[1, 0], [0.15, 0.85]];
  // R_1 = Â·Â = [[1, 0], [0.15 + 0.85·0.15, 0.85²]] = [[1, 0], [0.2775, 0.7225]].
  const Matrix a = matrix({{1, 0}, {0.3, 0.7}});
  Rollout rollout;
  rollout.add_layer(a, {});
  check_near(rollout.current(), doubles({{1, 0}, {0.15, 0.85}}), 1e-7);
  rollout.add_layer(a, {});
  check_near(rollout.current(), doubles({{1, 0}, {0.2775, 0.7225}}), 1e-7);
  CHECK(rollout.layers() == 2);
}

TEST_CASE("rollout: residual weight 0 is the plain product, 1 the identity", "[rollout]") {
  const Matrix a = matrix({{1, 0}, {0.3, 0.7}});
  Rollout plain(0.0), identity(1.0);
  for (int layer = 0; layer < 2; ++layer) {
    plain.add_layer(a, {});
    identity.add_layer(a, {});
  }
  check_near(plain.current(), doubles({{1, 0}, {0.3 + 0.7 * 0.3, 0.49}}), 1e-7);
  check_near(identity.current(), Eigen::MatrixXd::Identity(2, 2), 0);
}

TEST_CASE("rollout: a masked key stays exactly 0 and a fully masked row stays 0", "[rollout]") {
  // Key 2 is padding: the identity is not added on its diagonal cell, so row 2 is only
  // renormalised: (0.2, 0.3, 0) / 0.5 = (0.4, 0.6, 0).
  const MaskMatrix allowed = build_mask(3, 3, false, {1, 1, 0});
  const Matrix mean = matrix({{1, 0, 0}, {0.5, 0.5, 0}, {0.4, 0.6, 0}});
  check_near(residual_attention(mean, allowed, 0.5), doubles({{1, 0, 0}, {0.25, 0.75, 0}, {0.4, 0.6, 0}}), 1e-7);
  const MaskMatrix nothing = build_mask(2, 2, false, {0, 0});
  check_near(residual_attention(matrix({{0, 0}, {0, 0}}), nothing, 0.5), Eigen::MatrixXd::Zero(2, 2), 0);
}

TEST_CASE("rollout: every row of R sums to 1 (not every column) and the causal triangle stays 0", "[rollout]") {
  // Random causal rows over 6 tokens and 4 layers: R is lower triangular with rows summing to 1.
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> uniform(0.01, 1.0);
  const int n = 6;
  const MaskMatrix allowed = build_mask(n, n, true, {});
  Rollout rollout(0.3);
  for (int layer = 0; layer < 4; ++layer) {
    Matrix mean = Matrix::Zero(n, n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j <= i; ++j) mean(i, j) = static_cast<Scalar>(uniform(rng));
      mean.row(i) /= mean.row(i).sum();
    }
    rollout.add_layer(mean, allowed);
  }
  const Eigen::MatrixXd& r = rollout.current();
  for (int i = 0; i < n; ++i) {
    INFO("row " << i);
    CHECK_THAT(r.row(i).sum(), WithinAbs(1.0, 1e-12));
    for (int j = i + 1; j < n; ++j) CHECK(r(i, j) == 0.0);
  }
  CHECK(std::abs(r.col(0).sum() - 1.0) > 0.1);  // columns are not distributions
}
