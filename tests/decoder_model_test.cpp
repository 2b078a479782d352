// The whole stories260K forward pass from its GGUF files against llama.cpp's own attention
// and an independent float64 forward pass (tests/data/stories260k/quantized/reference),
// and incremental greedy decoding against full forward passes (stories260K and a random model
// with Q/K/V biases).
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "model/block_pieces.hpp"
#include "model/gguf_decoder.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::data_file;
using attnviz::test::test_data_file;

namespace {

const std::vector<std::int32_t> kSentenceIds = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298,
                                                315, 421, 395, 317, 426, 338, 401, 396, 267, 337, 410,
                                                408, 419, 292, 411, 322, 265, 282, 295, 433, 426};

nlohmann::json reference(const std::string& name) {
  return nlohmann::json::parse(attnviz::test::read_file(test_data_file("stories260k/quantized/reference/" + name)));
}

// Runs every layer of `model_path` on the sentence; returns [layer] -> blocks, and the logits.
// exact: Q8_0 weights decoded to float32 (--exact-matmul) instead of llama.cpp's Q8_0 products.
std::vector<AttentionBlock> run_all_layers(const std::string& model_path, std::vector<float>* logits = nullptr, bool exact = false) {
  DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(model_path));
  model.set_quantized_matmul(!exact);
  std::vector<AttentionBlock> blocks;
  const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
  ForwardRequest request;
  request.token_ids = kSentenceIds;
  request.tokens.assign(kSentenceIds.size(), "t");
  request.sink = &sink;
  std::vector<float> last = model.forward(request);
  if (logits) *logits = std::move(last);
  return blocks;
}

// Largest |ours - theirs| over attention[layer][head][query][key].
double worst_attention_difference(const std::vector<AttentionBlock>& blocks, const nlohmann::json& theirs) {
  double worst = 0;
  for (const AttentionBlock& block : blocks) {
    const auto& layer = theirs["attention"][std::to_string(block.layer)];
    for (int h = 0; h < block.record.num_heads; ++h)
      for (int q = 0; q < 32; ++q)
        for (int k = 0; k < 32; ++k)
          worst = std::max(worst, std::abs(layer[h][q][k].get<double>() - block.record.weights[static_cast<std::size_t>(h)](q, k)));
  }
  return worst;
}

