// Head attribution (issue 20 §3): direct logit attribution's shares add up to the logit, the
// residual trace takes the forward pass apart exactly, zero-ablation leaves b_O alone, and an
// ablated rerun from a cached layer input equals a whole ablated forward pass.
#include <numeric>
#include <random>

#include "analysis/head_attribution.hpp"
#include "attention/attention.hpp"
#include "model/gguf_decoder.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using attnviz::test::data_file;

namespace {

// "Once upon a time, there was a little girl named Lily." as stories260K's tokenizer splits it.
const std::vector<std::int32_t> kIds = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426};

const DecoderModel& stories() {
  static const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(data_file("stories260k/stories260K.gguf")));
  return model;
}

ResidualTrace trace_of(const DecoderModel& model, const std::vector<std::int32_t>& ids, const HeadAblation* ablation = nullptr) {
  ResidualTrace trace;
  ForwardRequest request;
  request.token_ids = ids;
  request.trace = &trace;
  request.ablation = ablation;
  model.forward(request);
  return trace;
}

Vector random_vector(std::mt19937& random, long n) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Vector v(n);
  for (long i = 0; i < n; ++i) v(i) = normal(random);
  return v;
}

}  // namespace

TEST_CASE("head_attribution: the dla shares add up to the model's logit at every position and target", "[analysis][realdata]") {
  const long position = GENERATE(0L, 3L, 15L);
  const std::int32_t target = GENERATE(0, 261, 511);
  HeadAttributionRequest request;
  request.token_ids = kIds;
  request.position = position;
  request.target = target;
  request.ablation = false;
  const HeadAttribution a = attribute_heads(stories(), request);
  INFO("position " << position << ", target " << target << ", logit " << a.logit << ", sum " << a.dla.total());
  CHECK_THAT(a.dla.total(), WithinAbs(a.logit, 1e-4));
  REQUIRE(a.dla.heads.size() == 5);
  CHECK(a.dla.heads[0].size() == 8);
  CHECK(!a.dla.position.has_value());  // RoPE: no learned positions
}

TEST_CASE("head_attribution: the trace's parts add up to the residual, and the heads to the attention update", "[analysis][realdata]") {
  const ResidualTrace trace = trace_of(stories(), kIds);
  Vector sum = trace.embedding;
  for (std::size_t l = 0; l < trace.head_writes.size(); ++l) {
    const Vector heads = trace.head_writes[l].colwise().sum().transpose();
    attnviz::test::check_matrix_near(heads + trace.attn_bias[l], trace.attn_updates[l], 1e-5);
    sum += heads + trace.attn_bias[l] + trace.mlp_writes[l] + trace.mlp_bias[l];
  }
  attnviz::test::check_matrix_near(sum, trace.final_residual, 1e-4);
}

TEST_CASE("head_attribution: the default target is the top prediction, its log p from the real logits", "[analysis][realdata]") {
  HeadAttributionRequest request;
  request.token_ids = kIds;
  request.position = 4;  // "<s> Once upon a time" -> ","
  request.ablation = false;
  const HeadAttribution a = attribute_heads(stories(), request);
  ForwardRequest prefix;
  prefix.token_ids.assign(kIds.begin(), kIds.begin() + 5);
  const std::vector<float> logits = stories().forward(prefix);
  const auto top = static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  CHECK(a.target_id == top);
  CHECK_THAT(a.logit, WithinAbs(logits[static_cast<std::size_t>(top)], 0));
  double z = 0;
  for (const float l : logits) z += std::exp(static_cast<double>(l));
  CHECK_THAT(a.log_prob, WithinAbs(logits[static_cast<std::size_t>(top)] - std::log(z), 1e-6));
  CHECK(a.log_prob < 0);
}

TEST_CASE("head_ablation: zeroing every head of a layer leaves only b_O of the attention update", "[analysis]") {
  std::mt19937 random(7);
  AttentionLayer layer;
  layer.num_heads = 4;
  layer.num_kv_heads = 2;
  const long d_model = 8, d_k = 3;
  auto fill = [&](long rows, long cols) {
    Matrix m(rows, cols);
    for (long r = 0; r < rows; ++r) m.row(r) = random_vector(random, cols).transpose();
    return m;
  };
  layer.w_q = fill(d_model, 4 * d_k);
  layer.w_k = fill(d_model, 2 * d_k);
  layer.w_v = fill(d_model, 2 * d_k);
  layer.w_o = fill(4 * d_k, d_model);
  layer.b_o = random_vector(random, d_model);
  const Matrix x = fill(5, d_model);
  const AttentionResult clean = multi_head_attention(layer, x, x, {}, AttentionWants{false, true});
  zero_head_outputs(layer, {0, 1, 2, 3});
  const AttentionResult ablated = multi_head_attention(layer, x, x, {}, AttentionWants{false, true});
  for (long i = 0; i < x.rows(); ++i)
    for (long k = 0; k < d_model; ++k) CHECK(ablated.output(i, k) == layer.b_o(k));
  // The weights and the heads' own outputs are untouched: only what reaches W_O is zero.
  attnviz::test::check_matrix_near(ablated.weights[2], clean.weights[2], 0);
  attnviz::test::check_matrix_near(ablated.head_outputs[2], clean.head_outputs[2], 0);
  CHECK(attnviz::test::max_abs_diff(ablated.output, clean.output) > 0.1);
}

