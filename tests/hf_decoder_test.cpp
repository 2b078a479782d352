// The Hugging Face path: stories260K's safetensors folder (tests/data/stories260k) against
// llama.cpp's attention for the GGUF file, and hand-broken safetensors files and configs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <tuple>
#include <nlohmann/json.hpp>

#include "cli/run.hpp"
#include "core/error.hpp"
#include "model/formats/safetensors_file.hpp"
#include "model/hf_decoder.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::test_data_file;
using attnviz::test::TempDir;
using Catch::Matchers::Contains;

namespace {

// `attnviz dump --model DIR -o DIR/NAME` on one thread; the caller gives --text or --token-ids.
Options folder_dump(const TempDir& dir, const std::string& name = "dump.json") {
  Options o;
  o.command = Command::Dump;
  o.model = dir.path().string();
  o.output = dir.file(name);
  o.threads = 1;
  return o;
}

// A safetensors file from a header (as JSON text) and `data_bytes` zero bytes.
std::string write_safetensors(const TempDir& dir, const std::string& header, std::size_t data_bytes,
                              std::uint64_t declared_length = 0, const std::string& name = "model.safetensors") {
  const std::string path = dir.file(name);
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
  const DecoderModel model = decoder_from_hf_folder(test_data_file("stories260k/hf-safetensors"));
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
      attnviz::test::read_file(test_data_file("stories260k/quantized/reference/llamacpp-attn-F32.json")));
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
  const DecoderModel model = decoder_from_hf_folder(test_data_file("stories260k/hf-safetensors"));
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
             Contains("tensor b (data_offsets [4, 12]) starts inside tensor a (data_offsets [0, 8])"));
  CHECK_THAT(error_of(write_safetensors(dir, R"({"w": {"dtype": "Q9", "shape": [2], "data_offsets": [0, 8]}})", 8)),
             Contains("tensor w: unknown dtype \"Q9\""));
  CHECK_THAT(error_of(write_safetensors(dir, R"({"w": {"shape": [2]}})", 8)), Contains("tensor w: expected {\"dtype\""));
}

// Issue 24: bytes no tensor covers, and bytes two tensors share, were accepted; the format's
// own reader (the safetensors crate's validate()) refuses both.
TEST_CASE("safetensors: the tensors must tile the data exactly, and a gap or shared bytes are refused naming the range",
          "[model][errors]") {
  TempDir dir;
  const auto error = [&dir](const std::string& tensors, std::size_t data_bytes) {
    return error_of(write_safetensors(dir, "{" + tensors + "}", data_bytes));
  };
  const std::string at = dir.file("model.safetensors") + ": ";
  const std::string a = R"("a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  const std::string b_at_8 = R"("b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]})";
  const std::string empty_at_8 = R"("e": {"dtype": "F32", "shape": [0], "data_offsets": [8, 8]})";
  CHECK(error(a + ", " + b_at_8, 12) == "(no error)");
  CHECK(error(a + ", " + empty_at_8 + ", " + b_at_8, 12) == "(no error)");
  CHECK(error("", 0) == "(no error)");
  CHECK(error(R"("b": {"dtype": "F32", "shape": [1], "data_offsets": [12, 16]}, )" + a, 16) ==
        at + "bytes [8, 12) of the data belong to no tensor (the gap before tensor b (data_offsets [12, 16]))");
  CHECK(error(R"("b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]})", 8) ==
        at + "bytes [0, 4) of the data belong to no tensor (the gap before tensor b (data_offsets [4, 8]))");
  CHECK(error(a, 12) == at + "bytes [8, 12) of the data belong to no tensor (after the last, tensor a (data_offsets [0, 8]))");
  CHECK(error("", 4) == at + "bytes [0, 4) of the data belong to no tensor (the header lists none)");
  CHECK(error(R"("__metadata__": {"format": "pt"}, )" + a, 8) == "(no error)");
  CHECK(error(R"("__metadata__": {"format": 1}, )" + a, 8) == at + "__metadata__/format: expected a string, got the integer 1");
  CHECK(error(R"("__metadata__": ["pt"], )" + a, 8) ==
        at + "__metadata__: expected an object of strings, got an array of 1 item");
  CHECK(error(a + R"(, "b": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})", 8) ==
        at + "tensor b (data_offsets [0, 8]) starts inside tensor a (data_offsets [0, 8]): bytes [0, 8) would belong to both");
  CHECK(error(R"("big": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "in": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]})", 16) ==
        at + "tensor in (data_offsets [4, 8]) starts inside tensor big (data_offsets [0, 16]): bytes [4, 8) would belong to both");
  CHECK(error(a + R"(, "e": {"dtype": "F32", "shape": [0], "data_offsets": [4, 4]})", 8) ==
        at + "tensor e (data_offsets [4, 4]) starts inside tensor a (data_offsets [0, 8])");
}

// A repeated key kept one of its values silently, and an unknown member of a tensor entry was
// ignored (as the crate's serde does); both are refused. A header padded with spaces before its
// '{' is read, as the crate reads it.
TEST_CASE("safetensors: a repeated key or an unknown tensor member is refused naming it, and leading spaces are read",
          "[model][errors]") {
  TempDir dir;
  const std::string at = dir.file("model.safetensors") + ": ";
  const std::string a = R"("a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]})";
  CHECK_THAT(error_of(write_safetensors(dir, "{" + a + ", " + a + "}", 8)),
             Contains("the key \"a\" appears twice in one object (one value would be lost)"));
  CHECK_THAT(error_of(write_safetensors(dir, R"({"a": {"dtype": "F32", "dtype": "F16", "shape": [2], "data_offsets": [0, 8]}})", 8)),
             Contains("the key \"dtype\" appears twice in one object"));
  CHECK(error_of(write_safetensors(dir, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8], "byte_order": "big"}})", 8)) ==
        at + "tensor a: unknown member \"byte_order\" (a string \"big\"; a tensor entry has only dtype, shape and data_offsets)");
  CHECK(error_of(write_safetensors(dir, "   {" + a + "}  ", 8)) == "(no error)");
}