// Greedy decoding as it was before the key/value caches: a full forward pass over the whole
// sequence for every new token. The reference for generate().
std::vector<std::int32_t> greedy_by_full_forward(const DecoderModel& model, std::vector<std::int32_t> ids, int count,
                                                 std::int32_t eos) {
  for (int added = 0; added < count; ++added) {
    if (model.config().context_length > 0 && static_cast<long>(ids.size()) >= model.config().context_length) break;
    ForwardRequest request;
    request.token_ids = ids;
    const std::vector<float> logits = model.forward(request);
    ids.push_back(static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
    if (ids.back() == eos) break;
  }
  return ids;
}

// Largest logit differences over `steps` greedy steps from `ids`, each step run by extend()
// and by a full forward pass over the same sequence; CHECKs that both pick the same token.
struct StepDifference {
  double absolute = 0;  ///< max |incremental - full|
  double relative = 0;  ///< max over steps of that step's max |incremental - full| / max |full|
};
StepDifference worst_step_logit_difference(const DecoderModel& model, std::vector<std::int32_t> ids, int steps) {
  std::vector<KeyValueCache> caches;
  std::vector<std::int32_t> pending = ids;
  StepDifference worst;
  for (int step = 0; step < steps; ++step) {
    const std::vector<float> incremental = model.extend(caches, pending);
    ForwardRequest request;
    request.token_ids = ids;
    const std::vector<float> full = model.forward(request);
    REQUIRE(incremental.size() == full.size());
    double difference = 0, scale = 0;
    for (std::size_t i = 0; i < full.size(); ++i) {
      difference = std::max(difference, static_cast<double>(std::abs(incremental[i] - full[i])));
      scale = std::max(scale, static_cast<double>(std::abs(full[i])));
    }
    worst.absolute = std::max(worst.absolute, difference);
    worst.relative = std::max(worst.relative, difference / scale);
    const auto pick = [](const std::vector<float>& l) { return std::max_element(l.begin(), l.end()) - l.begin(); };
    CHECK(pick(incremental) == pick(full));
    ids.push_back(static_cast<std::int32_t>(pick(full)));
    pending = {ids.back()};
  }
  return worst;
}

// The incremental logits are float32 sums taken in another order (one-row products, keys
// computed a row at a time), so they differ from the full pass by a few units in the last
// place of the largest logit: measured 1.1e-5 on stories260K's logits of about 20 (6.6e-7 of
// the largest), 10x below how far either lies from the float64 reference (< 1e-4 above).
// Bound: 2e-6 of the largest logit, about 16 ulps.
constexpr double kStepRelativeTolerance = 2e-6;

// Random weights in memory (normal / sqrt(fan_in), fixed seed; norms' gains near 1) for the
// settings no model file in the repository has: Q/K/V biases (Qwen2's layout) with
// grouped-query attention, partial rotate-half RoPE and a tied output layer.
class RandomWeights : public WeightSource {
 public:
  explicit RandomWeights(const DecoderConfig& c) {
    const long q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
    add("token_embd.weight", c.n_vocab, c.d_model, 1.0f);
    add("output_norm.weight", c.d_model, 0, 1.0f);
    for (int l = 0; l < c.num_layers; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      add(b + "attn_norm.weight", c.d_model, 0, 1.0f);
      add(b + "attn_q.weight", q_width, c.d_model, 1.0f);
      add(b + "attn_k.weight", kv_width, c.d_model, 1.0f);
      add(b + "attn_v.weight", kv_width, c.d_model, 1.0f);
      add(b + "attn_q.bias", q_width, 0, 0.5f);
      add(b + "attn_k.bias", kv_width, 0, 0.5f);
      add(b + "attn_v.bias", kv_width, 0, 0.5f);
      add(b + "attn_output.weight", c.d_model, q_width, 1.0f);
      add(b + "ffn_norm.weight", c.d_model, 0, 1.0f);
      add(b + "ffn_gate.weight", c.d_ff, c.d_model, 1.0f);
      add(b + "ffn_up.weight", c.d_ff, c.d_model, 1.0f);
      add(b + "ffn_down.weight", c.d_model, c.d_ff, 1.0f);
    }
  }
  Matrix matrix(const std::string& name, long, long) const override { return tensors_.at(name); }
  Vector vector(const std::string& name, long) const override {
    const Matrix& m = tensors_.at(name);
    return Eigen::Map<const Vector>(m.data(), m.size());
  }
  bool has(const std::string& name) const override { return tensors_.count(name) != 0; }
  std::vector<std::int64_t> shape(const std::string& name) const override {
    const auto it = shapes_.find(name);
    return it == shapes_.end() ? std::vector<std::int64_t>{} : it->second;
  }
  std::string describe(const std::string& name) const override { return "random weights: tensor " + name; }
  /// Sets the first entry of tensor `name` (a NaN or a huge weight, as a damaged file has).
  void poison(const std::string& name, float value) { tensors_.at(name).data()[0] = value; }

 private:
  // rows x cols (cols == 0: a vector of rows values, 1 + noise for gains), scaled by `spread`.
  void add(const std::string& name, long rows, long cols, float spread) {
    std::normal_distribution<float> normal(0.0f, spread / std::sqrt(static_cast<float>(std::max(cols, 1L))));
    Matrix m(cols == 0 ? 1 : rows, cols == 0 ? rows : cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(random_);
    if (cols == 0 && name.find("norm") != std::string::npos) m.array() = 1.0f + 0.1f * m.array();
    tensors_[name] = m;
    shapes_[name] = cols == 0 ? std::vector<std::int64_t>{rows} : std::vector<std::int64_t>{rows, cols};
  }
  std::mt19937 random_{20240611};
  std::map<std::string, Matrix> tensors_;
  std::map<std::string, std::vector<std::int64_t>> shapes_;
};

DecoderModel random_biased_model(long context_length, const std::string& poisoned = "", float poison = 0) {
  DecoderConfig c;
  c.file = "random.gguf";
  c.architecture = "llama";
  c.name = "random-qkv-bias";
  c.num_layers = 3;
  c.d_model = 24;
  c.num_heads = 6;
  c.num_kv_heads = 2;
  c.d_k = 4;
  c.d_ff = 40;
  c.n_vocab = 50;
  c.context_length = context_length;
  c.rope.style = RopeStyle::Half;
  c.rope.dim = 2;
  c.qkv_bias = true;
  c.tied_output = true;
  auto weights = std::make_unique<RandomWeights>(c);
  if (!poisoned.empty()) weights->poison(poisoned, poison);
  return DecoderModel(c, std::move(weights));
}

}  // namespace

TEST_CASE("stories260K F32 GGUF: every layer's attention matches llama.cpp and the float64 reference", "[model][realdata]") {
  std::vector<float> logits;
  const std::vector<AttentionBlock> blocks = run_all_layers(data_file("stories260k/stories260K.gguf"), &logits);
  REQUIRE(blocks.size() == 5);
  CHECK(blocks[4].layer == 4);
  CHECK(blocks[0].record.num_heads == 8);
  CHECK(blocks[0].record.num_kv_heads == 4);
  CHECK(blocks[0].record.causal);
  const double vs_llamacpp = worst_attention_difference(blocks, reference("llamacpp-attn-F32.json"));
  const nlohmann::json pyref = reference("pyref-attn-F32.json");
  const double vs_pyref = worst_attention_difference(blocks, pyref);
  INFO("max |attnviz - llama.cpp| = " << vs_llamacpp << ", max |attnviz - float64| = " << vs_pyref);
  CHECK(vs_llamacpp < 1e-5);
  CHECK(vs_pyref < 1e-5);
  REQUIRE(logits.size() == 512);
  double worst_logit = 0;
  for (std::size_t i = 0; i < 512; ++i) worst_logit = std::max(worst_logit, std::abs(pyref["last_logits"][i].get<double>() - logits[i]));
  INFO("max |logit difference| = " << worst_logit);
  CHECK(worst_logit < 1e-4);
}

// llama.cpp's own F16 and BF16 runs differ from its F32 run by 2.2e-3 and 1.4e-2: its CPU
// products convert the activations to the weights' type. So do attnviz's (model/ggml_products),
// which halves the gap (1.0e-3 and 8.0e-3 when it multiplied the unrounded activations); what is
// left is not found yet (docs/models.md "Quantized products").
TEST_CASE("stories260K F16 and BF16 GGUF copies stay within llama.cpp's own rounding of them", "[model][realdata]") {
  const std::vector<std::pair<const char*, double>> bounds = {{"F16", 1.5e-3}, {"BF16", 1e-2}};
  for (const auto& [type, bound] : bounds) {
    const auto blocks = run_all_layers(test_data_file(std::string("stories260k/quantized/stories260K-") + type + ".gguf"));
    const double worst = worst_attention_difference(blocks, reference(std::string("llamacpp-attn-") + type + ".json"));
    INFO(type << ": max |attnviz - llama.cpp| = " << worst);
    CHECK(worst < bound);
  }
}

TEST_CASE("stories260K: greedy decoding from BOS writes the reference sentence", "[model][realdata]") {
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(data_file("stories260k/stories260K.gguf")));
  std::vector<std::int32_t> ids = {1};
  CHECK(model.generate(ids, 31, 2) == 31);
  CHECK(ids == kSentenceIds);  // the sentence is the model's own greedy continuation of BOS
}