TEST_CASE("head_ablation: in the model, every head of a layer zeroed leaves that layer's attention update at b_O", "[analysis][realdata]") {
  const HeadAblation all{2, {0, 1, 2, 3, 4, 5, 6, 7}};
  const ResidualTrace trace = trace_of(stories(), kIds, &all);
  CHECK(trace.head_writes[2].isZero(0));
  // stories260K has no b_O: the update is exactly zero, and the residual leaves the block's
  // attention half unchanged.
  CHECK(trace.attn_updates[2].isZero(0));
  CHECK(!trace.attn_updates[1].isZero(0));
  CHECK(!trace.head_writes[3].isZero(0));
}

TEST_CASE("head_attribution: a rerun from the cached layer input equals a whole ablated forward pass", "[analysis][realdata]") {
  HeadAttributionRequest request;
  request.token_ids = kIds;
  const HeadAttribution a = attribute_heads(stories(), request);
  REQUIRE(a.ablation.size() == 5);
  for (const auto& [layer, head] : std::vector<std::pair<int, int>>{{0, 0}, {1, 5}, {4, 7}}) {
    const HeadAblation ablation{layer, {head}};
    ForwardRequest whole;
    whole.token_ids = kIds;
    whole.ablation = &ablation;
    const double expected = log_softmax_at(stories().forward(whole), a.target_id) - a.log_prob;
    INFO("L" << layer << "H" << head);
    CHECK_THAT(a.ablation[static_cast<std::size_t>(layer)][static_cast<std::size_t>(head)], WithinAbs(expected, 1e-5));
  }
  // Some head matters: an attribution of all zeros would pass the checks above vacuously.
  double largest = 0;
  for (const auto& layer : a.ablation)
    for (const double d : layer) largest = std::max(largest, std::abs(d));
  CHECK(largest > 1e-2);
}

TEST_CASE("head_attribution: the reruns on several threads give the one-thread numbers exactly", "[analysis][realdata]") {
  HeadAttributionRequest request;
  request.token_ids = kIds;
  const HeadAttribution one = attribute_heads(stories(), request);
  request.threads = 3;
  const HeadAttribution three = attribute_heads(stories(), request);
  CHECK(three.ablation == one.ablation);
}

TEST_CASE("logit_attribution: hand-checked shares, RMSNorm and LayerNorm", "[analysis]") {
  ResidualTrace trace;
  trace.embedding = attnviz::test::matrix({{1, 2}}).row(0).transpose();
  trace.head_writes = {attnviz::test::matrix({{0.5, 0}, {0, -1}})};
  trace.attn_bias = {attnviz::test::matrix({{0, 0}}).row(0).transpose()};
  trace.mlp_writes = {attnviz::test::matrix({{3, 3}}).row(0).transpose()};
  trace.mlp_bias = {attnviz::test::matrix({{0, 0}}).row(0).transpose()};
  trace.final_residual = attnviz::test::matrix({{4.5, 4}}).row(0).transpose();
  trace.final_norm.scale = 0.5;
  trace.final_norm.gain = attnviz::test::matrix({{2, 1}}).row(0).transpose();
  const Vector u = attnviz::test::matrix({{1, 3}}).row(0).transpose();
  SECTION("RMSNorm: share = s · Σ c_k γ_k u_k") {
    // w = 0.5 · (2·1, 1·3) = (1, 1.5)
    const LogitAttribution a = direct_logit_attribution(trace, u);
    CHECK_THAT(a.embedding, WithinAbs(1 + 3, 1e-12));
    CHECK_THAT(a.heads[0][0], WithinAbs(0.5, 1e-12));
    CHECK_THAT(a.heads[0][1], WithinAbs(-1.5, 1e-12));
    CHECK_THAT(a.mlp[0], WithinAbs(7.5, 1e-12));
    CHECK_THAT(a.total(), WithinAbs(traced_logit(trace, u), 1e-12));
  }
  SECTION("LayerNorm: centring applies to every part, a constant part gets nothing, β · u is its own share") {
    trace.final_norm.centre = true;
    trace.final_norm.bias = attnviz::test::matrix({{0.25, -1}}).row(0).transpose();
    // w = (1, 1.5) − 1.25 = (−0.25, 0.25)
    const LogitAttribution a = direct_logit_attribution(trace, u);
    CHECK_THAT(a.embedding, WithinAbs(0.25, 1e-12));
    CHECK_THAT(a.mlp[0], WithinAbs(0, 1e-12));
    CHECK_THAT(a.final_norm_bias, WithinAbs(0.25 - 3, 1e-12));
    CHECK_THAT(a.total(), WithinAbs(traced_logit(trace, u), 1e-12));
    CHECK_THAT(traced_logit(trace, u), WithinAbs(-0.125 - 2.75, 1e-12));
  }
}

