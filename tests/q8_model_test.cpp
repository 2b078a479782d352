// A GGUF model whose every matrix is Q8_0, run with llama.cpp's products (the default) and with
// --exact-matmul, against llama.cpp's own attention for it: tests/data/q8-matmul/ (README there).
#include <catch2/catch.hpp>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/gguf_decoder.hpp"
#include "model/gguf_encoder.hpp"
#include "model/head_ablation.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

const std::vector<std::int32_t> kIds = {1, 40, 77, 102, 9, 200, 31, 250, 64, 5, 130, 17, 99, 260, 45, 12, 180, 3, 70, 222, 150, 8, 111, 2};

DecoderModel q8_model() {
  return decoder_from_gguf(std::make_shared<const GgufFile>(test::test_data_file("q8-matmul/qwen2-q8_0.gguf")));
}

// Largest |ours − llama.cpp's| over attention[layer][head][query][key], and over the logits.
std::pair<double, double> worst_differences(const DecoderModel& model) {
  std::ifstream in(test::test_data_file("q8-matmul/qwen2-q8_0.llamacpp.json"));
  const nlohmann::json theirs = nlohmann::json::parse(in);
  double worst = 0;
  const BlockSink sink = [&](AttentionBlock&& block) {
    const auto& layer = theirs["attention"][static_cast<std::size_t>(block.layer)];
    for (std::size_t h = 0; h < block.record.weights.size(); ++h)
      for (Eigen::Index q = 0; q < block.record.weights[h].rows(); ++q)
        for (Eigen::Index k = 0; k < block.record.weights[h].cols(); ++k)
          worst = std::max(worst, std::abs(layer[h][static_cast<std::size_t>(q)][static_cast<std::size_t>(k)].get<double>() -
                                           block.record.weights[h](q, k)));
  };
  ForwardRequest request;
  request.token_ids = kIds;
  request.tokens.assign(kIds.size(), "t");
  request.sink = &sink;
  const std::vector<float> logits = model.forward(request);
  double worst_logit = 0;
  for (std::size_t i = 0; i < logits.size(); ++i)
    worst_logit = std::max(worst_logit, std::abs(theirs["last_logits"][i].get<double>() - logits[i]));
  return {worst, worst_logit};
}

}  // namespace

TEST_CASE("an all-Q8_0 GGUF model: the default products match llama.cpp's attention, the exact ones do not", "[model][q8_matmul]") {
  DecoderModel model = q8_model();
  CHECK(model.matmul() == "q8_0: q8_0 activations, as llama.cpp");
  const auto [as_llamacpp, logits_as_llamacpp] = worst_differences(model);
  model.set_quantized_matmul(false);
  CHECK(model.matmul() == "q8_0: float32");
  const auto [exact, logits_exact] = worst_differences(model);
  INFO("max |attnviz - llama.cpp| attention: " << as_llamacpp << " (q8_0 products), " << exact << " (--exact-matmul); logits: "
                                               << logits_as_llamacpp << ", " << logits_exact);
  CHECK(as_llamacpp < 1e-5);
  CHECK(logits_as_llamacpp < 1e-4);
  // The float path misses llama.cpp by the 8-bit rounding of the activations: many times more.
  CHECK(exact > 20 * as_llamacpp);
}

TEST_CASE("a model whose product weights are all f32 says nothing about its products", "[model][q8_matmul]") {
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(test::data_file("stories260k/stories260K.gguf")));
  CHECK(model.matmul().empty());
}

