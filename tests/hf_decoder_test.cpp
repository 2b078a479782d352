// The Hugging Face path: stories260K's safetensors folder (../shared/realdata) against
// llama.cpp's attention for the GGUF file, and hand-broken safetensors files and configs.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run.hpp"
#include "core/error.hpp"
#include "model/hf_decoder.hpp"
#include "model/safetensors_file.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::realdata_file;
using attnviz::test::TempDir;
using Catch::Matchers::Contains;

namespace {

// A safetensors file from a header (as JSON text) and `data_bytes` zero bytes.
std::string write_safetensors(const TempDir& dir, const std::string& header, std::size_t data_bytes,
                              std::uint64_t declared_length = 0) {
  const std::string path = dir.file("model.safetensors");
  std::ofstream out(path, std::ios::binary);
  const std::uint64_t length = declared_length ? declared_length : header.size();
  out.write(reinterpret_cast<const char*>(&length), 8);
  out << header << std::string(data_bytes, '\0');
  return path;
}

std::string error_of(const std::string& path) {
  try {
    SafetensorsFile file(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("safetensors: stories260K's Hugging Face folder gives llama.cpp's attention", "[model][realdata]") {
  const DecoderModel model = decoder_from_hf_folder(realdata_file("stories260k/hf-safetensors"));
  CHECK(model.config().rope.style == RopeStyle::Half);
  CHECK(model.config().num_kv_heads == 4);
  CHECK(!model.config().tied_output);
  std::vector<AttentionBlock> blocks;
  const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
  ForwardRequest request;
  request.token_ids = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                       338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426};
  request.tokens.assign(32, "t");
  request.sink = &sink;
  model.forward(request);
  REQUIRE(blocks.size() == 5);
  const nlohmann::json reference = nlohmann::json::parse(
      attnviz::test::read_file(realdata_file("stories260k/quantized/reference/llamacpp-attn-F32.json")));
  double worst = 0;
  for (const AttentionBlock& b : blocks)
    for (int h = 0; h < 8; ++h)
      for (int q = 0; q < 32; ++q)
        for (int k = 0; k < 32; ++k)
          worst = std::max(worst, std::abs(reference["attention"][std::to_string(b.layer)][h][q][k].get<double>() -
                                           b.record.weights[static_cast<std::size_t>(h)](q, k)));
  INFO("max |attnviz (safetensors) - llama.cpp| = " << worst);
  CHECK(worst < 1e-5);
}

TEST_CASE("safetensors: greedy decoding from BOS writes the GGUF model's sentence (rotate-half RoPE, cached keys)", "[model][realdata]") {
  const DecoderModel model = decoder_from_hf_folder(realdata_file("stories260k/hf-safetensors"));
  std::vector<std::int32_t> ids = {1};
  CHECK(model.generate(ids, 31, 2) == 31);
  CHECK(ids == std::vector<std::int32_t>{1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                                         338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426});
}

TEST_CASE("safetensors: broken files are refused with one line naming the fault", "[model]") {
  TempDir dir;
  CHECK_THAT(error_of(write_safetensors(dir, "{}", 0, 1000)), Contains("the header length 1000 runs past the end of the file (10 bytes)"));
  CHECK_THAT(error_of(write_safetensors(dir, "[1]", 0)), Contains("the header is not a JSON object"));
  CHECK_THAT(error_of(write_safetensors(dir, R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}})", 8)),
             Contains("tensor w: data_offsets [0, 16] lie outside the 8 bytes of data"));
  CHECK_THAT(error_of(write_safetensors(dir, R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8)),
             Contains("tensor w: 8 bytes, but dtype F32 and its shape need 12"));
  CHECK_THAT(error_of(write_safetensors(dir,
                                        R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                            "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                                        12)),
             Contains("tensors a and b overlap"));
  CHECK_THAT(error_of(write_safetensors(dir, R"({"w": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 8]}})", 8)),
             Contains("tensor w: unknown dtype \"Q9\""));
  CHECK_THAT(error_of(write_safetensors(dir, R"({"w": {"shape": [2]}})", 8)), Contains("tensor w: expected {\"dtype\""));
}

TEST_CASE("safetensors: a config that disagrees with the tensors is refused, naming both", "[model]") {
  TempDir dir;
  const std::string source = realdata_file("stories260k/hf-safetensors");
  std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(source + "/config.json"));
  config["intermediate_size"] = 100;
  std::ofstream(dir.file("config.json")) << config.dump();
  CHECK_THROWS_WITH(decoder_from_hf_folder(dir.path().string()),
                    Contains("model.safetensors: tensor model.layers.0.mlp.gate_proj.weight: expected shape [100, 64] (from the model's settings), got [172, 64]"));
  config["intermediate_size"] = 172;
  config["architectures"] = {"GPT2LMHeadModel"};
  std::ofstream(dir.file("config.json")) << config.dump();
  CHECK_THROWS_WITH(decoder_from_hf_folder(dir.path().string()),
                    Contains("architecture \"GPT2LMHeadModel\" is not supported (supported: LlamaForCausalLM)"));
  config["architectures"] = {"LlamaForCausalLM"};
  config["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4}};
  std::ofstream(dir.file("config.json")) << config.dump();
  CHECK_THROWS_WITH(decoder_from_hf_folder(dir.path().string()), Contains("/rope_scaling/rope_type: expected \"linear\" or \"llama3\", got \"yarn\""));
}

// config.json, model.safetensors.index.json and tokenizer.json are read by io/json_file, whose
// syntax errors name the file, line and column (they once said "not valid JSON: [json.exception…").
TEST_CASE("safetensors folder: a config.json, index or tokenizer.json that is not JSON is refused naming the file, line and column",
          "[model][errors]") {
  TempDir dir;
  const std::string source = realdata_file("stories260k/hf-safetensors");
  const std::string config = attnviz::test::read_file(source + "/config.json");
  std::ofstream(dir.file("config.json")) << "{\n  \"hidden_size\": 64,,\n}\n";
  CHECK_THROWS_WITH(decoder_from_hf_folder(dir.path().string()),
                    Contains(dir.file("config.json") + ": line 2, column 21: syntax error while parsing object key - unexpected ','"));

  std::ofstream(dir.file("config.json")) << config;
  std::ofstream(dir.file("model.safetensors.index.json")) << "{\"weight_map\": {\"a\": \"x.safetensors\",}}";
  CHECK_THROWS_WITH(decoder_from_hf_folder(dir.path().string()),
                    Contains(dir.file("model.safetensors.index.json") + ": line 1, column 38: syntax error while parsing object key - unexpected '}'"));

  std::filesystem::remove(dir.file("model.safetensors.index.json"));
  std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  std::ofstream(dir.file("tokenizer.json")) << "{\"model\": {\"vocab\": {\"a\": 0}\n";
  Options o;
  o.command = Command::Dump;
  o.model = dir.path().string();
  o.token_ids = std::vector<int>{1, 2};
  o.output = dir.file("dump.json");
  o.threads = 1;
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == kExitInputError);
  CHECK_THAT(r.err, Contains(dir.file("tokenizer.json") + ": line 2, column 0: syntax error while parsing object - unexpected end of input"));
  CHECK(!std::filesystem::exists(dir.file("dump.json")));
}