// The shards were loaded from the weight_map's file names and each tensor looked up in whichever
// shard held it: a map that disagreed with its shards was not noticed.
TEST_CASE("safetensors folder: a weight_map that disagrees with its shards is refused naming the tensor and the shards",
          "[model][errors]") {
  TempDir dir;
  std::filesystem::copy_file(test_data_file("stories260k/hf-safetensors") + "/config.json", dir.file("config.json"));
  const auto tensor = [](const std::string& name) { return "\"" + name + R"(": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})"; };
  write_safetensors(dir, "{" + tensor("a") + "}", 4, 0, "s1.safetensors");
  write_safetensors(dir, "{" + tensor("b") + "}", 4, 0, "s2.safetensors");
  const std::string index = dir.file("model.safetensors.index.json");
  const auto error = [&](const std::string& weight_map) {
    std::ofstream(index) << R"({"metadata": {}, "weight_map": {)" + weight_map + "}}";
    try {
      decoder_from_hf_folder(dir.path().string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string s1 = dir.file("s1.safetensors"), s2 = dir.file("s2.safetensors");
  CHECK(error(R"("a": "s1.safetensors", "b": "s1.safetensors")") ==
        index + ": /weight_map/b names shard s1.safetensors, but no shard the weight_map lists holds tensor b");
  CHECK(error(R"("a": "s2.safetensors", "b": "s2.safetensors")") ==
        index + ": /weight_map/a names shard s2.safetensors, but no shard the weight_map lists holds tensor a");
  CHECK(error(R"("a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors")") ==
        index + ": /weight_map/b names shard s1.safetensors, but tensor b is in " + s2);
  CHECK(error(R"("a": "s1.safetensors", "c": "s1.safetensors")") ==
        index + ": /weight_map/c names shard s1.safetensors, but no shard the weight_map lists holds tensor c");
  CHECK(error(R"("a": "s1.safetensors", "x": "s2.safetensors")") ==
        index + ": /weight_map/x names shard s2.safetensors, but no shard the weight_map lists holds tensor x");
  write_safetensors(dir, "{" + tensor("b") + "}", 4, 0, "s1.safetensors");
  CHECK(error(R"("b": "s1.safetensors", "z": "s2.safetensors")") ==
        index + ": tensor b is in two shards, " + s1 + " and " + s2 + " (/weight_map names s1.safetensors)");
  write_safetensors(dir, "{" + tensor("a") + ", " + R"("extra": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]})" + "}", 8, 0,
                    "s1.safetensors");
  CHECK(error(R"("a": "s1.safetensors", "b": "s2.safetensors")") ==
        index + ": tensor extra of shard " + s1 + " is missing from /weight_map (transformers would not load it)");
  CHECK_THAT(error(R"("a": "s1.safetensors", "b": "s2.safetensors", "extra": "s1.safetensors")"), !Contains("weight_map"));
}

// Issue 24: an id the tokenizer made from --text that the model's embedding lacks was blamed on
// --token-ids, which was not given; the tokenizer and the weights disagree, so the files are named.
TEST_CASE("safetensors folder: a --text token beyond the model's embedding names the tokenizer, not --token-ids", "[model][errors]") {
  TempDir dir;
  const std::string source = test_data_file("stories260k/hf-safetensors");
  std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  std::filesystem::copy_file(source + "/config.json", dir.file("config.json"));
  std::ofstream(dir.file("tokenizer.json")) << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
    "added_tokens": [{"id": 600, "content": "<big>", "special": false, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}]})";
  Options o = folder_dump(dir);
  o.text = "a<big>";
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == kExitInputError);
  // The added token past the table is named when the tokenizer is loaded, and the text that spells it is refused.
  CHECK(r.err == "attnviz: warning: " + dir.file("tokenizer.json") + ": 1 added token has an id past the 512 token embeddings of the model " +
                     dir.path().string() + " (0-511), so a text that spells one is refused: \"<big>\" 600\n"
                     "attnviz: error: " + dir.file("tokenizer.json") + ": --text gives token 1 the id 600 (\"<big>\"), but the model " +
                     dir.path().string() + " has 512 token embeddings (0-511): its tokenizer and its weights disagree\n");
  CHECK(!std::filesystem::exists(dir.file("dump.json")));
  o.text.reset();
  o.token_ids = std::vector<int>{0, 600};
  CHECK(attnviz::test::run_with(o).err == "attnviz: error: --token-ids: token id 600 is outside the vocabulary (0-511)\n");
}

TEST_CASE("safetensors: a config that disagrees with the tensors is refused, naming both", "[model]") {
  TempDir dir;
  const std::string source = test_data_file("stories260k/hf-safetensors");
  std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(source + "/config.json"));
  config["intermediate_size"] = 100;
  std::ofstream(dir.file("config.json")) << config.dump();
  CHECK_THROWS_WITH(decoder_from_hf_folder(dir.path().string()),
                    Contains("model.safetensors: tensor model.layers.0.mlp.gate_proj.weight: expected shape [100, 64] (from the model's settings), got [172, 64]"));
  config["intermediate_size"] = 172;
  config["architectures"] = {"MambaForCausalLM"};
  std::ofstream(dir.file("config.json")) << config.dump();
  CHECK_THROWS_WITH(decoder_from_hf_folder(dir.path().string()),
                    Contains("architecture \"MambaForCausalLM\" is not supported (supported: GPT2LMHeadModel, Gemma2ForCausalLM, Gemma3ForCausalLM, "
                             "GraniteForCausalLM, LlamaForCausalLM, MistralForCausalLM, Olmo2ForCausalLM, Phi3ForCausalLM, "
                             "Qwen2ForCausalLM, Qwen3ForCausalLM, SmolLM3ForCausalLM)"));
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
  const std::string source = test_data_file("stories260k/hf-safetensors");
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
  Options o = folder_dump(dir);
  o.token_ids = std::vector<int>{1, 2};
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == kExitInputError);
  CHECK_THAT(r.err, Contains(dir.file("tokenizer.json") + ": line 2, column 0: syntax error while parsing object - unexpected end of input"));
  CHECK(!std::filesystem::exists(dir.file("dump.json")));
}