TEST_CASE("head ablation reaches a quantised W_O: the heads' columns of the concat are zeroed before it", "[model][q8_matmul]") {
  AttentionLayer layer;
  layer.num_heads = 4;
  layer.num_kv_heads = 2;
  layer.q_width = 8;  // d_k = 2
  layer.v_width = 4;  // d_v = 2
  Matrix seen;
  layer.o_projection = [&seen](const Matrix& concat, int) {
    seen = concat;
    return Matrix(Matrix::Ones(concat.rows(), 3));
  };
  zero_head_outputs(layer, {1, 3});
  const Matrix concat = Matrix::Constant(2, 8, 5.0f);
  REQUIRE(layer.o_projection(concat, 1).cols() == 3);
  for (Eigen::Index c = 0; c < 8; ++c) {
    INFO("column " << c);
    CHECK(seen(0, c) == ((c / 2 == 1 || c / 2 == 3) ? 0.0f : 5.0f));
  }
}

namespace {

const std::vector<std::int32_t> kBertIds = {2, 7, 12, 9, 30, 5, 18, 22, 11, 3, 25, 6, 14, 39, 8, 33, 21, 10, 27, 16, 35, 4, 19, 3};

EncoderModel q8_bert() {
  return encoder_from_gguf(std::make_shared<const GgufFile>(test::test_data_file("q8-matmul/bert-q8_0.gguf")));
}

// Largest |ours − llama.cpp's| over the encoder's attention[head][query][key], per layer.
std::vector<double> encoder_differences(const EncoderModel& model) {
  std::ifstream in(test::test_data_file("q8-matmul/bert-q8_0.llamacpp.json"));
  const nlohmann::json theirs = nlohmann::json::parse(in);
  std::vector<double> worst;
  const BlockSink sink = [&](AttentionBlock&& block) {
    const auto& layer = theirs["attention"][static_cast<std::size_t>(block.layer)];
    REQUIRE(layer.size() == block.record.weights.size());
    worst.push_back(0);
    for (std::size_t h = 0; h < block.record.weights.size(); ++h)
      for (Eigen::Index q = 0; q < block.record.weights[h].rows(); ++q)
        for (Eigen::Index k = 0; k < block.record.weights[h].cols(); ++k)
          worst.back() = std::max(worst.back(), std::abs(layer[h][static_cast<std::size_t>(q)][static_cast<std::size_t>(k)].get<double>() -
                                                         block.record.weights[h](q, k)));
  };
  EncoderRequest request;
  request.token_ids = kBertIds;
  request.tokens.assign(kBertIds.size(), "t");
  request.sink = &sink;
  model.forward(request);
  REQUIRE(worst.size() == 2);
  return worst;
}

}  // namespace

// Layer 0's attention reads only the embedding and layer 0's Q8_0 Q, K projections, so it holds
// the products alone; layer 1 also reads layer 0's feed-forward, whose GELU output is rounded to
// 8 bits before ffn_down, so a GELU other than llama.cpp's float16 table (model/ggml_gelu) shows
// there magnified (the float32 tanh formula: 3.1e-3).
TEST_CASE("an all-Q8_0 BERT GGUF: the default products match llama.cpp's attention, the exact ones do not", "[model][encoder][q8_matmul]") {
  EncoderModel model = q8_bert();
  CHECK(model.matmul() == "q8_0: q8_0 activations, as llama.cpp");
  const std::vector<double> as_llamacpp = encoder_differences(model);
  model.set_quantized_matmul(false);
  CHECK(model.matmul() == "q8_0: float32");
  const std::vector<double> exact = encoder_differences(model);
  INFO("max |attnviz - llama.cpp| attention, layers 0 and 1: " << as_llamacpp[0] << ", " << as_llamacpp[1] << " (q8_0 products); "
                                                               << exact[0] << ", " << exact[1] << " (--exact-matmul)");
  CHECK(as_llamacpp[0] < 1e-6);
  CHECK(exact[0] > 1000 * as_llamacpp[0]);
  CHECK(as_llamacpp[1] < 1e-6);
  CHECK(exact[1] > 1000 * as_llamacpp[1]);
}
TEST_CASE("a BERT GGUF without Q8_0 weights says nothing about its products", "[model][encoder][q8_matmul]") {
  CHECK(encoder_from_gguf(std::make_shared<const GgufFile>(test::test_data_file("bert/synthetic-bert.gguf"))).matmul().empty());
}