TEST_CASE("decoder: a token id outside the vocabulary is refused", "[model]") {
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(data_file("stories260k/stories260K.gguf")));
  ForwardRequest request;
  request.token_ids = {1, 512};
  CHECK_THROWS_WITH(model.forward(request), "token id 512 (position 1) is outside the vocabulary of 512 tokens");
}

// Quantized copies. By default every tensor multiplies as llama.cpp's does (activations converted
// to the weight type's vec_dot_type: Q8_0 for q4_0, q5_0, q8_0; float16 for the f16 ffn_down);
// with --exact-matmul every tensor is dequantized exactly, as the float64 reference pyref-attn-<T> does.
//
// The Q4_K_M copy (q5_0, q8_0, an f16 ffn_down) equals llama.cpp's in layers 0 and 1 and then
// leaves it (1.9e-3 in layer 2, 1.4e-2 in layer 4): attnviz's float32 arithmetic is not llama.cpp's
// to the last bit everywhere (its q5_0 kernel adds each block's 8 partial sums as separate float
// lanes, attnviz whole blocks; softmax, RoPE), and once in some ten thousand values a last-bit
// difference moves an activation across an 8-bit rounding step of the next product
// (docs/models.md, "Quantized products"). Held to what it is, so that a change either way shows.
TEST_CASE("stories260K quantized GGUF copies: attention against the float64 reference and llama.cpp", "[model][realdata]") {
  struct Case {
    const char* type;
    bool has_pyref;
    int matching_layers;  // layers 0 … n−1 within 5e-5 of llama.cpp
    double worst;         // bound over every layer
  };
  for (const Case& c : {Case{"Q8_0", true, 5, 5e-5}, Case{"Q4_0", true, 5, 5e-5}, Case{"Q4_K_M", false, 2, 2e-2}}) {
    const auto blocks = run_all_layers(test_data_file(std::string("stories260k/quantized/stories260K-") + c.type + ".gguf"));
    REQUIRE(blocks.size() == 5);
    const auto theirs = reference(std::string("llamacpp-attn-") + c.type + ".json");
    const std::vector<AttentionBlock> matching(blocks.begin(), blocks.begin() + c.matching_layers);
    const double in_matching = worst_attention_difference(matching, theirs);
    const double vs_llamacpp = worst_attention_difference(blocks, theirs);
    INFO(c.type << ": max |attnviz - llama.cpp| = " << in_matching << " in layers 0-" << c.matching_layers - 1 << ", "
                << vs_llamacpp << " in all");
    CHECK(in_matching < 5e-5);  // 2.4e-6 measured (2.6e-2 before issue 32)
    CHECK(vs_llamacpp < c.worst);
    if (c.has_pyref) {
      const auto exact = run_all_layers(test_data_file(std::string("stories260k/quantized/stories260K-") + c.type + ".gguf"), nullptr, true);
      const double vs_pyref = worst_attention_difference(exact, reference(std::string("pyref-attn-") + c.type + ".json"));
      INFO(c.type << ": max |attnviz - float64 reference| = " << vs_pyref);
      CHECK(vs_pyref < 1e-5);
    }
  }
}

