// The maths against the hand-checked cases of tests/attention-cases.md (float64
// NumPy and PyTorch references there; tolerance 1e-6 on weights unless a case says otherwise).
#include "attention/attention.hpp"
#include "core/split_product.hpp"

#include "attention/mask.hpp"
#include "records/input_schema.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::check_matrix_near;
using attnviz::test::fixture;
using attnviz::test::matrix;

namespace {

constexpr double kTolerance = 1e-6;

AttentionResult compute(const std::string& sentence, const std::string& source = "", bool causal = false,
                        const std::string& weights = "") {
  const AttentionWants wants{true, true};
  const InputBundle in = load_inputs({fixture(sentence), weights.empty() ? "" : fixture(weights),
                                      source.empty() ? "" : fixture(source)});
  const Sentence& keys = in.keys();
  const MaskMatrix allowed = build_mask(static_cast<long>(in.queries.tokens.size()),
                                        static_cast<long>(keys.tokens.size()), causal, keys.attention_mask);
  return multi_head_attention(in.weights.layer, in.queries.embeddings, keys.embeddings, allowed, wants);
}

}  // namespace

TEST_CASE("multi_head_attention: fixture F-A weights, concat and W_O output", "[attention][golden]") {
  const AttentionResult r = compute("fa.json");
  REQUIRE(r.weights.size() == 2);
  check_matrix_near(r.weights[0], matrix({{0.00423168, 0.85056513, 0.14520318},
                                          {0.29635406, 0.10260583, 0.60104011},
                                          {0.26807470, 0.18823897, 0.54368632}}), kTolerance);
  check_matrix_near(r.weights[1], matrix({{0.16902193, 0.34279590, 0.48818217},
                                          {0.29635406, 0.60104011, 0.10260583},
                                          {0.09955862, 0.83053245, 0.06990892}}), kTolerance);
  // BH-11: token-major concat, then W_O in the row-vector layout (cyclic shift).
  check_matrix_near(r.concat, matrix({{0.14943487, 1.84633345, -0.63832048, -0.83097807},
                                      {0.89739417, 0.80625177, 0.38749647, -0.70364594},
                                      {0.81176103, 0.92016427, 0.05929941, -0.90044138}}), kTolerance);
  check_matrix_near(r.output, matrix({{-0.83097807, 0.14943487, 1.84633345, -0.63832048},
                                      {-0.70364594, 0.89739417, 0.80625177, 0.38749647},
                                      {-0.90044138, 0.81176103, 0.92016427, 0.05929941}}), kTolerance);
}

TEST_CASE("multi_head_attention: scores are QK^T/sqrt(d_k) of contiguous head blocks (BH-10)", "[attention][golden]") {
  const AttentionResult r = compute("fa.json");
  check_matrix_near(r.scores[0], matrix({{0, 5.30330086, 3.53553391},
                                         {2.12132034, 1.06066017, 2.82842712},
                                         {1.41421356, 1.06066017, 2.12132034}}), 1e-5);
  check_matrix_near(r.scores[1], matrix({{-0.70710678, 0, 0.35355339},
                                         {1.41421356, 2.12132034, 0.35355339},
                                         {1.41421356, 3.53553391, 1.06066017}}), 1e-5);
}

TEST_CASE("multi_head_attention: a fully masked query row is all zeros, never NaN (BH-01)", "[attention][golden]") {
  const AttentionResult r = compute("bh01.json", "", /*causal=*/true);
  check_matrix_near(r.weights[0], matrix({{0, 0, 0}, {0, 1, 0}, {0, 0.37043990, 0.62956010}}), kTolerance);
  check_matrix_near(r.output, matrix({{0, 0}, {1, 0}, {0.68521995, 0.62956010}}), kTolerance);
  REQUIRE(r.fully_masked_rows == std::vector<long>{0});
  CHECK(r.weights[0].allFinite());
  CHECK(r.output.allFinite());
}