namespace {

// A folder holding stories260K's model.safetensors and its config.json changed by `edit`, for
// the config.json cases; returns the error decoder_from_hf_folder reports, or "(no error)".
std::string config_error(const TempDir& dir, const std::function<void(nlohmann::json&)>& edit) {
  const std::string source = test_data_file("stories260k/hf-safetensors");
  if (!std::filesystem::exists(dir.file("model.safetensors")))
    std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(source + "/config.json"));
  edit(config);
  std::ofstream(dir.file("config.json")) << config.dump();
  try {
    decoder_from_hf_folder(dir.path().string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// Found by a hostile tester: these gave "internal error: [json.exception.type_error.302]" (exit 3).
TEST_CASE("safetensors folder: a config.json member of the wrong type is refused naming the file, the member and the value",
          "[model][errors]") {
  TempDir dir;
  const std::string file = dir.file("config.json");
  using json = nlohmann::json;
  const auto set = [](const std::string& key, json value) {
    return [key, value](json& c) { c[key] = value; };
  };
  const auto scaling = [](json value) { return [value](json& c) { c["rope_scaling"] = value; }; };
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {set("rms_norm_eps", "x"), "/rms_norm_eps: expected a number, got a string \"x\""},
      {set("rms_norm_eps", nullptr), "/rms_norm_eps: expected a number, got null"},
      {set("rope_theta", true), "/rope_theta: expected a number, got true"},
      {set("rope_theta", "x"), "/rope_theta: expected a number, got a string \"x\""},
      {set("max_position_embeddings", "x"), "/max_position_embeddings: expected an integer from 1 to 2147483647, got a string \"x\""},
      {set("max_position_embeddings", nullptr), "/max_position_embeddings: expected an integer from 1 to 2147483647, got null"},
      {set("max_position_embeddings", 512.5), "/max_position_embeddings: expected an integer from 1 to 2147483647, got the number 512.5"},
      {set("hidden_size", true), "/hidden_size: expected an integer from 1 to 2147483647, got true"},
      {set("num_hidden_layers", 0), "/num_hidden_layers: expected an integer from 1 to 2147483647, got 0"},
      {set("tie_word_embeddings", "no"), "/tie_word_embeddings: expected true or false, got a string \"no\""},
      {set("tie_word_embeddings", nullptr), "/tie_word_embeddings: expected true or false, got null"},
      {set("attention_bias", 1), "/attention_bias: expected true or false, got the integer 1"},
      {set("hidden_act", 5), "/hidden_act: expected a string, got the integer 5"},
      {set("architectures", "LlamaForCausalLM"), "/architectures: expected a list of class names, got a string \"LlamaForCausalLM\""},
      {set("architectures", json::array({5})), "/architectures/0: expected a string, got the integer 5"},
      {[](json& c) { c.erase("architectures"); c["model_type"] = 5; }, "/model_type: expected a string, got the integer 5"},
      {scaling("x"), "/rope_scaling: expected an object or null, got a string \"x\""},
      {scaling({{"type", "linear"}, {"factor", "x"}}), "/rope_scaling/factor: expected a number, got a string \"x\""},
      {scaling({{"type", "linear"}, {"factor", nullptr}}), "/rope_scaling/factor: expected a number, got null"},
      {scaling({{"type", "linear"}, {"factor", true}}), "/rope_scaling/factor: expected a number, got true"},
      {scaling({{"type", nullptr}, {"factor", 2}}), "/rope_scaling/type: expected a string, got null"},
      {scaling({{"rope_type", true}, {"factor", 2}}), "/rope_scaling/rope_type: expected a string, got true"},
      {scaling({{"type", "x"}, {"factor", 2}}), "/rope_scaling/type: expected \"linear\" or \"llama3\", got \"x\""},
      {scaling({{"factor", 2}}), "/rope_scaling/rope_type: missing field (the scaling type"},
      {scaling({{"rope_type", "linear"}, {"type", "llama3"}, {"factor", 2}}),
       ": /rope_scaling/rope_type \"linear\" and /rope_scaling/type \"llama3\" disagree"},
      {[](json& c) { c = json::array(); }, ": /: expected a JSON object, got an array of 0 items"},
  };
  for (const auto& [edit, message] : cases) {
    CAPTURE(message);
    CHECK_THAT(config_error(dir, edit), Contains(file + (message.front() == ':' ? "" : ": ") + message));
  }
}

// Hugging Face writes null for the members whose LlamaConfig default is None: "not set".
TEST_CASE("safetensors folder: null stands for 'not set' where LlamaConfig's default is None", "[model]") {
  TempDir dir;
  for (const char* key : {"head_dim", "rope_scaling", "eos_token_id"}) {
    CAPTURE(key);
    CHECK(config_error(dir, [key](nlohmann::json& c) { c[key] = nullptr; }) == "(no error)");
  }
  // num_key_value_heads null: as many as num_attention_heads (8), which stories260K's K does not have.
  CHECK_THAT(config_error(dir, [](nlohmann::json& c) { c["num_key_value_heads"] = nullptr; }),
             Contains("tensor model.layers.0.self_attn.k_proj.weight: expected shape [64, 64] (from the model's settings), got [32, 64]"));
}

// --generate's end tokens come from config.json's eos_token_id (read with --text or --token-ids): a token id, a list
// of them, or null.
TEST_CASE("safetensors folder: an eos_token_id that is not a token id is refused naming it", "[model][errors]") {
  TempDir dir;
  std::ofstream(dir.file("tokenizer.json"))
      << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true}})";
  Options o = folder_dump(dir);
  o.text = "a";
  for (const auto& [eos, message] : std::vector<std::pair<nlohmann::json, std::string>>{
           {"x", ": /eos_token_id: expected an integer from 0 to 2147483647, got a string \"x\""},
           {nlohmann::json::array({-1}), ": /eos_token_id/0: expected an integer from 0 to 2147483647, got -1"}}) {
    CAPTURE(message);
    config_error(dir, [eos = eos](nlohmann::json& c) { c["eos_token_id"] = eos; });
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    CHECK(r.code == kExitInputError);
    CHECK_THAT(r.err, Contains(dir.file("config.json") + message));
  }
}

