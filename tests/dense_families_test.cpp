// OLMo 2, SmolLM3 and Granite (issue 33's dense families) on their synthetic models in
// tests/data/families: what each reader takes from the file (post-norms and whole-vector QK-norm,
// NoPE layers, multipliers), what the records, titles and dump say of it, incremental decoding,
// and every bad setting named by file, key and value. (Their attention against llama.cpp and the
// float64 references: tests/family_reference_test.py.)
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/heatmap_job.hpp"
#include "cli/run.hpp"
#include "core/error.hpp"
#include "model/gguf_decoder.hpp"
#include "model/hf_decoder.hpp"
#include "records/record_json.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::TempDir;
using attnviz::test::test_data_file;
using Catch::Matchers::Contains;

namespace {

namespace fs = std::filesystem;

DecoderModel gguf_model(const std::string& name) {
  return decoder_from_gguf(std::make_shared<const GgufFile>(test_data_file("families/" + name + ".gguf")));
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A copy of a synthetic GGUF with `before` replaced by `after` (same length) once.
std::string patched_gguf(const TempDir& dir, const std::string& name, const std::string& before, const std::string& after) {
  std::string bytes = bytes_of(test_data_file("families/" + name + ".gguf"));
  const std::size_t at = bytes.find(before);
  REQUIRE(at != std::string::npos);
  REQUIRE(before.size() == after.size());
  bytes.replace(at, before.size(), after);
  const std::string path = dir.file(name + ".gguf");
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A float32 metadata entry's bytes: key, type 6, value.
std::string f32_entry(const std::string& key, float value) {
  std::string entry = key;
  const std::uint32_t type = 6;
  entry.append(reinterpret_cast<const char*>(&type), 4);
  entry.append(reinterpret_cast<const char*>(&value), 4);
  return entry;
}

std::string config_error(const std::string& path) {
  try {
    decoder_config_from_gguf(GgufFile(path));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

template <typename Edit>
std::string edited_folder(const TempDir& dir, const std::string& family, Edit edit) {
  const fs::path source = test_data_file("families/" + family + "-hf");
  const fs::path folder = dir.path() / (family + "-hf");
  fs::create_directories(folder);
  fs::copy_file(source / "model.safetensors", folder / "model.safetensors", fs::copy_options::overwrite_existing);
  nlohmann::json config = nlohmann::json::parse(bytes_of((source / "config.json").string()));
  edit(config);
  std::ofstream(folder / "config.json") << config.dump();
  return folder.string();
}

std::string folder_error(const std::string& folder) {
  try {
    decoder_from_hf_folder(folder);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<AttentionBlock> all_blocks(const DecoderModel& model, int n) {
  std::vector<std::int32_t> ids{1};
  for (int i = 0; i < n - 1; ++i) ids.push_back(5 + i);
  std::vector<AttentionBlock> blocks;
  ForwardRequest request;
  request.token_ids = ids;
  for (std::size_t i = 0; i < ids.size(); ++i) request.tokens.push_back("t" + std::to_string(i));
  const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
  request.sink = &sink;
  model.forward(request);
  return blocks;
}

// attnviz dump of `model` on a few ids: the exit code, standard error and the dump (when written).
struct Dumped {
  int code;
  std::string err;
  nlohmann::json dump;
};
Dumped dump_of(const TempDir& dir, const std::string& model) {
  Options o;
  o.command = Command::Dump;
  o.model = model;
  o.token_ids = std::vector<int>{1, 5, 6, 7, 8};
  o.output = dir.file("dump.json");
  o.threads = 1;
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  nlohmann::json dump;
  if (fs::exists(o.output)) dump = nlohmann::json::parse(bytes_of(o.output));
  return {r.code, r.err, dump};
}

}  // namespace

TEST_CASE("dense families: incremental decoding equals full forward passes", "[model][families]") {
  const std::string name = GENERATE(std::string("olmo2"), std::string("olmo2-swa"), std::string("smollm3"), std::string("granite"),
                                    std::string("granite-nope"));
  INFO(name);
  const DecoderModel model = gguf_model(name);
  std::vector<std::int32_t> ids = {1, 7, 30};
  std::vector<KeyValueCache> caches;
  std::vector<std::int32_t> pending = ids;
  for (int step = 0; step < 8; ++step) {
    const std::vector<float> incremental = model.extend(caches, pending);
    ForwardRequest whole;
    whole.token_ids = ids;
    const std::vector<float> full = model.forward(whole);
    float largest = 0, worst = 0;
    for (std::size_t v = 0; v < full.size(); ++v) {
      largest = std::max(largest, std::fabs(full[v]));
      worst = std::max(worst, std::fabs(full[v] - incremental[v]));
    }
    CHECK(worst <= 2e-6 * largest);
    const auto next = static_cast<std::int32_t>(std::max_element(full.begin(), full.end()) - full.begin());
    ids.push_back(next);
    pending = {next};
  }
}

TEST_CASE("dense families: OLMo 2 has post-norms only and one QK-norm over all heads, and OLMo 3's window as llama.cpp reads it",
          "[model][families]") {
  const DecoderConfig c = gguf_model("olmo2").config();
  CHECK(!c.block.pre_norm);
  CHECK(c.block.post_attention_norm);
  CHECK(c.block.post_ffn_norm);
  CHECK(c.block.qk_norm_whole);
  CHECK(c.sliding_window.empty());
  // OLMo 3's keys in an olmo2 file: every 4th layer global; local layers at the file's θ, unscaled
  // (rope.freq_base_swa read by llama.cpp's loader, not used by its graph: named in a warning).
  const DecoderModel swa = gguf_model("olmo2-swa");
  const std::vector<long>& window = swa.config().sliding_window;
  REQUIRE(window.size() == 4);
  CHECK(window[0] == 5);
  CHECK(window[1] == 5);
  CHECK(window[2] == 5);
  CHECK(window[3] == 0);
  REQUIRE(swa.config().local_rope);
  CHECK(swa.config().local_rope->linear_factor == 1.0);
  CHECK(swa.config().local_rope->theta == swa.config().rope.theta);
  CHECK(swa.config().rope.linear_factor == 4.0);
  bool warned = false;
  for (const std::string& w : swa.config().warnings) warned = warned || w.find("olmo2.rope.freq_base_swa") != std::string::npos;
  CHECK(warned);
  const DecoderConfig hf = decoder_from_hf_folder(test_data_file("families/olmo2-hf")).config();
  CHECK(!hf.block.pre_norm);
  CHECK(hf.block.qk_norm_whole);
}

TEST_CASE("dense families: SmolLM3's NoPE layers: llama.cpp's every 4th, transformers' no_rope_layers", "[model][families]") {
  const DecoderModel gguf = gguf_model("smollm3");
  CHECK(gguf.config().no_rope_layers == std::vector<int>{3});
  const std::vector<AttentionBlock> blocks = all_blocks(gguf, 6);
  REQUIRE(blocks.size() == 5);
  for (const AttentionBlock& block : blocks) {
    INFO("layer " << block.layer);
    CHECK(block.record.no_rope == (block.layer == 3));
    CHECK(block.record.rope.has_value() == (block.layer != 3));
  }
  CHECK_THAT(heatmap_figure_title(blocks[3].record), Contains(" · NoPE layer (no RoPE)") && !Contains("RoPE ("));
  CHECK_THAT(heatmap_figure_title(blocks[2].record), !Contains("NoPE"));
  std::vector<std::string> warnings;
  const AttentionRecord back = record_from_json(nlohmann::json::parse(record_to_json(blocks[3].record)), "dump.json", warnings);
  CHECK(back.no_rope);
  CHECK(!record_from_json(nlohmann::json::parse(record_to_json(blocks[2].record)), "dump.json", warnings).no_rope);
  CHECK(warnings.empty());

  CHECK(decoder_from_hf_folder(test_data_file("families/smollm3-hf")).config().no_rope_layers == std::vector<int>{1, 4});
  TempDir dir;
  const std::string interval = edited_folder(dir, "smollm3", [](nlohmann::json& c) {
    c.erase("no_rope_layers");
    c["no_rope_layer_interval"] = 2;
  });
  CHECK(decoder_from_hf_folder(interval).config().no_rope_layers == std::vector<int>{1, 3});
  TempDir other;
  const std::string neither = edited_folder(other, "smollm3", [](nlohmann::json& c) { c.erase("no_rope_layers"); });
  CHECK(decoder_from_hf_folder(neither).config().no_rope_layers == std::vector<int>{3});  // SmolLM3Config's interval 4
}

TEST_CASE("dense families: Granite's multipliers as each format gives them, in the dump and the titles", "[model][families]") {
  const DecoderConfig c = gguf_model("granite").config();
  CHECK(c.embedding_multiplier == 3.0);
  CHECK(c.residual_multiplier == static_cast<double>(0.4f));  // llama.cpp reads float32
  CHECK(c.logit_divisor == 2.5);
  REQUIRE(c.attention_scale);
  CHECK(*c.attention_scale == static_cast<double>(0.2f));
  CHECK(c.no_rope_layers.empty());
  // rope.scaling.finetuned false: no RoPE anywhere; no attention.scale: llama.cpp's 1/√d_k.
  const DecoderConfig nope = gguf_model("granite-nope").config();
  CHECK(nope.no_rope_layers == std::vector<int>{0, 1, 2});
  CHECK(!nope.attention_scale);

  const std::vector<AttentionBlock> blocks = all_blocks(gguf_model("granite"), 5);
  CHECK_THAT(heatmap_figure_title(blocks[0].record), Contains(" · scores × 0.2"));
  CHECK_THAT(heatmap_figure_title(all_blocks(gguf_model("granite-nope"), 5)[0].record), !Contains("scores ×") && Contains("NoPE layer"));

  TempDir dir;
  const Dumped d = dump_of(dir, test_data_file("families/granite.gguf"));
  REQUIRE(d.code == 0);
  const nlohmann::json& model = d.dump["model"];
  CHECK(model["embedding_multiplier"] == 3.0);
  CHECK(model["logit_divisor"] == 2.5);
  CHECK_THAT(model["residual_multiplier"].get<double>(), Catch::Matchers::WithinAbs(0.4, 1e-7));
  CHECK_THAT(model["attention_scale"].get<double>(), Catch::Matchers::WithinAbs(0.2, 1e-7));
  CHECK(!model.contains("no_rope_layers"));
  TempDir other;
  const Dumped s = dump_of(other, test_data_file("families/smollm3-hf"));
  REQUIRE(s.code == 0);
  CHECK(s.dump["model"]["no_rope_layers"] == nlohmann::json::array({1, 4}));
  CHECK(!s.dump["model"].contains("embedding_multiplier"));

  // transformers' GraniteConfig: an absent attention_multiplier is 1.0, not 1/√d_k.
  TempDir third;
  const std::string folder = edited_folder(third, "granite", [](nlohmann::json& config) { config.erase("attention_multiplier"); });
  const DecoderConfig hf = decoder_from_hf_folder(folder).config();
  REQUIRE(hf.attention_scale);
  CHECK(*hf.attention_scale == 1.0);
}

TEST_CASE("dense families: bad settings are named with the file, the key and the value", "[model][families][errors]") {
  TempDir dir;
  SECTION("a no_rope_layers list naming layers past the model, or too short") {
    const auto length = GENERATE(4, 6);
    const std::string folder = edited_folder(dir, "smollm3", [&](nlohmann::json& c) { c["no_rope_layers"] = std::vector<int>(length, 1); });
    CHECK_THAT(folder_error(folder), Contains("config.json: /no_rope_layers has " + std::to_string(length) +
                                              " entries but /num_hidden_layers is 5"));
  }
  SECTION("a no_rope_layers entry other than 0 or 1") {
    const std::string folder = edited_folder(dir, "smollm3", [](nlohmann::json& c) { c["no_rope_layers"] = {1, 2, 1, 1, 0}; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/no_rope_layers/1") && Contains("2"));
  }
  SECTION("SmolLM3's sliding windows and biases") {
    const std::string folder = edited_folder(dir, "smollm3", [](nlohmann::json& c) { c["use_sliding_window"] = true; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/use_sliding_window") && Contains("true"));
    TempDir other;
    const std::string bias = edited_folder(other, "smollm3", [](nlohmann::json& c) { c["attention_bias"] = true; });
    CHECK_THAT(folder_error(bias), Contains("/attention_bias") && Contains("true"));
  }
  SECTION("OLMo 2 with attention biases") {
    const std::string folder = edited_folder(dir, "olmo2", [](nlohmann::json& c) { c["attention_bias"] = true; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/attention_bias") && Contains("true"));
  }
  SECTION("a Granite multiplier in config.json that is not a finite number > 0") {
    const std::string key = GENERATE(std::string("embedding_multiplier"), std::string("residual_multiplier"),
                                     std::string("logits_scaling"), std::string("attention_multiplier"));
    const double value = GENERATE(0.0, -1.5);
    const std::string folder = edited_folder(dir, "granite", [&](nlohmann::json& c) { c[key] = value; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/" + key) && Contains(nlohmann::json(value).dump()) &&
                                         Contains("a finite number > 0"));
  }
  SECTION("a Granite GGUF without its logit scale") {
    const std::string path = patched_gguf(dir, "granite", "granite.logit_scale", "granite.logit_scalX");
    CHECK_THAT(config_error(path), Contains("granite.gguf") && Contains("missing metadata granite.logit_scale"));
  }
  SECTION("a Granite GGUF multiplier that is not finite, or negative") {
    const float bad = GENERATE(std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -3.0f);
    const std::string path = patched_gguf(dir, "granite", f32_entry("granite.embedding_scale", 3.0f), f32_entry("granite.embedding_scale", bad));
    CHECK_THAT(config_error(path), Contains("granite.gguf") && Contains("metadata granite.embedding_scale") &&
                                       Contains("a finite number > 0") && Contains(std::isnan(bad) ? "nan" : bad < 0 ? "-3" : "inf"));
  }
  SECTION("a Granite GGUF logit scale of 0 (the logits would be divided by it)") {
    const std::string path = patched_gguf(dir, "granite", f32_entry("granite.logit_scale", 2.5f), f32_entry("granite.logit_scale", 0.0f));
    CHECK_THAT(config_error(path), Contains("granite.gguf") && Contains("metadata granite.logit_scale") && Contains("0"));
  }
}

TEST_CASE("dense families: a no_rope_layers list past the model stops dump with one line, nothing written", "[model][families][errors][cli]") {
  TempDir dir;
  const std::string folder = edited_folder(dir, "smollm3", [](nlohmann::json& c) { c["no_rope_layers"] = {1, 1, 1, 0, 1, 0}; });
  const Dumped d = dump_of(dir, folder);
  CHECK(d.code == kExitInputError);
  CHECK(d.err == "attnviz: error: " + folder + "/config.json: /no_rope_layers has 6 entries but /num_hidden_layers is 5\n");
  CHECK(d.dump.is_null());
}