TEST_CASE("residual_trace: a post-attention gain scales every head's write, b_O and the update, the MLP's bias is apart", "[analysis]") {
  AttentionLayer layer;
  layer.num_heads = 2;
  layer.num_kv_heads = 2;
  layer.w_v = Matrix::Zero(2, 2);
  layer.w_o = attnviz::test::matrix({{1, 0}, {0, 2}});  // head 0 writes its z to column 0, head 1 twice its z to column 1
  layer.b_o = attnviz::test::matrix({{0.5, 0.5}}).row(0).transpose();
  AttentionResult result;
  result.head_outputs = {attnviz::test::matrix({{9}, {3}}), attnviz::test::matrix({{9}, {4}})};  // [n = 2, d_v = 1]
  result.output = attnviz::test::matrix({{0, 0}, {3.5, 8.5}});  // concat · W_O + b_O, last row
  ResidualTrace trace;
  trace.begin(attnviz::test::matrix({{0, 0}, {1, 1}}));
  trace.enter_layer(attnviz::test::matrix({{0, 0}, {1, 1}}));
  const Vector gain = attnviz::test::matrix({{2, 10}}).row(0).transpose();
  const Vector mlp_bias = attnviz::test::matrix({{0.25, 0}}).row(0).transpose();
  // x after: 1 + 2·3.5 + MLP (1 + 0.25), 1 + 10·8.5 + MLP (−1)
  trace.leave_layer(layer, result, attnviz::test::matrix({{0, 0}, {9.25, 85}}), gain, mlp_bias);
  attnviz::test::check_matrix_near(trace.head_writes[0], attnviz::test::matrix({{6, 0}, {0, 80}}), 0);
  attnviz::test::check_matrix_near(trace.attn_bias[0], attnviz::test::matrix({{1, 5}}).transpose(), 0);
  attnviz::test::check_matrix_near(trace.attn_updates[0], attnviz::test::matrix({{7, 85}}).transpose(), 0);
  attnviz::test::check_matrix_near(trace.mlp_writes[0], attnviz::test::matrix({{1, -1}}).transpose(), 1e-6);
  attnviz::test::check_matrix_near(trace.mlp_bias[0], mlp_bias, 0);
}

TEST_CASE("residual_trace: learned positions are their own part, apart from the token embedding", "[analysis]") {
  ResidualTrace trace;
  const Matrix positions = attnviz::test::matrix({{0, 0}, {0.5, -1}});
  trace.begin(attnviz::test::matrix({{0, 0}, {2.5, 1}}), &positions);
  attnviz::test::check_matrix_near(trace.embedding, attnviz::test::matrix({{2, 2}}).transpose(), 0);
  attnviz::test::check_matrix_near(trace.position, attnviz::test::matrix({{0.5, -1}}).transpose(), 0);
  trace.final_residual = attnviz::test::matrix({{2.5, 1}}).row(0).transpose();
  trace.final_norm.gain = Vector::Ones(2);
  const Vector u = attnviz::test::matrix({{1, 1}}).row(0).transpose();
  const LogitAttribution a = direct_logit_attribution(trace, u);
  REQUIRE(a.position.has_value());
  CHECK_THAT(*a.position, WithinAbs(-0.5, 1e-12));
  CHECK_THAT(a.embedding, WithinAbs(4, 1e-12));
  CHECK_THAT(a.total(), WithinAbs(traced_logit(trace, u), 1e-12));
}

TEST_CASE("head_attribution: the dla shares add up to the logit for every family (norms, biases, positions, post-norms, caps)", "[analysis][families]") {
  const std::string family = GENERATE("qwen2", "qwen3", "mistral", "gemma2", "gemma3", "phi3", "gpt2");
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(attnviz::test::test_data_file("families/" + family + ".gguf")));
  HeadAttributionRequest request;
  request.token_ids = {1, 5, 9, 2, 7, 3};
  const HeadAttribution a = attribute_heads(model, request);
  INFO(family << ": logit " << a.logit << ", sum " << a.dla.total());
  CHECK_THAT(a.dla.total(), WithinAbs(a.logit, 1e-4));
  CHECK(a.dla.position.has_value() == (family == "gpt2"));
  CHECK(a.logit_capped.has_value() == (family == "gemma2"));
  if (a.logit_capped) CHECK(std::abs(*a.logit_capped) < std::abs(a.logit));
  REQUIRE(a.ablation.size() == a.dla.heads.size());
}