// Found by a hostile tester: these were accepted and run as a different model (or gave NaN).
TEST_CASE("safetensors folder: settings attnviz does not implement, or that no model can have, are refused naming the value",
          "[model][errors]") {
  TempDir dir;
  const std::string file = dir.file("config.json");
  using json = nlohmann::json;
  const auto set = [](const std::string& key, json value) { return [key, value](json& c) { c[key] = value; }; };
  const auto scaling = [](json value) { return [value](json& c) { c["rope_scaling"] = value; }; };
  const json llama3 = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0},
                       {"original_max_position_embeddings", 8192}};
  const auto llama3_with = [&llama3](const std::string& key, json value) {
    json s = llama3;
    if (value.is_null()) s.erase(key);
    else s[key] = value;
    return [s](json& c) { c["rope_scaling"] = s; };
  };
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {set("hidden_act", "gelu"), "/hidden_act: expected \"silu\" (SwiGLU, the only feed-forward attnviz implements), got \"gelu\""},
      {set("mlp_bias", true), "/mlp_bias: expected false (attnviz's feed-forward layers have no biases), got true"},
      {set("rope_theta", -1), "/rope_theta: expected a finite number > 0, got -1"},
      {set("rope_theta", 0), "/rope_theta: expected a finite number > 0, got 0"},
      {set("rms_norm_eps", -1e-6), "/rms_norm_eps: expected a finite number >= 0, got -1e-06"},
      {scaling({{"type", "linear"}, {"factor", 0}}), "/rope_scaling/factor: expected a finite number > 0, got 0"},
      {scaling({{"type", "linear"}, {"factor", -2.5}}), "/rope_scaling/factor: expected a finite number > 0, got -2.5"},
      {scaling({{"type", "linear"}}), "/rope_scaling/factor: missing field (the linear scaling factor)"},
      {llama3_with("low_freq_factor", nullptr), "/rope_scaling/low_freq_factor: missing field (LLaMA 3's low_freq_factor)"},
      {llama3_with("factor", -8), "/rope_scaling/factor: expected a finite number > 0, got -8"},
      {llama3_with("high_freq_factor", 1.0), ": /rope_scaling/high_freq_factor 1.0 must be above /rope_scaling/low_freq_factor 1.0"},
  };
  for (const auto& [edit, message] : cases) {
    CAPTURE(message);
    CHECK_THAT(config_error(dir, edit), Contains(file + (message.front() == ':' ? "" : ": ") + message));
  }
  CHECK(config_error(dir, set("rms_norm_eps", 0)) == "(no error)");
  CHECK(config_error(dir, set("hidden_act", "silu")) == "(no error)");
  CHECK(config_error(dir, scaling(llama3)) == "(no error)");
  CHECK(config_error(dir, scaling({{"type", "linear"}, {"factor", 0.5}})) == "(no error)");
}

// Found by a hostile tester: partial_rotary_factor was ignored and every component turned.
// transformers' _compute_default_rope_parameters: dim = int(head_dim · partial_rotary_factor).
TEST_CASE("safetensors folder: partial_rotary_factor turns only the first int(head_dim x factor) components", "[model][rope]") {
  TempDir dir;
  REQUIRE(config_error(dir, [](nlohmann::json& c) { c["partial_rotary_factor"] = 0.5; }) == "(no error)");
  const DecoderModel model = decoder_from_hf_folder(dir.path().string());
  const RopeSettings& rope = model.config().rope;
  REQUIRE(model.config().d_k == 8);
  CHECK(rope.dim == 4);
  CHECK(model.config().partial_rotary_factor == 0.5);
  // By hand, rotate_half over the first 4 of 8 components at position p: pairs (0, 2) and (1, 3)
  // turn at θ^0 = 1 and θ^(-2/4) = 1/100 rad per position (θ = 10000); components 4..7 stay.
  Matrix x(1, 8);
  x << 1, 2, 3, 4, 5, 6, 7, 8;
  const double p = 3;
  apply_rope(x, 8, rope, {3});
  const double a0 = 1, b0 = 3, a1 = 2, b1 = 4, w0 = p * 1.0, w1 = p / 100.0;
  const std::vector<double> expected = {a0 * std::cos(w0) - b0 * std::sin(w0), a1 * std::cos(w1) - b1 * std::sin(w1),
                                        a0 * std::sin(w0) + b0 * std::cos(w0), a1 * std::sin(w1) + b1 * std::cos(w1),
                                        5, 6, 7, 8};
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    CHECK(std::abs(x(0, i) - expected[static_cast<std::size_t>(i)]) < 1e-6);
  }
  // The dump's model block records the factor beside the width it gave.
  Options o = folder_dump(dir, "d.json");
  o.token_ids = std::vector<int>{1, 403, 407, 261};
  REQUIRE(attnviz::test::run_with(o).code == 0);
  const nlohmann::json dump = nlohmann::json::parse(attnviz::test::read_file(o.output));
  CHECK(dump["model"]["rope"]["dim"] == 4);
  CHECK(dump["model"]["rope"]["partial_rotary_factor"] == 0.5);
}