TEST_CASE("multi_head_attention: logits near +-800 do not overflow (BH-02)", "[attention][golden]") {
  const Matrix expected_a = matrix({{0.50648039, 0.30719589, 0.18632372},
                                    {1.0 / 3, 1.0 / 3, 1.0 / 3},
                                    {0.18632372, 0.30719589, 0.50648039}});
  SECTION("(a) W_Q = I") {
    const AttentionResult r = compute("bh02a.json");
    check_matrix_near(r.weights[0], expected_a, kTolerance);
    // Outputs of magnitude 40 carry float32 rounding of ~40 · 6e-8 per term.
    check_matrix_near(r.output, matrix({{40, 0.32015667, 0, 0}, {40, 0, 0, 0}, {40, -0.32015667, 0, 0}}), 1e-5);
  }
  SECTION("(b) W_Q = -I mirrors the rows") {
    const AttentionResult r = compute("bh02b.json");
    check_matrix_near(r.weights[0], expected_a.rowwise().reverse(), kTolerance);
    check_matrix_near(r.output, matrix({{40, -0.32015667, 0, 0}, {40, 0, 0, 0}, {40, 0.32015667, 0, 0}}), 1e-5);
  }
}

TEST_CASE("multi_head_attention: scale is 1/sqrt(d_k) per head, not 1/sqrt(d_model) (BH-03)", "[attention][golden]") {
  const AttentionResult r = compute("bh03.json");
  check_matrix_near(r.weights[0], matrix({{0.48564771, 0.02870457, 0.48564771},
                                          {0.02870457, 0.48564771, 0.48564771},
                                          {0.05285739, 0.05285739, 0.89428521}}), kTolerance);
  check_matrix_near(r.weights[1], matrix({{0.50348984, 0.24825508, 0.24825508},
                                          {0.24825508, 0.50348984, 0.24825508},
                                          {1.0 / 3, 1.0 / 3, 1.0 / 3}}), kTolerance);
}

TEST_CASE("multi_head_attention: causal mask keeps the diagonal and the lower triangle (BH-05)", "[attention][golden]") {
  const AttentionResult r = compute("fa.json", "", /*causal=*/true);
  check_matrix_near(r.weights[0], matrix({{1, 0, 0}, {0.74281668, 0.25718332, 0}, {0.26807470, 0.18823897, 0.54368632}}),
                    kTolerance);
  check_matrix_near(r.weights[1], matrix({{1, 0, 0}, {0.33023845, 0.66976155, 0}, {0.09955862, 0.83053245, 0.06990892}}),
                    kTolerance);
  check_matrix_near(r.output, matrix({{0, 1, 0, 2},
                                      {-0.66976155, 0.74281668, 0.51436663, 0.66047690},
                                      {-0.90044138, 0.81176103, 0.92016427, 0.05929941}}), kTolerance);
  for (const Matrix& w : r.weights) {
    CHECK(w(0, 1) == 0.0f);
    CHECK(w(0, 2) == 0.0f);
    CHECK(w(1, 2) == 0.0f);
  }
}

TEST_CASE("multi_head_attention: padding masks keys only, 1 = real token (BH-06)", "[attention][golden]") {
  const AttentionResult r = compute("fa_padded.json");
  check_matrix_near(r.weights[0], matrix({{0.00495051, 0.99504949, 0}, {0.74281668, 0.25718332, 0}, {0.58747900, 0.41252100, 0}}),
                    kTolerance);
  check_matrix_near(r.weights[1], matrix({{0.33023845, 0.66976155, 0}, {0.33023845, 0.66976155, 0}, {0.10704180, 0.89295820, 0}}),
                    kTolerance);
  check_matrix_near(r.output, matrix({{-0.66976155, 0.00495051, 1.99009897, 0.66047690},
                                      {-0.66976155, 0.74281668, 0.51436663, 0.66047690},
                                      {-0.89295820, 0.58747900, 0.82504200, 0.21408360}}), kTolerance);
  CHECK(r.fully_masked_rows.empty());
}

