// TransformerLens's detector scores and the sink indicator on hand-computed cases (issue 22).
#include "attention/head_detectors.hpp"

#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using attnviz::test::matrix;

namespace {

// Tokens 5 7 5 5 (ids), causal weights: rows sum to 1.
const std::vector<std::int32_t> kIds = {5, 7, 5, 5};
Matrix hand_weights() {
  return matrix({{1, 0, 0, 0}, {0.6, 0.4, 0, 0}, {0.2, 0.5, 0.3, 0}, {0.1, 0.2, 0.3, 0.4}});
}

}  // namespace

TEST_CASE("head_detectors: previous_token_score divides by all n rows", "[census]") {
  // Σ a_{i,i-1} = 0.6 + 0.5 + 0.3 = 1.4; Σ A = 4 (row 0 counts in the denominator, as TL's mul metric).
  CHECK_THAT(*detection_score(hand_weights(), kIds, DetectionPattern::PreviousToken), WithinAbs(1.4 / 4, 1e-7));
}

TEST_CASE("head_detectors: duplicate_token_score sums earlier copies of the same id", "[census]") {
  // Row 2 (id 5): key 0 → 0.2. Row 3 (id 5): keys 0 and 2 → 0.1 + 0.3. (1 → 5? no: id 7.)
  CHECK_THAT(*detection_score(hand_weights(), kIds, DetectionPattern::DuplicateToken), WithinAbs((0.2 + 0.4) / 4, 1e-7));
}

TEST_CASE("head_detectors: induction_score_tl looks one past each earlier copy, the current token included", "[census]") {
  // P_ij = 1 for 1 <= j <= i with t_{j-1} = t_i. Row 2 (5): j-1 = 0 → j = 1: 0.5. Row 3 (5):
  // j-1 ∈ {0, 2} → j ∈ {1, 3}: 0.2 + 0.4 (j = 3 = i is the current token: TL counts it).
  CHECK_THAT(*detection_score(hand_weights(), kIds, DetectionPattern::Induction), WithinAbs((0.5 + 0.6) / 4, 1e-7));
}

TEST_CASE("head_detectors: token ids, not labels, decide duplicates", "[census]") {
  const std::vector<std::int32_t> distinct = {1, 2, 3, 4};
  CHECK_THAT(*detection_score(hand_weights(), distinct, DetectionPattern::DuplicateToken), WithinAbs(0.0, 1e-12));
  CHECK_THAT(*detection_score(hand_weights(), distinct, DetectionPattern::Induction), WithinAbs(0.0, 1e-12));
}

TEST_CASE("head_detectors: a one-token text has no score", "[census]") {
  CHECK_FALSE(detection_score(matrix({{1}}), {3}, DetectionPattern::PreviousToken));
  CHECK_FALSE(detection_score(matrix({{1}}), {3}, DetectionPattern::Induction));
}

TEST_CASE("head_detectors: the sink indicator is alpha_1 > epsilon, strictly", "[census]") {
  // α_1 = mean of column 0 = (1 + 0.6 + 0.2 + 0.1) / 4 = 0.475.
  const std::vector<long> rows = {0, 1, 2, 3};
  CHECK(*sink_indicator(hand_weights(), MaskMatrix(), rows, 0.3) == 1.0);
  CHECK(*sink_indicator(hand_weights(), MaskMatrix(), rows, 0.476) == 0.0);  // float32 weights: α_1 = 0.475 ± 1e-7
  CHECK(*sink_indicator(hand_weights(), MaskMatrix(), rows, 0.474) == 1.0);
  // Rows that may not see key 0 are left out of α_1: only row 0 left, weight 1.
  MaskMatrix allowed = MaskMatrix::Ones(4, 4);
  allowed.col(0).tail(3).setZero();
  CHECK(*sink_indicator(hand_weights(), allowed, rows, 0.99) == 1.0);
  allowed(0, 0) = 0;
  CHECK_FALSE(sink_indicator(hand_weights(), allowed, rows, 0.3));
}