TEST_CASE("safetensors folder: a partial_rotary_factor out of range, of the wrong type or giving an odd width is refused",
          "[model][rope][errors]") {
  TempDir dir;
  const std::string at = dir.file("config.json") + ": /partial_rotary_factor";
  const auto factor = [&](nlohmann::json value) { return config_error(dir, [value](nlohmann::json& c) { c["partial_rotary_factor"] = value; }); };
  const std::string range = ": expected a number in (0, 1] (the fraction of each head RoPE turns), got ";
  CHECK(factor(0) == at + range + "0");
  CHECK(factor(-0.5) == at + range + "-0.5");
  CHECK(factor(1.5) == at + range + "1.5");
  CHECK(factor("half") == at + ": expected a number, got a string \"half\"");
  CHECK(factor(true) == at + ": expected a number, got true");
  CHECK(factor(nullptr) == at + ": expected a number, got null");
  CHECK(factor(0.1) == at + " 0.1 turns int(head_dim 8 x 0.1) = 0 components of each head: RoPE needs an even count of at least 2");
  CHECK(factor(0.4) == at + " 0.4 turns int(head_dim 8 x 0.4) = 3 components of each head: RoPE needs an even count of at least 2");
  CHECK(factor(1) == "(no error)");
  CHECK(factor(0.25) == "(no error)");
}

// Issue 25: transformers 5 writes RoPE's θ and scaling in one rope_parameters block; its
// rope_theta was ignored and θ = 10000 used without a word.
TEST_CASE("safetensors folder: transformers 5's rope_parameters gives θ and the scaling, and an unknown member is refused",
          "[model][rope]") {
  TempDir dir;
  const std::string source = test_data_file("stories260k/hf-safetensors");
  std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  const nlohmann::json original = nlohmann::json::parse(attnviz::test::read_file(source + "/config.json"));
  const auto load = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json config = original;
    config.erase("rope_theta");
    edit(config);
    std::ofstream(dir.file("config.json")) << config.dump();
    return decoder_from_hf_folder(dir.path().string()).config();
  };
  const DecoderConfig plain = load([](nlohmann::json& c) { c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 50000.0}}; });
  CHECK(plain.rope.theta == 50000.0);
  CHECK(plain.rope_scaling == "none");
  const DecoderConfig llama3 = load([](nlohmann::json& c) {
    c["rope_parameters"] = {{"rope_type", "llama3"},        {"rope_theta", 500000.0},     {"factor", 8.0},
                            {"low_freq_factor", 1.0},       {"high_freq_factor", 4.0},    {"original_max_position_embeddings", 64}};
  });
  CHECK(llama3.rope.theta == 500000.0);
  CHECK(llama3.rope_scaling == "llama3");
  CHECK(!llama3.rope.frequency_factors.empty());
  const DecoderConfig linear = load([](nlohmann::json& c) { c["rope_parameters"] = {{"rope_type", "linear"}, {"factor", 4.0}}; });
  CHECK(linear.rope.theta == 10000.0);
  CHECK(linear.rope.linear_factor == 4.0);
  CHECK(load([](nlohmann::json& c) { c["rope_parameters"] = {{"rope_type", "default"}, {"partial_rotary_factor", 0.5}}; }).rope.dim == 4);

  const std::string file = dir.file("config.json");
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> refused = {
      {[](nlohmann::json& c) { c["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"attention_factor", 1.2}}; },
       ": /rope_parameters/attention_factor 1.2: a RoPE setting attnviz does not apply"},
      {[](nlohmann::json& c) { c["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 4.0}}; },
       ": /rope_parameters/rope_type: expected \"linear\" or \"llama3\", got \"yarn\""},
      {[](nlohmann::json& c) { c["rope_parameters"] = {{"rope_type", "linear"}}; }, ": /rope_parameters/factor: missing field"},
      {[](nlohmann::json& c) { c["rope_parameters"] = {{"rope_theta", -1}}; }, ": /rope_parameters/rope_theta: expected a finite number > 0, got -1"},
      {[](nlohmann::json& c) { c["rope_parameters"] = 5; }, ": /rope_parameters: expected an object or null, got the integer 5"},
      {[](nlohmann::json& c) {
         c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 50000.0}};
         c["rope_theta"] = 10000.0;
       },
       ": /rope_theta 10000.0 and /rope_parameters/rope_theta 50000.0 disagree"},
      {[](nlohmann::json& c) {
         c["rope_parameters"] = {{"rope_type", "default"}};
         c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
       },
       ": /rope_parameters and /rope_scaling are both given"},
  };
  for (const auto& [edit, message] : refused) {
    CAPTURE(message);
    CHECK_THAT(config_error(dir, [&edit = edit](nlohmann::json& c) { c.erase("rope_theta"); edit(c); }), Contains(file + message));
  }
  // A top-level rope_theta that agrees with rope_parameters' is accepted.
  CHECK(config_error(dir, [](nlohmann::json& c) { c["rope_parameters"] = {{"rope_theta", 10000.0}}; }) == "(no error)");
}

namespace {

// A folder with stories260K's weights (512 token embeddings), its config.json without
// eos_token_id, and a byte-level tokenizer.json naming only "a", "b", "c" (ids 0-2).
void padded_folder(const TempDir& dir) {
  const std::string source = test_data_file("stories260k/hf-safetensors");
  std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(source + "/config.json"));
  config.erase("eos_token_id");
  std::ofstream(dir.file("config.json")) << config.dump();
  std::ofstream(dir.file("tokenizer.json")) << R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2}, "merges": []},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}, "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true}})";
}

nlohmann::json read_dump(const TempDir& dir) { return nlohmann::json::parse(attnviz::test::read_file(dir.file("dump.json"))); }

}  // namespace