TEST_CASE("multi_head_attention: cross-attention with different lengths (BH-08)", "[attention][golden]") {
  SECTION("2 queries x 4 keys, key 3 padded") {
    const AttentionResult r = compute("fb_queries.json", "fb_source.json");
    check_matrix_near(r.weights[0], matrix({{0.12497614, 0.51405814, 0.36096572, 0}, {0.29204592, 0.29204592, 0.41590815, 0}}),
                      kTolerance);
    check_matrix_near(r.weights[1], matrix({{0.14756762, 0.42621619, 0.42621619, 0}, {0.48818217, 0.34279590, 0.16902193, 0}}),
                      kTolerance);
    check_matrix_near(r.concat, matrix({{0.48594186, 0.87502386, 0.29513525, -0.42621619},
                                        {0.70795408, 0.70795408, 0.97636433, -0.34279590}}), kTolerance);
    check_matrix_near(r.output, matrix({{-0.42621619, 0.48594186, 0.87502386, 0.29513525},
                                        {-0.34279590, 0.70795408, 0.70795408, 0.97636433}}), kTolerance);
  }
  SECTION("unmasked F-B") {
    const AttentionResult r = compute("fb_queries.json", "fb_source_unmasked.json");
    check_matrix_near(r.weights[0], matrix({{0.10609352, 0.43638920, 0.30642748, 0.15108980},
                                            {0.24234742, 0.24234742, 0.34513158, 0.17017357}}), kTolerance);
    check_matrix_near(r.weights[1], matrix({{0.12859166, 0.37140834, 0.37140834, 0.12859166},
                                            {0.24530663, 0.17225150, 0.08493182, 0.49751005}}), kTolerance);
  }
  SECTION("lengths swapped: 4 queries x 2 keys") {
    const AttentionResult r = compute("fb_source.json", "fb_queries.json", false, "fb_queries.json");
    REQUIRE(r.weights[0].rows() == 4);
    REQUIRE(r.weights[0].cols() == 2);
    for (const Matrix& w : r.weights) check_matrix_near(w.rowwise().sum(), Matrix::Ones(4, 1), kTolerance);
  }
}

TEST_CASE("multi_head_attention: properties", "[attention]") {
  const InputBundle in = load_inputs({fixture("fa.json"), "", ""});
  const AttentionLayer& layer = in.weights.layer;
  const Matrix& x = in.queries.embeddings;
  const AttentionResult base = multi_head_attention(layer, x, x, {}, {});

  SECTION("rows sum to one and weights lie in [0, 1] (BH-14)") {
    for (const Matrix& w : base.weights) {
      check_matrix_near(w.rowwise().sum(), Matrix::Ones(3, 1), kTolerance);
      CHECK(w.minCoeff() >= 0.0f);
      CHECK(w.maxCoeff() <= 1.0f);
    }
  }
  SECTION("permuting key tokens permutes weight columns") {
    Matrix permuted = x;
    permuted.row(0) = x.row(2);
    permuted.row(2) = x.row(0);
    const AttentionResult r = multi_head_attention(layer, x, permuted, {}, {});
    for (int h = 0; h < 2; ++h) {
      Matrix expected = base.weights[h];
      expected.col(0) = base.weights[h].col(2);
      expected.col(2) = base.weights[h].col(0);
      check_matrix_near(r.weights[h], expected, kTolerance);
    }
  }
  SECTION("a single key gets weight 1") {
    const AttentionResult r = multi_head_attention(layer, x, x.topRows(1), {}, {});
    for (const Matrix& w : r.weights) check_matrix_near(w, Matrix::Ones(3, 1), 0);
  }
  SECTION("an explicit scale replaces 1/sqrt(d_k)") {
    AttentionLayer unscaled = layer;
    unscaled.scale = 1.0f;
    const AttentionResult r = multi_head_attention(unscaled, x, x, {}, {true, false});
    check_matrix_near(r.scores[0].row(0), matrix({{0, 7.5, 5}}), 1e-5);
  }
}