TEST_CASE("stories260K Q8_0: greedy decoding from BOS starts as the F32 model's does", "[model][realdata]") {
  const DecoderModel q8 = decoder_from_gguf(std::make_shared<const GgufFile>(test_data_file("stories260k/quantized/stories260K-Q8_0.gguf")));
  std::vector<std::int32_t> ids = {1};
  q8.generate(ids, 10, 2);
  CHECK(ids == std::vector<std::int32_t>(kSentenceIds.begin(), kSentenceIds.begin() + 11));
}

TEST_CASE("stories260K: incremental decoding's logits match a full forward pass at every step", "[model][realdata]") {
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(data_file("stories260k/stories260K.gguf")));
  const StepDifference worst = worst_step_logit_difference(model, {1}, 31);
  INFO("over 31 steps: max |incremental - full forward| logit = " << worst.absolute << ", relative to the largest logit "
                                                                  << worst.relative);
  CHECK(worst.relative <= kStepRelativeTolerance);
  std::vector<std::int32_t> ids = {1};
  model.generate(ids, 31, 2);
  CHECK(ids == greedy_by_full_forward(model, {1}, 31, 2));
}

TEST_CASE("decoder: incremental decoding with Q/K/V biases and grouped-query attention equals full forward passes", "[model]") {
  const DecoderModel model = random_biased_model(0);
  const std::vector<std::int32_t> prompt = {1, 7, 30, 12};
  const StepDifference worst = worst_step_logit_difference(model, prompt, 20);
  INFO("over 20 steps: max |incremental - full forward| logit = " << worst.absolute << ", relative to the largest logit "
                                                                  << worst.relative);
  CHECK(worst.relative <= kStepRelativeTolerance);
  std::vector<std::int32_t> ids = prompt;
  CHECK(model.generate(ids, 20, -1) == 20);
  CHECK(ids == greedy_by_full_forward(model, prompt, 20, -1));
}