// Issue 25: a config vocab_size above the tokenizer's (padded vocabularies) made --generate fail
// on the first generated id the tokenizer has no piece for.
TEST_CASE("safetensors folder: ids past the tokenizer (a padded vocabulary) are labelled <id N> in tokens, texts and text",
          "[model]") {
  TempDir dir, out;  // the dump beside the model would be one of the run's inputs
  padded_folder(dir);
  Options o = folder_dump(dir);
  o.output = out.file("dump.json");
  o.text = "abc";
  o.generate = 4;
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  REQUIRE(r.code == 0);
  const nlohmann::json dump = read_dump(out);
  const std::vector<std::int32_t> ids = dump["token_ids"];
  REQUIRE(ids.size() == 7);
  CHECK(std::vector<std::int32_t>(ids.begin(), ids.begin() + 3) == std::vector<std::int32_t>{0, 1, 2});
  std::string generated;
  int unnamed = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string expected = ids[i] < 3 ? std::string(1, static_cast<char>('a' + ids[i])) : "<id " + std::to_string(ids[i]) + ">";
    CHECK(dump["tokens"][i] == expected);
    CHECK(dump["token_texts"][i] == expected);
    if (i >= 3) generated += expected;
    unnamed += ids[i] >= 3;
  }
  CHECK(unnamed > 0);
  CHECK(dump["generated_text"] == generated);
  CHECK(dump["model"]["end_tokens"] == nlohmann::json::array());
  // By --token-ids, the tokenizer.json names the tokens (hf_token_names): the same labels.
  o.text.reset();
  o.token_ids = std::vector<int>{0, 1, 2};
  REQUIRE(attnviz::test::run_with(o).code == 0);
  CHECK(read_dump(out)["tokens"] == dump["tokens"]);
}

// Issue 25: --generate stopped only at config.json's eos_token_id (the first of a list), and
// only with --text; transformers stops at every id of generation_config.json's list.
TEST_CASE("safetensors folder: --generate stops at every eos_token_id of generation_config.json, else config.json, with --text or --token-ids",
          "[model]") {
  TempDir dir, out;  // the dump beside the model would be one of the run's inputs
  padded_folder(dir);
  Options o = folder_dump(dir);
  o.output = out.file("dump.json");
  o.token_ids = std::vector<int>{0};
  o.generate = 6;
  REQUIRE(attnviz::test::run_with(o).code == 0);
  const std::vector<std::int32_t> free_run = read_dump(out)["token_ids"];
  REQUIRE(free_run.size() == 7);
  // Two ids of the free run, the later-coming one smaller: decoding stops after the earlier one.
  const std::int32_t third = free_run[3], fifth = free_run[5];
  REQUIRE(std::find(free_run.begin() + 1, free_run.begin() + 3, third) == free_run.begin() + 3);
  REQUIRE(std::find(free_run.begin() + 1, free_run.begin() + 4, fifth) == free_run.begin() + 4);
  const std::vector<std::int32_t> stopped(free_run.begin(), free_run.begin() + 4);
  const auto write = [&dir](const std::string& name, const nlohmann::json& eos) {
    if (name == "config.json") {
      nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(dir.file(name)));
      config["eos_token_id"] = eos;
      std::ofstream(dir.file("config.json")) << config.dump();
    } else {
      std::ofstream(dir.file(name)) << nlohmann::json{{"eos_token_id", eos}}.dump();
    }
  };
  const auto run = [&]() {
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    REQUIRE(r.code == 0);
    return read_dump(out);
  };
  write("config.json", nlohmann::json::array({fifth, third}));
  nlohmann::json dump = run();
  CHECK(dump["token_ids"] == stopped);
  CHECK(dump["model"]["end_tokens"] == std::vector<std::int32_t>{std::min(third, fifth), std::max(third, fifth)});
  o.token_ids.reset();
  o.text = "a";
  CHECK(run()["token_ids"] == stopped);
  // generation_config.json's list replaces config.json's, as in transformers' generate().
  write("generation_config.json", nlohmann::json::array({fifth}));
  dump = run();
  CHECK(dump["token_ids"] == std::vector<std::int32_t>(free_run.begin(), std::find(free_run.begin() + 1, free_run.end(), fifth) + 1));
  CHECK(dump["model"]["end_tokens"] == std::vector<std::int32_t>{fifth});
  // A generation_config.json without eos_token_id leaves config.json's.
  write("generation_config.json", nullptr);
  CHECK(run()["token_ids"] == stopped);
  write("generation_config.json", nlohmann::json::array({3, "x"}));
  std::filesystem::remove(out.file("dump.json"));
  const attnviz::test::RunResult bad = attnviz::test::run_with(o);
  CHECK(bad.code == kExitInputError);
  CHECK_THAT(bad.err, Contains(dir.file("generation_config.json") + ": /eos_token_id/1: expected an integer from 0 to 2147483647, got a string \"x\""));
  CHECK(!std::filesystem::exists(out.file("dump.json")));
}

namespace {
// A copy of stories260K's folder (512 token embeddings) in `dir` with `tokenizer` as its tokenizer.json.
void folder_with_tokenizer(const TempDir& dir, const std::string& tokenizer) {
  const std::string source = test_data_file("stories260k/hf-safetensors");
  for (const char* name : {"model.safetensors", "config.json"})
    std::filesystem::copy_file(source + "/" + name, dir.file(name), std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir.file("tokenizer.json")) << tokenizer;
}

// A /model/vocab of n pieces: "a" 0, "b" 1, then "p2" 2 … "pN-1".
std::string dense_vocab(int n) {
  nlohmann::json vocab = {{"a", 0}, {"b", 1}};
  for (int id = 2; id < n; ++id) vocab["p" + std::to_string(id)] = id;
  return vocab.dump();
}
}  // namespace