TEST_CASE("multi_head_attention: grouped-query attention equals repeated key/value heads", "[attention]") {
  const InputBundle in = load_inputs({fixture("fa.json"), "", ""});
  AttentionLayer gqa = in.weights.layer;  // 2 query heads sharing 1 kv head (columns 0-1)
  gqa.num_kv_heads = 1;
  gqa.w_k = in.weights.layer.w_k.leftCols(2);
  gqa.w_v = in.weights.layer.w_v.leftCols(2);
  gqa.b_k = in.weights.layer.b_k.head(2);
  gqa.b_v = in.weights.layer.b_v.head(2);
  gqa.w_o.resize(0, 0);
  gqa.b_o.resize(0);
  AttentionLayer expanded = gqa;
  expanded.num_kv_heads = 2;
  expanded.w_k.resize(4, 4);
  expanded.w_k << gqa.w_k, gqa.w_k;
  expanded.w_v.resize(4, 4);
  expanded.w_v << gqa.w_v, gqa.w_v;
  expanded.b_k.resize(4);
  expanded.b_k << gqa.b_k, gqa.b_k;
  expanded.b_v.resize(4);
  expanded.b_v << gqa.b_v, gqa.b_v;
  const Matrix& x = in.queries.embeddings;
  const AttentionResult a = multi_head_attention(gqa, x, x, {}, {false, true});
  const AttentionResult b = multi_head_attention(expanded, x, x, {}, {false, true});
  for (int h = 0; h < 2; ++h) check_matrix_near(a.weights[h], b.weights[h], 0);
  check_matrix_near(a.concat, b.concat, 0);
}

TEST_CASE("multi_head_attention: finite inputs whose scores overflow float32 are reported, never NaN",
          "[attention][errors]") {
  // Found by the fuzzer's seed tests/fuzz/regressions/seed_float_extremes.json: 3e38·3e38 = +inf.
  AttentionLayer layer;
  layer.num_heads = layer.num_kv_heads = 1;
  layer.w_q = layer.w_k = matrix({{3e38, 0}, {0, 1}});
  layer.w_v = matrix({{1, 0}, {0, 1}});
  const Matrix x = matrix({{1, 0}});
  CHECK(multi_head_attention(layer, x, x, {}, {}).overflow == "the scores of head 0 overflow");
  layer.w_q = matrix({{3e38, 0}, {0, 1}});
  const Matrix big = matrix({{10, 0}});
  CHECK(multi_head_attention(layer, big, big, {}, {}).overflow == "the projections Q, K (X·W + b) overflow");
  AttentionWants outputs;
  outputs.outputs = true;  // V is computed (and checked) only for the head outputs; here it is finite
  const AttentionResult qk = multi_head_attention(layer, big, big, {}, outputs);
  CHECK(qk.overflow == "the projections Q, K (X·W + b) overflow");
  CHECK_FALSE(qk.overflow_spares_weights);
  CHECK(multi_head_attention(layer, matrix({{1e-20, 0}}), matrix({{1e-20, 0}}), {}, {}).overflow.empty());
}

// Issue 15: only V overflows (W_Q = W_K = 1e-20, W_V = 1e20, x = 1e20): V alone is named, and
// the weights are computed without the outputs.
TEST_CASE("multi_head_attention: a V projection that overflows alone is named alone and spares the weights",
          "[attention][errors]") {
  AttentionLayer layer;
  layer.num_heads = layer.num_kv_heads = 1;
  layer.w_q = layer.w_k = matrix({{1e-20}});
  layer.w_v = matrix({{1e20}});
  const Matrix x = matrix({{1e20}});
  AttentionWants outputs;
  outputs.outputs = true;
  const AttentionResult v_only = multi_head_attention(layer, x, x, {}, outputs);
  CHECK(v_only.overflow == "the projection V (X·W_V + b_V) overflows");
  CHECK(v_only.overflow_spares_weights);
  const AttentionResult weights = multi_head_attention(layer, x, x, {}, {});
  CHECK(weights.overflow.empty());
  REQUIRE(weights.weights.size() == 1);
  CHECK(weights.weights[0](0, 0) == 1.0f);
}