TEST_CASE("decoder: greedy decoding stops at the context length and after EOS", "[model]") {
  const std::vector<std::int32_t> prompt = {1, 7, 30};
  SECTION("the context length") {
    const DecoderModel model = random_biased_model(10);
    std::vector<std::int32_t> ids = prompt;
    CHECK(model.generate(ids, 20, -1) == 7);
    CHECK(ids.size() == 10);
    CHECK(ids == greedy_by_full_forward(model, prompt, 20, -1));
    std::vector<std::int32_t> full(10, 1);
    CHECK(model.generate(full, 5, -1) == 0);
  }
  SECTION("EOS: the first time the chosen id comes, it is kept and decoding stops") {
    const DecoderModel model = random_biased_model(0);
    const std::vector<std::int32_t> free_run = greedy_by_full_forward(model, prompt, 8, -1);
    const std::int32_t eos = free_run[prompt.size() + 4];
    const auto first = std::find(free_run.begin() + static_cast<long>(prompt.size()), free_run.end(), eos);
    const int expected = static_cast<int>(first - free_run.begin()) - static_cast<int>(prompt.size()) + 1;
    std::vector<std::int32_t> ids = prompt;
    CHECK(model.generate(ids, 8, eos) == expected);
    CHECK(ids.back() == eos);
    CHECK(ids == std::vector<std::int32_t>(free_run.begin(), first + 1));
  }
  // Issue 25: GGUF's EOS and EOT, or config.json's list of eos_token_id, all stop it.
  SECTION("several end tokens: decoding stops after the first of them that comes") {
    const DecoderModel model = random_biased_model(0);
    const std::vector<std::int32_t> free_run = greedy_by_full_forward(model, prompt, 8, -1);
    const std::vector<std::int32_t> ends = {free_run[prompt.size() + 5], free_run[prompt.size() + 2]};
    const auto first = std::find_first_of(free_run.begin() + static_cast<long>(prompt.size()), free_run.end(), ends.begin(), ends.end());
    std::vector<std::int32_t> ids = prompt;
    CHECK(model.generate(ids, 8, ends) == static_cast<int>(first - free_run.begin()) - static_cast<int>(prompt.size()) + 1);
    CHECK(ids == std::vector<std::int32_t>(free_run.begin(), first + 1));
    std::vector<std::int32_t> unstopped = prompt;
    CHECK(model.generate(unstopped, 8, std::vector<std::int32_t>{}) == 8);
  }
  SECTION("nothing asked, nothing run") {
    const DecoderModel model = random_biased_model(0);
    std::vector<std::int32_t> none;
    CHECK(model.generate(none, 0, -1) == 0);
    CHECK_THROWS_WITH(model.generate(none, 1, -1), "no token ids to run the model on");
  }
}

