// A GGUF model holding every weight type attnviz multiplies as llama.cpp does, each tensor's blocks
// made by llama.cpp's own quantizer, against llama.cpp's attention and logits for it:
// tests/data/quant-blocks/mixed.gguf (README there).
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/gguf_decoder.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

struct Differences {
  std::vector<double> layers;  // largest |ours − llama.cpp's| attention weight, per layer
  double logits = 0;
};

Differences against_llamacpp(const DecoderModel& model) {
  std::ifstream in(test::test_data_file("quant-blocks/mixed.llamacpp.json"));
  const nlohmann::json theirs = nlohmann::json::parse(in);
  Differences d;
  const BlockSink sink = [&](AttentionBlock&& block) {
    const auto& layer = theirs["attention"][static_cast<std::size_t>(block.layer)];
    d.layers.push_back(0);
    for (std::size_t h = 0; h < block.record.weights.size(); ++h)
      for (Eigen::Index q = 0; q < block.record.weights[h].rows(); ++q)
        for (Eigen::Index k = 0; k < block.record.weights[h].cols(); ++k)
          d.layers.back() = std::max(d.layers.back(), std::abs(layer[h][static_cast<std::size_t>(q)][static_cast<std::size_t>(k)].get<double>() -
                                                               block.record.weights[h](q, k)));
  };
  ForwardRequest request;
  request.token_ids = theirs["token_ids"].get<std::vector<std::int32_t>>();
  request.tokens.assign(request.token_ids.size(), "t");
  request.sink = &sink;
  const std::vector<float> logits = model.forward(request);
  for (std::size_t i = 0; i < logits.size(); ++i)
    d.logits = std::max(d.logits, std::abs(theirs["last_logits"][i].get<double>() - logits[i]));
  return d;
}

}  // namespace

TEST_CASE("every weight type in one GGUF: the default products are llama.cpp's, --exact-matmul's are not", "[model][quant_matmul]") {
  DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(test::test_data_file("quant-blocks/mixed.gguf")));
  CHECK(model.matmul() ==
        "q4_0: q8_0 activations, as llama.cpp; q4_1: q8_1 activations, as llama.cpp; q5_0: q8_0 activations, as llama.cpp; "
        "q5_1: q8_1 activations, as llama.cpp; iq4_nl: q8_0 activations, as llama.cpp; q2_K: q8_K activations, as llama.cpp; "
        "q3_K: q8_K activations, as llama.cpp; q4_K: q8_K activations, as llama.cpp; f16: f16 activations, as llama.cpp; "
        "bf16: bf16 activations, as llama.cpp; iq4_xs: q8_K activations, as llama.cpp; q5_K: q8_K activations, as llama.cpp; "
        "q6_K: q8_K activations, as llama.cpp; q8_0: q8_0 activations, as llama.cpp");
  const Differences ours = against_llamacpp(model);
  model.set_quantized_matmul(false);
  CHECK(model.matmul().rfind("q4_0: float32; q4_1: float32; ", 0) == 0);
  const Differences exact = against_llamacpp(model);
  REQUIRE(ours.layers.size() == 2);
  INFO("max |attnviz - llama.cpp| attention per layer: " << ours.layers[0] << ", " << ours.layers[1] << " (default); "
                                                         << exact.layers[0] << ", " << exact.layers[1] << " (--exact-matmul); logits "
                                                         << ours.logits << ", " << exact.logits);
  for (std::size_t l = 0; l < 2; ++l) {
    CHECK(ours.layers[l] < 1e-5);
    CHECK(exact.layers[l] > 10 * ours.layers[l]);
  }
  CHECK(ours.logits < 1e-4);
}

namespace {

// A copy of `model` (default mixed.gguf) with tensor `name`'s type id replaced by `type` (its bytes
// left as they are).
std::string with_type(const test::TempDir& dir, const std::string& name, std::uint32_t type,
                      const std::string& model = "quant-blocks/mixed.gguf") {
  std::string bytes = test::read_file(test::test_data_file(model));
  const std::size_t at = bytes.find(name);
  REQUIRE(at != std::string::npos);
  // name, then n_dims (u32), two dims (u64), then the type (u32).
  const std::size_t type_at = at + name.size() + 4 + 2 * 8;
  std::memcpy(&bytes[type_at], &type, 4);
  const std::string path = dir.file("m.gguf");
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("a weight of a type this build can neither decode nor multiply is refused at load, named with its type", "[model][quant_matmul]") {
  const test::TempDir dir;
  const std::string path = with_type(dir, "blk.1.ffn_down.weight", 35);  // tq2_0
  CHECK_THROWS_WITH(decoder_from_gguf(std::make_shared<const GgufFile>(path)),
                    path + ": tensor blk.1.ffn_down.weight: type tq2_0 is not supported (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, "
                           "q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs are)");
}

TEST_CASE("a NaN float16 scale in a quantized weight ends in the non-finite error naming the layer", "[model][quant_matmul]") {
  const test::TempDir dir;
  std::string bytes = test::read_file(test::test_data_file("quant-blocks/mixed.gguf"));
  {
    // Layer 1's q4_K attn_q: its first block's d (the first 2 bytes) becomes a float16 NaN.
    const GgufFile file(test::test_data_file("quant-blocks/mixed.gguf"));
    const GgufTensorInfo* info = file.find_tensor("blk.1.attn_q.weight");
    REQUIRE(info != nullptr);
    const std::string first_blocks(reinterpret_cast<const char*>(info->data), 288);
    const std::size_t at = bytes.find(first_blocks);
    REQUIRE(at != std::string::npos);
    bytes[at] = '\x00';
    bytes[at + 1] = '\x7e';
  }
  const std::string path = dir.file("nan.gguf");
  std::ofstream(path, std::ios::binary) << bytes;
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(path));
  ForwardRequest request;
  request.token_ids = {1, 40, 17, 52};
  request.tokens.assign(4, "t");
  CHECK_THROWS_WITH(model.forward(request), Catch::Contains("layer 1") && Catch::Contains("NaN"));
}

TEST_CASE("a tensor whose rows are not whole blocks of its type is refused at load, naming it", "[model][quant_matmul]") {
  const test::TempDir dir;
  // stories260K's Q4_K_M copy keeps ffn_down (rows of 172) in f16; as q8_0 its rows would need
  // whole blocks of 32.
  const std::string path = with_type(dir, "blk.0.ffn_down.weight", 8, "stories260k/quantized/stories260K-Q4_K_M.gguf");
  CHECK_THROWS_WITH(GgufFile(path), Catch::Contains(path) && Catch::Contains("blk.0.ffn_down.weight") &&
                                        Catch::Contains("rows of 172 elements are not whole q8_0 blocks of 32"));
}