namespace {

// A random layer (fixed seed): 4 query heads over 2 key/value heads of width 4, with biases
// and an output projection, as a decoder layer has them.
AttentionLayer random_gqa_layer(long d_model) {
  std::srand(7);
  const auto random = [](long rows, long cols) { return Matrix(Matrix::Random(rows, cols)); };
  AttentionLayer layer;
  layer.num_heads = 4;
  layer.num_kv_heads = 2;
  layer.w_q = random(d_model, 16);
  layer.w_k = random(d_model, 8);
  layer.w_v = random(d_model, 8);
  layer.w_o = random(16, d_model);
  layer.b_q = Vector::Random(16);
  layer.b_k = Vector::Random(8);
  layer.b_v = Vector::Random(8);
  return layer;
}

RopeRequest rope_at(long first, long m) {
  RopeRequest rope;
  rope.settings.style = RopeStyle::Half;
  for (long p = first; p < first + m; ++p) rope.query_positions.push_back(p);
  rope.key_positions = rope.query_positions;
  return rope;
}

}  // namespace

TEST_CASE("cached_self_attention: a prefix then one row at a time gives the rows of causal self-attention",
          "[attention]") {
  const long n = 7, prefix = 3, d_model = 12;
  const AttentionLayer layer = random_gqa_layer(d_model);
  const Matrix x = Matrix::Random(n, d_model);
  const AttentionWants outputs{false, true};
  const AttentionResult full = multi_head_attention(layer, x, x, build_mask(n, n, true, {}), outputs, rope_at(0, n));
  KeyValueCache cache;
  const AttentionResult first =
      cached_self_attention(layer, x.topRows(prefix), cache, build_mask(prefix, prefix, true, {}), outputs, rope_at(0, prefix));
  CHECK(cache.size() == prefix);
  check_matrix_near(first.output, full.output.topRows(prefix), 1e-6);
  for (int h = 0; h < 4; ++h) check_matrix_near(first.weights[h], full.weights[h].topLeftCorner(prefix, prefix), 1e-6);
  double worst = 0;
  for (long p = prefix; p < n; ++p) {
    const AttentionResult step = cached_self_attention(layer, x.row(p), cache, MaskMatrix(), outputs, rope_at(p, 1));
    REQUIRE(cache.size() == p + 1);
    REQUIRE(step.weights[0].cols() == p + 1);
    worst = std::max(worst, test::max_abs_diff(step.output, full.output.row(p)));
    for (int h = 0; h < 4; ++h)
      worst = std::max(worst, test::max_abs_diff(step.weights[h], full.weights[h].row(p).leftCols(p + 1)));
  }
  INFO("max |one row at a time - whole sequence| = " << worst << ", max |output| = " << full.output.cwiseAbs().maxCoeff());
  // Products over fewer rows sum in another order: measured 9.5e-7, 2 ulps of outputs up to 7.3.
  CHECK(worst <= 4e-6);
}

TEST_CASE("cached_self_attention: the cache grows past its reserved room and keeps its rows", "[attention]") {
  KeyValueCache cache(2, 3, 1);
  cache.append(matrix({{1, 2, 3}}), matrix({{4}}));
  cache.append(matrix({{5, 6, 7}, {8, 9, 10}}), matrix({{11}, {12}}));
  cache.append(matrix({{13, 14, 15}}), matrix({{16}}));
  REQUIRE(cache.size() == 4);
  check_matrix_near(cache.keys(), matrix({{1, 2, 3}, {5, 6, 7}, {8, 9, 10}, {13, 14, 15}}), 0);
  check_matrix_near(cache.values(), matrix({{4}, {11}, {12}, {16}}), 0);
}