// Issue 25: a tokenizer.json larger than the model's vocabulary was caught only when a text
// yielded an id past the table. Its own pieces past the table are refused at load, whatever the
// text; added tokens past it are named in a warning (only a text that spells them reaches them).
TEST_CASE("safetensors folder: a tokenizer.json with ids past the model's embeddings is caught at load", "[model][errors]") {
  TempDir dir;
  Options o = folder_dump(dir);
  o.text = "ab";
  const std::string head = R"({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}, )";
  const std::string expected_run = "the model " + dir.path().string() + " has 512 token embeddings (0-511): its tokenizer and its weights disagree\n";
  SECTION("pieces of /model/vocab past the table: refused, though the text does not use them") {
    folder_with_tokenizer(dir, head + R"("model": {"type": "BPE", "vocab": )" + dense_vocab(514) + R"(, "merges": []}})");
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    CHECK(r.code == kExitInputError);
    CHECK(r.err == "attnviz: error: " + dir.file("tokenizer.json") + ": 2 pieces of its vocabulary have ids past the model's table "
                   "(the first: \"p512\" 512), but " + expected_run);
    CHECK(!std::filesystem::exists(dir.file("dump.json")));
  }
  SECTION("a BOS the template adds to every text, past the table: refused") {
    folder_with_tokenizer(dir, head + R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
      "added_tokens": [{"id": 600, "content": "<s>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}],
      "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                         "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [600], "tokens": ["<s>"]}}}})");
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    CHECK(r.code == kExitInputError);
    CHECK_THAT(r.err, Contains(dir.file("tokenizer.json") + ": every text begins with the BOS token (\"<s>\" 600), but " + expected_run));
    CHECK(!std::filesystem::exists(dir.file("dump.json")));
  }
  SECTION("added tokens past the table: a warning naming them, and the run goes on") {
    folder_with_tokenizer(dir, head + R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []},
      "added_tokens": [{"id": 512, "content": "<image_soft_token>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}, {"id": 2, "content": "<eos>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}]})");
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Contains(dir.file("tokenizer.json") + ": 1 added token has an id past the 512 token embeddings of the model " +
                               dir.path().string() + " (0-511), so a text that spells one is refused: \"<image_soft_token>\" 512"));
    CHECK_THAT(r.err, !Contains("\"<eos>\""));
  }
  SECTION("a tokenizer within the table: no word") {
    folder_with_tokenizer(dir, head + R"("model": {"type": "BPE", "vocab": )" + dense_vocab(512) + R"(, "merges": []}})");
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, !Contains("past"));
  }
}

// "architectures": [] was read as /model_type ("architecture \"llama\" is not supported (supported:
// …LlamaForCausalLM…)"), and a model_type that disagrees with the class was not looked at (the
// GPT-2 reader then asked for wte.weight in a Llama file). Each is one line naming config.json,
// the member and both values; the BERT encoder (whose folder is recognised by the same member)
// the same way.
TEST_CASE("safetensors folder: an empty /architectures or a /model_type that disagrees with it is refused naming both",
          "[model][errors]") {
  TempDir dir;
  const std::string file = dir.file("config.json");
  CHECK(config_error(dir, [](nlohmann::json& c) { c["architectures"] = nlohmann::json::array(); }) ==
        file + ": /architectures: expected the model's class, e.g. [\"LlamaForCausalLM\"], got an empty list (/model_type is \"llama\")");
  CHECK(config_error(dir, [](nlohmann::json& c) {
          c["architectures"] = nlohmann::json::array();
          c["model_type"] = "qwen2";
        }) == file + ": /architectures: expected the model's class, e.g. [\"Qwen2ForCausalLM\"], got an empty list (/model_type is \"qwen2\")");
  CHECK(config_error(dir, [](nlohmann::json& c) { c["architectures"] = {"GPT2LMHeadModel"}; }) ==
        file + ": /model_type \"llama\" disagrees with /architectures/0 \"GPT2LMHeadModel\" (a \"gpt2\" model): one of them is "
               "wrong; attnviz will not guess which");
  CHECK(config_error(dir, [](nlohmann::json& c) { c["model_type"] = "gemma3"; }) ==
        file + ": /model_type \"gemma3\" disagrees with /architectures/0 \"LlamaForCausalLM\" (a \"llama\" model): one of them is "
               "wrong; attnviz will not guess which");
  // Absent, beside a decoder's model_type: the class is not guessed either.
  CHECK(config_error(dir, [](nlohmann::json& c) { c.erase("architectures"); }) ==
        file + ": /architectures: missing field (the model's class, e.g. [\"LlamaForCausalLM\"] for /model_type \"llama\")");
  // A class attnviz does not read is named as unsupported, whatever model_type says.
  CHECK_THAT(config_error(dir, [](nlohmann::json& c) { c["architectures"] = {"MambaForCausalLM"}; }),
             Contains("architecture \"MambaForCausalLM\" is not supported"));
  // BERT, through the whole run: no file written.
  TempDir bert;
  const std::string source = test_data_file("bert/hf");
  for (const char* name : {"model.safetensors", "tokenizer.json"}) std::filesystem::copy_file(source + "/" + name, bert.file(name));
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(source + "/config.json"));
  for (const auto& [architectures, model_type, message] :
       std::vector<std::tuple<nlohmann::json, std::string, std::string>>{
           {nlohmann::json::array(), "bert", ": /architectures: expected the model's class, e.g. [\"BertForMaskedLM\"] or [\"BertModel\"], got an empty list (/model_type is \"bert\")"},
           {{"BertModel"}, "llama", ": /model_type \"llama\" disagrees with /architectures/0 \"BertModel\" (a \"bert\" model): one of them is wrong; attnviz will not guess which"}}) {
    config["architectures"] = architectures;
    config["model_type"] = model_type;
    std::ofstream(bert.file("config.json")) << config.dump();
    Options o = folder_dump(bert);
    o.token_ids = std::vector<int>{0, 1};
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    CHECK(r.code == kExitInputError);
    CHECK(r.err == "attnviz: error: " + bert.file("config.json") + message + "\n");
    CHECK(!std::filesystem::exists(bert.file("dump.json")));
  }
}