TEST_CASE("decoder: NaN or huge weights are an error naming the file and where, never NaN logits "
          "(bug: dump --logits wrote a bare nan, invalid JSON, and --generate picked token 0)", "[model][errors]") {
  struct Case {
    std::string tensor;
    float value;
    std::string says;
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Case c = GENERATE_COPY(
      Case{"output_norm.weight", nan, "the last position's logits are not finite"},
      Case{"blk.2.ffn_down.weight", nan, "layer 2: the residual stream after the feed-forward is not finite"},
      Case{"blk.1.ffn_up.weight", 3e38f, "layer 2: RMSNorm: the mean square of row"},  // huge, still finite
      Case{"token_embd.weight", 1e36f, "layer 0: RMSNorm: the mean square of row 0"},
      Case{"blk.0.attn_q.weight", nan, "layer 0: the projection Q (X·W_Q + b_Q) overflows float32 (|x| > 3.4e38, or NaN): blk.0.attn_*"});
  CAPTURE(c.tensor);
  const DecoderModel model = random_biased_model(0, c.tensor, c.value);
  ForwardRequest request;
  request.token_ids = {0, 1, 2};  // token 0's embedding holds the poisoned first entry of token_embd
  CHECK_THROWS_WITH(model.forward(request), Catch::Contains("random.gguf: ") && Catch::Contains(c.says));
  std::vector<std::int32_t> ids = {0, 1};
  CHECK_THROWS_AS(model.generate(ids, 3, -1), InputError);
  CHECK(ids.size() == 2);
}

// Issue 25: the decoder families and the CTranslate2 transformer share the dense layer, the MLP
// and the residual step (model/block_pieces); hand values in float32 and float64.
TEST_CASE("block pieces: x·W + b, act(x·W1 + b1)·W2 + b2, and the pre- and post-norm residual steps", "[model][pieces]") {
  Matrix x(2, 2);
  x << 1, -2, 3, 0.5f;
  Matrix w(2, 2);
  w << 1, 0, 1, 2;
  Vector b(2);
  b << 0.5f, -1;
  Matrix expected(2, 2);
  expected << -0.5f, -5, 4, 0;  // [1 − 2 + 0.5, −4 − 1], [3 + 0.5 + 0.5, 1 − 1]
  CHECK(affine(x, w, b) == expected);
  CHECK(affine(x, w, Vector()) == x * w);
  const auto relu = [](Matrix h) { return Matrix(h.cwiseMax(0.0f)); };
  Matrix relu_then(2, 2);
  relu_then << 0, 0, 4, 0;
  CHECK(mlp(x, w, b, relu, Matrix(Matrix::Identity(2, 2)), Vector()) == relu_then);
  // Pre: x + f(N(x)); Post: N(x + f(x)), with N = doubling and f = adding one.
  WideMatrix y = WideMatrix::Constant(1, 2, 1.0);
  const auto twice = [](const WideMatrix& v) { return WideMatrix(2.0 * v); };
  const auto plus_one = [](const WideMatrix& v) { return WideMatrix(v.array() + 1.0); };
  residual_sublayer(y, NormPlacement::Pre, twice, plus_one);
  CHECK(y == WideMatrix::Constant(1, 2, 4.0));  // 1 + (2·1 + 1)
  residual_sublayer(y, NormPlacement::Post, twice, plus_one);
  CHECK(y == WideMatrix::Constant(1, 2, 18.0));  // 2·(4 + 5)
}

TEST_CASE("stories260K: head by head, every head's weights and the logits are the whole layer's, bit for bit", "[model][heads]") {
  std::vector<float> whole_logits;
  const std::vector<AttentionBlock> whole = run_all_layers(data_file("stories260k/stories260K.gguf"), &whole_logits);
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(data_file("stories260k/stories260K.gguf")));
  std::vector<std::vector<Matrix>> heads(whole.size());
  std::vector<std::size_t> blocks_without_weights;
  const HeadSink head_sink = [&](const AttentionBlock& block, int head, Matrix& weights) {
    CHECK(block.record.weights.empty());
    CHECK(block.record.query_tokens.size() == kSentenceIds.size());
    REQUIRE(static_cast<int>(heads[static_cast<std::size_t>(block.layer)].size()) == head);
    heads[static_cast<std::size_t>(block.layer)].push_back(std::move(weights));
  };
  const BlockSink sink = [&](AttentionBlock&& block) { blocks_without_weights.push_back(block.record.weights.size()); };
  ForwardRequest request;
  request.token_ids = kSentenceIds;
  request.tokens.assign(kSentenceIds.size(), "t");
  request.sink = &sink;
  request.head_sink = &head_sink;
  CHECK(model.forward(request) == whole_logits);
  CHECK(blocks_without_weights == std::vector<std::size_t>(whole.size(), 0));
  for (std::size_t l = 0; l < whole.size(); ++l) {
    REQUIRE(heads[l].size() == whole[l].record.weights.size());
    for (std::size_t h = 0; h < heads[l].size(); ++h) CHECK(heads[l][h] == whole[l].record.weights[h]);
  }
}