TEST_CASE("cached_self_attention: a projection that overflows is reported and leaves the cache alone",
          "[attention][errors]") {
  AttentionLayer layer;
  layer.num_heads = layer.num_kv_heads = 1;
  layer.w_q = layer.w_k = matrix({{1}});
  layer.w_v = matrix({{1e20}});
  KeyValueCache cache;
  REQUIRE(cached_self_attention(layer, matrix({{1}}), cache, {}, {}).overflow.empty());
  CHECK(cached_self_attention(layer, matrix({{1e20}}), cache, {}, {}).overflow == "the projection V (X·W_V + b_V) overflows");
  CHECK(cache.size() == 1);
}

TEST_CASE("cached_self_attention: head by head hands on the same weights and outputs, bit for bit", "[attention][heads]") {
  // Long enough (1800 rows) that each head's rows are split over two threads.
  const long n = 1800, d_model = 12;
  const AttentionLayer layer = random_gqa_layer(d_model);
  const Matrix x = Matrix::Random(n, d_model);
  const AttentionWants outputs{false, true};
  const int budget = Eigen::nbThreads();
  Eigen::setNbThreads(2);
  KeyValueCache whole_cache, head_cache;
  const MaskMatrix causal = build_mask(n, n, true, {});
  const AttentionResult whole = cached_self_attention(layer, x, whole_cache, causal, outputs, rope_at(0, n));
  std::vector<int> order;
  std::vector<Matrix> handed(4);
  const HeadWeightsSink sink = [&](int head, Matrix& weights) {
    order.push_back(head);
    handed[static_cast<std::size_t>(head)] = std::move(weights);
  };
  const AttentionResult by_head = cached_self_attention(layer, x, head_cache, causal, outputs, rope_at(0, n), &sink);
  Eigen::setNbThreads(budget);
  CHECK(order == std::vector<int>{0, 1, 2, 3});
  CHECK(by_head.weights.empty());
  REQUIRE(whole.weights.size() == 4);
  for (int h = 0; h < 4; ++h) CHECK(handed[static_cast<std::size_t>(h)] == whole.weights[static_cast<std::size_t>(h)]);
  CHECK(by_head.output == whole.output);
  CHECK(by_head.fully_masked_rows == whole.fully_masked_rows);
}

// Issue 22: a census's shards (--threads 1) must merge into what one process with the default
// threads writes, so no number may depend on the thread count. Eigen's own split put a row
// block's edge rows through kernels that sum in another order (1e-6 apart on 1000 tokens).
TEST_CASE("attention: weights and outputs are the same bits for 1 2 and 3 threads", "[attention][heads]") {
  const long n = 1800, d_model = 12;  // long enough that each head's row blocks spread over the threads
  const AttentionLayer layer = random_gqa_layer(d_model);
  const Matrix x = Matrix::Random(n, d_model);
  const MaskMatrix causal = build_mask(n, n, true, {});
  const int budget = Eigen::nbThreads();
  std::vector<AttentionResult> by_threads;
  for (int threads : {1, 2, 3}) {
    Eigen::setNbThreads(threads);
    KeyValueCache cache;
    by_threads.push_back(cached_self_attention(layer, x, cache, causal, AttentionWants{false, true}, rope_at(0, n)));
  }
  Eigen::setNbThreads(budget);
  for (std::size_t t = 1; t < by_threads.size(); ++t) {
    CAPTURE(t + 1);
    REQUIRE(by_threads[t].weights.size() == by_threads[0].weights.size());
    for (std::size_t h = 0; h < by_threads[0].weights.size(); ++h) CHECK(by_threads[t].weights[h] == by_threads[0].weights[h]);
    CHECK(by_threads[t].output == by_threads[0].output);
  }
}

TEST_CASE("split_product: x·w in fixed column blocks, the same bits for any thread count", "[attention]") {
  const Matrix x = Matrix::Random(700, 300);
  const Matrix w = Matrix::Random(300, 1100);  // five blocks of 256 columns, the last one short
  const Matrix one = split_product(x, w, 1);
  CHECK((one - Matrix(x * w)).cwiseAbs().maxCoeff() < 1e-4);
  for (int threads : {2, 3, 8}) CHECK(split_product(x, w, threads) == one);
}