// tokenize printed the ids of a tokenizer.json larger than the model's embedding table without a
// word; it now says what heatmaps --model says of the same folder and text, in the same words.
TEST_CASE("tokenize: a tokenizer.json past the model's embeddings is named or refused as heatmaps --model does", "[model][errors]") {
  TempDir dir;
  const std::string source = test_data_file("stories260k/hf-safetensors");
  std::filesystem::copy_file(source + "/model.safetensors", dir.file("model.safetensors"));
  std::filesystem::copy_file(source + "/config.json", dir.file("config.json"));
  const auto write_tokenizer = [&](const std::string& vocab) {
    std::ofstream(dir.file("tokenizer.json")) << R"({"model": {"type": "BPE", "vocab": )" << vocab << R"(, "merges": []},
      "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
      "added_tokens": [{"id": 600, "content": "<big>", "special": false, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}]})";
  };
  write_tokenizer(R"({"a": 0, "b": 1})");
  for (const std::string text : {"a", "a<big>"}) {
    CAPTURE(text);
    Options heatmaps = folder_dump(dir, "pictures");
    heatmaps.command = Command::Heatmaps;
    heatmaps.text = text;
    Options tokenize;
    tokenize.command = Command::Tokenize;
    tokenize.model = dir.path().string();
    tokenize.text = text;
    const attnviz::test::RunResult h = attnviz::test::run_with(heatmaps), t = attnviz::test::run_with(tokenize);
    CHECK(t.code == h.code);
    CHECK(t.err == h.err);
    CHECK_THAT(t.err, Catch::Matchers::StartsWith("attnviz: warning: " + dir.file("tokenizer.json") + ": 1 added token has an id past the 512"));
    CHECK(t.code == (text == "a" ? kExitOk : kExitInputError));
    if (text == "a") CHECK(t.out == "{\"tokens\":[\"a\"],\"token_ids\":[0],\"token_texts\":[\"a\"]}\n");
  }
  // A piece of the vocabulary itself past the table: refused at load by both.
  write_tokenizer(R"({"a": 0, "b": 1, "c": 520})");
  Options tokenize;
  tokenize.command = Command::Tokenize;
  tokenize.model = dir.path().string();
  tokenize.text = "a";
  const attnviz::test::RunResult t = attnviz::test::run_with(tokenize);
  CHECK(t.code == kExitInputError);
  CHECK(t.err == "attnviz: error: " + dir.file("tokenizer.json") + ": 1 piece of its vocabulary has an id past the model's table (the "
                 "first: \"c\" 520), but the model " + dir.path().string() + " has 512 token embeddings (0-511): its tokenizer "
                 "and its weights disagree\n");
  CHECK(t.out.empty());
  Options heatmaps = folder_dump(dir, "pictures");
  heatmaps.command = Command::Heatmaps;
  heatmaps.text = "a";
  CHECK(attnviz::test::run_with(heatmaps).err == t.err);
  // A model attnviz cannot run: its tokenizer still splits the text, and the unchecked ids are said.
  write_tokenizer(R"({"a": 0, "b": 1})");
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(dir.file("config.json")));
  config["architectures"] = {"MambaForCausalLM"};
  std::ofstream(dir.file("config.json")) << config.dump();
  const attnviz::test::RunResult mamba = attnviz::test::run_with(tokenize);
  CHECK(mamba.code == kExitOk);
  CHECK(mamba.out == "{\"tokens\":[\"a\"],\"token_ids\":[0],\"token_texts\":[\"a\"]}\n");
  CHECK_THAT(mamba.err, Catch::Matchers::StartsWith("attnviz: warning: " + dir.path().string() +
                                                    ": the ids are not checked against the model's token embeddings, which attnviz "
                                                    "cannot read: " + dir.file("config.json") + ": architecture \"MambaForCausalLM\" is not supported"));
}

// The BERT encoder said "token id 45 (position 2) is outside the vocabulary of 40 tokens" for a
// text's added token past the table, naming neither the tokenizer nor --token-ids: it now checks
// the ids as a decoder does, and tokenize says the same.
TEST_CASE("encoder folder: ids past the embeddings name --token-ids or the tokenizer as a decoder's do", "[model][errors]") {
  TempDir dir;
  const std::string source = test_data_file("bert/hf");
  for (const char* name : {"model.safetensors", "config.json"}) std::filesystem::copy_file(source + "/" + name, dir.file(name));
  nlohmann::json tokenizer = nlohmann::json::parse(attnviz::test::read_file(source + "/tokenizer.json"));
  tokenizer["added_tokens"].push_back({{"id", 45}, {"content", "<big>"}, {"special", false}, {"single_word", false},
                                       {"lstrip", false}, {"rstrip", false}, {"normalized", false}});
  std::ofstream(dir.file("tokenizer.json")) << tokenizer.dump();
  const std::string warning = "attnviz: warning: " + dir.file("tokenizer.json") + ": 1 added token has an id past the 40 token embeddings of the model " +
                              dir.path().string() + " (0-39), so a text that spells one is refused: \"<big>\" 45\n";
  Options heatmaps = folder_dump(dir, "pictures");
  heatmaps.command = Command::Heatmaps;
  heatmaps.text = "hello <big>";
  const attnviz::test::RunResult h = attnviz::test::run_with(heatmaps);
  CHECK(h.code == kExitInputError);
  CHECK(h.err == warning + "attnviz: error: " + dir.file("tokenizer.json") + ": --text gives token 2 the id 45 (\"<big>\"), but the model " +
                     dir.path().string() + " has 40 token embeddings (0-39): its tokenizer and its weights disagree\n");
  Options tokenize;
  tokenize.command = Command::Tokenize;
  tokenize.model = dir.path().string();
  tokenize.text = "hello <big>";
  CHECK(attnviz::test::run_with(tokenize).err == h.err);
  heatmaps.text.reset();
  heatmaps.token_ids = std::vector<int>{2, 40};
  CHECK(attnviz::test::run_with(heatmaps).err == "attnviz: error: --token-ids: token id 40 is outside the vocabulary (0-39)\n");
  CHECK(!std::filesystem::exists(dir.file("pictures")));
}