// Issue 22: a census keeps a small model's decoded weights across its texts; the numbers must
// not change, from the pass that fills the cache to the passes that read it.
TEST_CASE("decoder: kept decoded weights give the same attention and logits, bit for bit", "[model]") {
  DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(data_file("stories260k/stories260K.gguf")));
  const auto run = [&](std::vector<AttentionBlock>& blocks) {
    blocks.clear();
    const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
    ForwardRequest request;
    request.token_ids = kSentenceIds;
    request.tokens.assign(kSentenceIds.size(), "t");
    request.sink = &sink;
    return model.forward(request);
  };
  std::vector<AttentionBlock> decoded_each_time, filling, kept;
  const std::vector<float> logits = run(decoded_each_time);
  CHECK_FALSE(model.keep_decoded_weights(1000));  // stories260K's layers take ~1 MB
  REQUIRE(model.keep_decoded_weights(64.0 * 1024 * 1024));
  CHECK(run(filling) == logits);
  CHECK(run(kept) == logits);
  REQUIRE(kept.size() == decoded_each_time.size());
  for (std::size_t l = 0; l < kept.size(); ++l)
    for (std::size_t h = 0; h < kept[l].record.weights.size(); ++h)
      CHECK(kept[l].record.weights[h] == decoded_each_time[l].record.weights[h]);
}

// Issue 22 (census speed): without logits nothing reads the residual stream after the last
// selected layer's attention, so the pass stops there. The weights it hands on are the full
// pass's, bit for bit; the layers after it, and its own feed-forward, never run (poisoned here:
// a full pass throws on them).
TEST_CASE("decoder: a pass without logits stops at the last selected layer's attention, with the full pass's weights",
          "[model][heads]") {
  const auto run = [](const DecoderModel& model, const std::string& layers, bool logits) {
    std::vector<AttentionBlock> blocks;
    const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
    ForwardRequest request;
    request.token_ids = {0, 1, 2, 3, 4};
    request.tokens.assign(5, "t");
    request.layers = parse_layer_selection(layers, 3);
    request.sink = &sink;
    request.logits = logits;
    model.forward(request);
    return blocks;
  };
  const std::vector<AttentionBlock> full = run(random_biased_model(0), "all", true);
  REQUIRE(full.size() == 3);
  const DecoderModel poisoned = random_biased_model(0, "blk.1.ffn_down.weight", std::numeric_limits<float>::quiet_NaN());
  CHECK_THROWS_WITH(run(poisoned, "0-1", true), Catch::Contains("layer 1: the residual stream after the feed-forward is not finite"));
  const std::vector<AttentionBlock> cut = run(poisoned, "0-1", false);
  REQUIRE(cut.size() == 2);
  for (std::size_t l = 0; l < cut.size(); ++l) {
    CAPTURE(l);
    CHECK(cut[l].layer == full[l].layer);
    CHECK(cut[l].record.weights == full[l].record.weights);
  }
  const std::vector<AttentionBlock> last_only = run(random_biased_model(0), "2", false);
  REQUIRE(last_only.size() == 1);
  CHECK(last_only[0].record.weights == full[2].record.weights);
}
