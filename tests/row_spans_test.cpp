// The spans of allowed keys that the softmax and the head statistics read (issue 22, census
// speed): outside a row's span every weight is 0, so reading only the span must give the
// numbers a whole-row computation in double gives.
#include <cmath>
#include <random>

#include "attention/head_stats.hpp"
#include "attention/mask.hpp"
#include "attention/row_spans.hpp"
#include "attention/softmax.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

// allowed(i, j) = 1 for i − window < j ≤ i (window 0: causal), optionally with a hole at key `hole`.
MaskMatrix banded(long n, long window, long hole = -1) {
  MaskMatrix m = MaskMatrix::Zero(n, n);
  for (long i = 0; i < n; ++i)
    for (long j = 0; j <= i; ++j)
      if ((window == 0 || j > i - window) && j != hole) m(i, j) = 1;
  return m;
}

Matrix random_scores(long n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  Matrix s(n, n);
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) s(i, j) = normal(rng);
  return s;
}

// The masked softmax in double over whole rows (Vaswani et al. eq. 1 with −inf logits).
Eigen::MatrixXd softmax_reference(const Matrix& s, const MaskMatrix& allowed) {
  Eigen::MatrixXd w = Eigen::MatrixXd::Zero(s.rows(), s.cols());
  for (long i = 0; i < s.rows(); ++i) {
    double top = -INFINITY, sum = 0;
    for (long j = 0; j < s.cols(); ++j)
      if (allowed(i, j)) top = std::max(top, static_cast<double>(s(i, j)));
    for (long j = 0; j < s.cols(); ++j)
      if (allowed(i, j)) sum += w(i, j) = std::exp(s(i, j) - top);
    if (sum > 0) w.row(i) /= sum;
  }
  return w;
}

}  // namespace

TEST_CASE("row_spans: first and last allowed key per row, filled unless a row has a hole", "[softmax]") {
  const RowSpans causal = RowSpans::of(banded(4, 0), 4, 4);
  CHECK(causal.filled);
  CHECK(causal.spans == std::vector<std::pair<long, long>>{{0, 0}, {0, 1}, {0, 2}, {0, 3}});
  const RowSpans window = RowSpans::of(banded(4, 2), 4, 4);
  CHECK(window.filled);
  CHECK(window.spans == std::vector<std::pair<long, long>>{{0, 0}, {0, 1}, {1, 2}, {2, 3}});
  const RowSpans holed = RowSpans::of(banded(4, 0, 1), 4, 4);
  CHECK_FALSE(holed.filled);
  CHECK(holed.spans == std::vector<std::pair<long, long>>{{0, 0}, {0, 0}, {0, 2}, {0, 3}});
  MaskMatrix none = MaskMatrix::Zero(2, 3);
  none(1, 2) = 1;
  const RowSpans empty_row = RowSpans::of(none, 2, 3);
  CHECK(empty_row.spans[0].first > empty_row.spans[0].second);  // no allowed key
  CHECK(empty_row.spans[1] == std::pair<long, long>{2, 2});
  CHECK(RowSpans::of(MaskMatrix(), 2, 5).spans == std::vector<std::pair<long, long>>{{0, 4}, {0, 4}});
}

TEST_CASE("softmax over spans: every row length and mask equals the whole-row softmax in double, zeros outside",
          "[softmax]") {
  // 40 and 300 keys: rows shorter than one 16-key chunk, rows of several chunks and a tail.
  for (long n : {5L, 40L, 300L}) {
    for (long window : {0L, 7L, 33L}) {
      for (long hole : {-1L, 3L}) {
        CAPTURE(n, window, hole);
        const MaskMatrix allowed = banded(n, window, hole);
        const Matrix s = random_scores(n, static_cast<unsigned>(n + window));
        Matrix w = s;
        softmax_rows_in_place(w, allowed);
        const Eigen::MatrixXd expected = softmax_reference(s, allowed);
        CHECK((w.cast<double>() - expected).cwiseAbs().maxCoeff() < 1e-6);
        for (long i = 0; i < n; ++i)
          for (long j = 0; j < n; ++j)
            if (!allowed(i, j)) REQUIRE(w(i, j) == 0.0f);
        // Row blocks (one head's rows split over threads) give the same bits.
        Matrix blocks = s;
        softmax_rows_in_place(blocks.middleRows(0, n / 2), allowed, 0);
        softmax_rows_in_place(blocks.middleRows(n / 2, n - n / 2), allowed, n / 2);
        CHECK(blocks == w);
      }
    }
  }
}

TEST_CASE("head statistics over spans equal a whole-row computation in double", "[stats]") {
  for (long n : {3L, 40L, 300L}) {
    for (long window : {0L, 9L}) {
      CAPTURE(n, window);
      const MaskMatrix allowed = banded(n, window);
      Matrix w = random_scores(n, static_cast<unsigned>(7 * n + window));
      softmax_rows_in_place(w, allowed);
      const std::vector<long> rows = rows_for_statistics(n, allowed, {});
      const HeadStats s = head_statistics(w, StatisticRows::of(allowed, rows, n), true);
      // The definitions (docs/analysis.md) over whole rows, in double.
      double entropy = 0, normalised = 0, top = 0, distance = 0, diagonal = 0, previous = 0, first = 0, mass = 0;
      long several = 0;
      for (long i = 0; i < n; ++i) {
        double h = 0, row_max = 0;
        long keys = 0, argmax = 0;
        for (long j = 0; j < n; ++j) {
          const double p = w(i, j);
          if (p > 0) h -= p * std::log(p);
          if (p > row_max) row_max = p, argmax = j;
          distance += p * std::abs(static_cast<double>(i - j));
          mass += p;
          keys += allowed(i, j) ? 1 : 0;
        }
        CHECK(s.argmax_keys[static_cast<std::size_t>(i)] == argmax);
        entropy += h;
        if (keys > 1) normalised += h / std::log(static_cast<double>(keys)), ++several;
        top += row_max;
        diagonal += w(i, i);
        if (i > 0) previous += w(i, i - 1);
        first += w(i, 0);
      }
      const double rows_n = static_cast<double>(n);
      CHECK_THAT(s.entropy_mean, WithinRel(entropy / rows_n, 1e-6));
      if (several > 0) CHECK_THAT(*s.entropy_normalised_mean, WithinRel(normalised / static_cast<double>(several), 1e-6));
      CHECK_THAT(s.max_weight_mean, WithinRel(top / rows_n, 1e-6));
      CHECK_THAT(*s.mean_distance, WithinRel(distance / rows_n, 1e-6));
      CHECK_THAT(*s.diagonal_mass, WithinRel(diagonal / rows_n, 1e-12));
      CHECK_THAT(*s.previous_mass, WithinRel(previous / (rows_n - 1), 1e-12));
      CHECK_THAT(*s.first_token_mass, WithinRel(first / rows_n, 1e-12));
      CHECK_THAT(s.mass, WithinRel(mass, 1e-6));
    }
  }
}
