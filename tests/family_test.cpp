// Decoder families (issue 25) on the synthetic models of tests/data/families: incremental
// decoding under sliding windows, caps and learned positions; what a record and the model
// block say; the per-format differences; and every bad setting named by file and key.
// (Their attention against llama.cpp and the float64 reference: tests/family_reference_test.py.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/heatmap_job.hpp"
#include "cli/run.hpp"
#include "core/error.hpp"
#include "model/families/gemma_settings.hpp"
#include "model/gguf_decoder.hpp"
#include "model/hf_decoder.hpp"
#include "records/record_json.hpp"
#include "render/rollout_collector.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::TempDir;
using attnviz::test::test_data_file;
using Catch::Matchers::Contains;

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kFamilies = {"qwen2", "qwen3", "mistral", "gemma2", "gemma3", "phi3", "gpt2"};

DecoderModel family_gguf(const std::string& family) {
  return decoder_from_gguf(std::make_shared<const GgufFile>(test_data_file("families/" + family + ".gguf")));
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A copy of a family's GGUF in `dir` with `before` replaced by `after` (same length) once: a
// tensor renamed, or the value after a metadata key (key, u32 type, then the value) changed.
std::string patched_gguf(const TempDir& dir, const std::string& family, const std::string& before, const std::string& after) {
  std::string bytes = bytes_of(test_data_file("families/" + family + ".gguf"));
  const std::size_t at = bytes.find(before);
  REQUIRE(at != std::string::npos);
  REQUIRE(before.size() == after.size());
  bytes.replace(at, before.size(), after);
  const std::string path = dir.file(family + ".gguf");
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The bytes of a metadata entry: its key, then its type and value as `type` and `value`.
template <typename T>
std::string metadata_entry(const std::string& key, std::uint32_t type, T value) {
  std::string entry = key;
  entry.append(reinterpret_cast<const char*>(&type), 4);
  entry.append(reinterpret_cast<const char*>(&value), sizeof value);
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

// A copy of a family's Hugging Face folder in `dir` with config.json edited by `edit`.
template <typename Edit>
std::string edited_folder(const TempDir& dir, const std::string& family, Edit edit) {
  const fs::path source = test_data_file("families/" + family + "-hf");
  const fs::path folder = dir.path() / (family + "-hf");
  fs::create_directories(folder);
  fs::copy_file(source / "model.safetensors", folder / "model.safetensors");
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

std::vector<AttentionBlock> all_blocks(const DecoderModel& model, const std::vector<std::int32_t>& ids) {
  std::vector<AttentionBlock> blocks;
  ForwardRequest request;
  request.token_ids = ids;
  for (std::size_t i = 0; i < ids.size(); ++i) request.tokens.push_back("t" + std::to_string(i));
  const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
  request.sink = &sink;
  model.forward(request);
  return blocks;
}

std::vector<std::int32_t> ids_from(int first, int count) {
  std::vector<std::int32_t> ids{1};
  for (int i = 0; i < count - 1; ++i) ids.push_back(first + i);
  return ids;
}

}  // namespace

TEST_CASE("families: incremental decoding equals full forward passes (windows, caps, QK-norm, learned positions)", "[model][families]") {
  for (const std::string& family : kFamilies) {
    INFO(family);
    const DecoderModel model = family_gguf(family);
    std::vector<std::int32_t> ids = {1, 7, 30};
    std::vector<KeyValueCache> caches;
    std::vector<std::int32_t> pending = ids;
    // 12 steps past a 3-token prompt: every window (5) is passed, so the cached keys that fall out
    // of it must be masked in extend() as in forward().
    for (int step = 0; step < 12; ++step) {
      const std::vector<float> incremental = model.extend(caches, pending);
      ForwardRequest whole;
      whole.token_ids = ids;
      const std::vector<float> full = model.forward(whole);
      float largest = 0, worst = 0;
      for (std::size_t v = 0; v < full.size(); ++v) {
        largest = std::max(largest, std::fabs(full[v]));
        worst = std::max(worst, std::fabs(full[v] - incremental[v]));
      }
      // Eigen sums a one-row product (extend) and a many-row one (forward) in different orders:
      // float32 noise of a few 1e-6 of the largest logit (Gemma 2, with its caps, 3.6e-6); a
      // cached key masked wrongly moves logits by whole units.
      CHECK(worst <= 1e-5 * largest);
      const auto next = static_cast<std::int32_t>(std::max_element(full.begin(), full.end()) - full.begin());
      ids.push_back(next);
      pending = {next};
    }
  }
}

TEST_CASE("families: a sliding-window layer's record masks the cells outside its window, and says so", "[model][families]") {
  const DecoderModel model = family_gguf("gemma2");
  const std::vector<AttentionBlock> blocks = all_blocks(model, ids_from(5, 12));
  REQUIRE(blocks.size() == 2);
  const AttentionRecord& local = blocks[0].record;
  const AttentionRecord& global = blocks[1].record;
  CHECK(local.sliding_window == 5);  // gemma2.attention.sliding_window; layer 0 is local (l % 2 == 0)
  CHECK(global.sliding_window == 0);
  CHECK(local.logit_softcap == 4.0);
  CHECK_THAT(local.scale, Catch::Matchers::WithinAbs(0.25, 1e-7));  // llama.cpp: 1/√key_length (16)
  const MaskMatrix allowed = local.allowed();
  const MaskMatrix outside = local.outside_window();
  for (long i = 0; i < 12; ++i) {
    for (long j = 0; j < 12; ++j) {
      INFO("query " << i << ", key " << j);
      CHECK(allowed(i, j) == (j <= i && i - j < 5 ? 1 : 0));
      CHECK(outside(i, j) == (j <= i && i - j >= 5 ? 1 : 0));
      if (!allowed(i, j)) {
        for (const Matrix& head : local.weights) CHECK(head(i, j) == 0.0f);
      }
    }
  }
  CHECK(global.allowed() == local.outside_window().cwiseMax(allowed));
}

TEST_CASE("families: Gemma 3's local layers turn RoPE with their own base", "[model][families]") {
  const DecoderModel model = family_gguf("gemma3");
  const DecoderConfig& c = model.config();
  CHECK(c.sliding_window == std::vector<long>{5, 5, 5, 5, 5, 0});  // llama.cpp's pattern 6
  REQUIRE(c.local_rope);
  CHECK(c.local_rope->theta == 10000.0);
  CHECK(c.rope.theta == 1e6);
  const std::vector<AttentionBlock> blocks = all_blocks(model, ids_from(5, 8));
  REQUIRE(blocks.size() == 6);
  CHECK(blocks[0].record.rope->theta == 10000.0);
  CHECK(blocks[5].record.rope->theta == 1e6);
}

TEST_CASE("families: each family turns its sliding-window layers by its own RoPE rule (GGUF: llama.cpp's)", "[model][families]") {
  // llama.cpp's load_hparams: gemma2 keeps rope_freq_scale_train in its local layers, gemma3 sets
  // it to 1; both read rope.freq_base_swa. The attention itself is held to llama.cpp's in
  // family_reference_test.py; here the settings each layer's record says it turned by.
  const auto layer_ropes = [](const std::string& variant) {
    std::vector<std::pair<double, double>> ropes;  // (θ, linear factor) per layer
    for (const AttentionBlock& block : all_blocks(family_gguf(variant), ids_from(5, 6)))
      ropes.emplace_back(block.record.rope->theta, block.record.rope->linear_factor);
    return ropes;
  };
  using Ropes = std::vector<std::pair<double, double>>;
  // Gemma 2, layers 0 and 2 local: the local base (500, else the global 10 000) with the file's factor 4.
  CHECK(layer_ropes("gemma2-rope-swa-linear") == Ropes{{500, 4}, {1e4, 4}, {500, 4}});
  CHECK(layer_ropes("gemma2-rope-linear") == Ropes{{1e4, 4}, {1e4, 4}, {1e4, 4}});  // rope.scale_linear
  // rope.scaling.type "none" unscales the global layers only.
  CHECK(layer_ropes("gemma2-rope-swa-none") == Ropes{{500, 4}, {1e4, 1}, {500, 4}});
  CHECK(layer_ropes("gemma2-rope-none") == Ropes{{1e4, 4}, {1e4, 1}, {1e4, 4}});
  // Gemma 3 (window pattern 2: layers 0 and 2 local): the local base, else 10 000, never scaled.
  CHECK(layer_ropes("gemma3-rope-swa-linear") == Ropes{{500, 1}, {1e6, 4}, {500, 1}, {1e6, 4}});
  CHECK(layer_ropes("gemma3-rope-linear") == Ropes{{1e4, 1}, {1e6, 4}, {1e4, 1}, {1e6, 4}});
  CHECK(layer_ropes("gemma3-rope-swa-none") == Ropes{{500, 1}, {1e6, 1}, {500, 1}, {1e6, 1}});
  // No sliding-window layers in llama.cpp's qwen2, llama and phi3 graphs: one RoPE everywhere.
  CHECK(layer_ropes("qwen2-rope") == Ropes(3, {1e6, 4}));
  CHECK(layer_ropes("mistral-rope") == Ropes(3, {1e5, 4}));
  CHECK(layer_ropes("phi3-rope") == Ropes(3, {1e4, 4}));
}

TEST_CASE("families: what llama.cpp does with a local RoPE setting that the rest of the file leaves unused is said", "[model][families]") {
  const DecoderConfig none = family_gguf("gemma2-rope-swa-none").config();
  REQUIRE(none.warnings.size() == 1);
  CHECK_THAT(none.warnings[0], Contains("gemma2-rope-swa-none.gguf: metadata gemma2.rope.scaling.type is \"none\"") &&
                                   Contains("sliding-window layers by its factor 4"));
  std::string llama;
  const DecoderConfig mistral = family_gguf("mistral-rope").config();
  for (const std::string& warning : mistral.warnings) llama += warning + "\n";
  CHECK_THAT(llama, Contains("metadata llama.rope.freq_base_swa = 500") &&
             Contains("architecture llama has none of in llama.cpp"));
  const DecoderConfig qwen = family_gguf("qwen2-rope").config();
  REQUIRE(qwen.warnings.size() == 1);
  CHECK_THAT(qwen.warnings[0], Contains("ignored: qwen2.rope.freq_base_swa"));
  CHECK(family_gguf("gemma2-rope-swa-linear").config().warnings.empty());
}

TEST_CASE("families: rope_freqs.weight is refused where llama.cpp does not load it", "[model][families][errors]") {
  // llama.cpp refuses a qwen2, qwen3, gemma2, gemma3 or phi3 file holding it (wrong number of
  // tensors, measured); a same-length rename puts one in qwen2.gguf.
  TempDir dir;
  const std::string path = patched_gguf(dir, "qwen2", "blk.1.attn_q.bias", "rope_freqs.weight");
  CHECK_THAT(config_error(path), Contains("qwen2.gguf: tensor rope_freqs.weight") &&
                                 Contains("llama.cpp does not load for architecture qwen2"));
}

TEST_CASE("families: a folder's RoPE follows transformers: Gemma 2 scales every layer, Gemma 3 its global ones", "[model][families]") {
  TempDir dir;
  const nlohmann::json linear = {{"rope_type", "linear"}, {"factor", 8.0}};
  const DecoderModel gemma2 = decoder_from_hf_folder(edited_folder(dir, "gemma2", [&](nlohmann::json& c) { c["rope_scaling"] = linear; }));
  CHECK_FALSE(gemma2.config().local_rope);  // one Gemma2RotaryEmbedding for every layer
  for (const AttentionBlock& block : all_blocks(gemma2, ids_from(5, 6))) CHECK(block.record.rope->linear_factor == 8.0);
  const DecoderModel gemma3 = decoder_from_hf_folder(edited_folder(dir, "gemma3", [&](nlohmann::json& c) { c["rope_scaling"] = linear; }));
  const std::vector<AttentionBlock> blocks = all_blocks(gemma3, ids_from(5, 6));
  CHECK(blocks[0].record.rope->theta == 1e4);  // rotary_emb_local: rope_local_base_freq, rope_type "default"
  CHECK(blocks[0].record.rope->linear_factor == 1.0);
  CHECK(blocks[5].record.rope->theta == 1e6);
  CHECK(blocks[5].record.rope->linear_factor == 8.0);
}

TEST_CASE("families: the GELU follows each format's engine", "[model][families]") {
  // llama.cpp's float16 table for every GGUF family with a GELU; transformers' ACT2FN for folders.
  CHECK(family_gguf("gpt2").config().gelu == GeluKind::GgmlTable);
  CHECK(family_gguf("gemma2").config().gelu == GeluKind::GgmlTable);
  CHECK(decoder_from_hf_folder(test_data_file("families/gpt2-hf")).config().gelu == GeluKind::Tanh);
  CHECK(decoder_from_hf_folder(test_data_file("families/gemma3-hf")).config().gelu == GeluKind::Tanh);
  TempDir dir;
  const std::string erf = edited_folder(dir, "gpt2", [](nlohmann::json& c) { c["activation_function"] = "gelu"; });
  CHECK(decoder_from_hf_folder(erf).config().gelu == GeluKind::Erf);
  TempDir other;
  const std::string relu = edited_folder(other, "gemma2", [](nlohmann::json& c) { c["hidden_activation"] = "relu"; });
  CHECK_THAT(folder_error(relu), Contains("config.json") && Contains("/hidden_activation") && Contains("\"relu\""));
}

TEST_CASE("families: the attention scale of Gemma follows each format", "[model][families]") {
  // transformers: query_pre_attn_scalar^-½; llama.cpp: 1/√head_dim (its GGUF has no such key).
  TempDir dir;
  const std::string folder = edited_folder(dir, "gemma2", [](nlohmann::json& c) { c["query_pre_attn_scalar"] = 64; });
  const DecoderModel hf = decoder_from_hf_folder(folder);
  CHECK_THAT(*hf.config().attention_scale, Catch::Matchers::WithinAbs(0.125, 1e-12));
  CHECK_THAT(*family_gguf("gemma2").config().attention_scale, Catch::Matchers::WithinAbs(0.25, 1e-7));
  const std::vector<AttentionBlock> blocks = all_blocks(hf, ids_from(5, 6));
  CHECK_THAT(blocks[0].record.scale, Catch::Matchers::WithinAbs(0.125, 1e-7));
}

TEST_CASE("families: GPT-2 has learned positions and no RoPE, and refuses positions past its table", "[model][families]") {
  const DecoderModel model = family_gguf("gpt2");
  const std::vector<AttentionBlock> blocks = all_blocks(model, ids_from(5, 6));
  CHECK_FALSE(blocks[0].record.rope);
  ForwardRequest request;
  request.token_ids = std::vector<std::int32_t>(65, 5);  // gpt2.context_length = 64 positions
  CHECK_THROWS_WITH(model.forward(request), Contains("gpt2.gguf: position 64 is past the 64 learned positions (position_embd.weight)"));
}

TEST_CASE("families: bad GGUF settings are named with the file and key", "[model][families][errors]") {
  TempDir dir;
  SECTION("a window of 0") {
    const std::string path = patched_gguf(dir, "gemma2", metadata_entry("gemma2.attention.sliding_window", 4, 5u),
                                          metadata_entry("gemma2.attention.sliding_window", 4, 0u));
    CHECK_THAT(config_error(path), Contains("gemma2.gguf") && Contains("metadata gemma2.attention.sliding_window") && Contains("0"));
  }
  SECTION("a cap of 0 or below") {
    const float cap = GENERATE(0.0f, -4.0f);
    const std::string path = patched_gguf(dir, "gemma2", metadata_entry("gemma2.attn_logit_softcapping", 6, 4.0f),
                                          metadata_entry("gemma2.attn_logit_softcapping", 6, cap));
    CHECK_THAT(config_error(path), Contains("gemma2.gguf") && Contains("metadata gemma2.attn_logit_softcapping") &&
                                       Contains("a soft-cap > 0"));
  }
  SECTION("key/value heads that do not divide the heads") {
    const std::string path = patched_gguf(dir, "qwen2", metadata_entry("qwen2.attention.head_count_kv", 4, 2u),
                                          metadata_entry("qwen2.attention.head_count_kv", 4, 3u));
    CHECK_THAT(config_error(path), Contains("qwen2.gguf") && Contains("qwen2.attention.head_count_kv 3 does not divide qwen2.attention.head_count 4"));
  }
  SECTION("a window pattern: 0 makes every layer local, a negative one is refused") {
    const std::string key = "gemma2.attention.sliding_window_pattern";
    CHECK(family_gguf("gemma2-keys").config().sliding_window == std::vector<long>{5, 5, 0});  // period 3
    REQUIRE(family_gguf("gemma2-keys").config().local_rope);
    CHECK(family_gguf("gemma2-keys").config().local_rope->theta == 500.0);  // rope.freq_base_swa
    const std::string all = patched_gguf(dir, "gemma2-keys", metadata_entry(key, 4, 3u), metadata_entry(key, 4, 0u));
    CHECK(decoder_config_from_gguf(GgufFile(all)).sliding_window == std::vector<long>{5, 5, 5});
    TempDir other;
    const std::string negative = patched_gguf(other, "gemma2-keys", metadata_entry(key, 4, 3u), metadata_entry(key, 5, -2));
    CHECK_THAT(config_error(negative), Contains("gemma2-keys.gguf") && Contains("metadata " + key) && Contains("-2"));
  }
  SECTION("a local RoPE base of 0 or below") {
    const float base = GENERATE(0.0f, -500.0f);
    const std::string path = patched_gguf(dir, "gemma2-keys", metadata_entry("gemma2.rope.freq_base_swa", 6, 500.0f),
                                          metadata_entry("gemma2.rope.freq_base_swa", 6, base));
    CHECK_THAT(config_error(path), Contains("gemma2-keys.gguf") && Contains("gemma2.rope.freq_base_swa") && Contains("a finite number > 0"));
  }
  SECTION("Gemma 3 without its window") {
    const std::string path = patched_gguf(dir, "gemma3", "gemma3.attention.sliding_window", "gemma3.attention.sliding_windoX");
    CHECK_THAT(config_error(path), Contains("gemma3.gguf") && Contains("missing metadata gemma3.attention.sliding_window"));
  }
  SECTION("a family's tensor missing is named with the family") {
    const std::string path = patched_gguf(dir, "qwen3", "blk.1.attn_k_norm.weight", "blk.1.attn_k_norX.weight");
    CHECK_THROWS_WITH(decoder_from_gguf(std::make_shared<const GgufFile>(path)),
                      Contains("qwen3.gguf: tensor blk.1.attn_k_norm.weight is missing (architecture qwen3 needs it)"));
  }
  SECTION("a key the family does not know is named in a warning") {
    const std::string path = patched_gguf(dir, "qwen2", "qwen2.context_length", "qwen2.context_lengtX");
    const DecoderConfig c = decoder_config_from_gguf(GgufFile(path));
    REQUIRE(c.warnings.size() == 1);
    CHECK_THAT(c.warnings[0], Contains("metadata attnviz does not know for architecture qwen2, ignored: qwen2.context_lengtX"));
  }
}

TEST_CASE("families: bad config.json settings are named with the file and key", "[model][families][errors]") {
  TempDir dir;
  SECTION("a window of 0") {
    const std::string folder = edited_folder(dir, "mistral", [](nlohmann::json& c) { c["sliding_window"] = 0; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/sliding_window") && Contains("a window of at least 1 token"));
  }
  SECTION("a cap of 0") {
    const std::string folder = edited_folder(dir, "gemma2", [](nlohmann::json& c) { c["final_logit_softcapping"] = 0; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/final_logit_softcapping") && Contains("a soft-cap > 0"));
  }
  SECTION("layer_types of another length than the layers") {
    const std::string folder = edited_folder(dir, "gemma2", [](nlohmann::json& c) {
      c["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention"};
    });
    CHECK_THAT(folder_error(folder), Contains("config.json: /layer_types has 3 entries but /num_hidden_layers is 2"));
  }
  SECTION("a layer type that is neither") {
    const std::string folder = edited_folder(dir, "gemma2", [](nlohmann::json& c) { c["layer_types"] = {"sliding_attention", "chunked_attention"}; });
    CHECK_THAT(folder_error(folder), Contains("/layer_types/1") && Contains("chunked_attention"));
  }
  SECTION("Qwen's use_sliding_window") {
    const std::string folder = edited_folder(dir, "qwen2", [](nlohmann::json& c) { c["use_sliding_window"] = true; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/use_sliding_window"));
  }
  SECTION("GPT-2's scale by the inverse layer index") {
    const std::string folder = edited_folder(dir, "gpt2", [](nlohmann::json& c) { c["scale_attn_by_inverse_layer_idx"] = true; });
    CHECK_THAT(folder_error(folder), Contains("config.json") && Contains("/scale_attn_by_inverse_layer_idx"));
  }
  SECTION("heads that do not divide") {
    const std::string folder = edited_folder(dir, "qwen3", [](nlohmann::json& c) { c["num_key_value_heads"] = 3; });
    CHECK_THAT(folder_error(folder), Contains("/num_key_value_heads 3 does not divide /num_attention_heads 4"));
    const std::string gpt2 = edited_folder(dir, "gpt2", [](nlohmann::json& c) { c["n_head"] = 5; });
    CHECK_THAT(folder_error(gpt2), Contains("/n_head 5 does not divide /n_embd 32"));
  }
}

TEST_CASE("families: layer_types in config.json chooses the sliding-window layers", "[model][families]") {
  TempDir dir;
  const std::string folder = edited_folder(dir, "gemma2", [](nlohmann::json& c) { c["layer_types"] = {"full_attention", "sliding_attention"}; });
  CHECK(decoder_from_hf_folder(folder).config().sliding_window == std::vector<long>{0, 5});
  CHECK(decoder_from_hf_folder(test_data_file("families/gemma2-hf")).config().sliding_window == std::vector<long>{5, 0});
}

TEST_CASE("families: a window layer's title and dump say the window and the cap, and a dump reads them back", "[model][families]") {
  const std::vector<AttentionBlock> blocks = all_blocks(family_gguf("gemma2"), ids_from(5, 8));
  const AttentionRecord& local = blocks[0].record;
  CHECK_THAT(heatmap_figure_title(local), Contains(" · causal mask · sliding window 5 · scores soft-capped at 4"));
  CHECK_THAT(heatmap_figure_title(blocks[1].record), !Contains("sliding window"));
  std::vector<std::string> warnings;
  const AttentionRecord back = record_from_json(nlohmann::json::parse(record_to_json(local)), "dump.json", warnings);
  CHECK(warnings.empty());
  CHECK(back.sliding_window == 5);
  CHECK(back.logit_softcap == 4.0);
  CHECK(back.allowed() == local.allowed());
  nlohmann::json bad = nlohmann::json::parse(record_to_json(local));
  bad["sliding_window"] = 0;
  CHECK_THROWS_WITH(record_from_json(bad, "dump.json", warnings), Contains("dump.json") && Contains("/sliding_window"));
}

TEST_CASE("families: llama.cpp's Gemma scale is 1/sqrt(d_model / heads) for the 27B models only", "[model][families]") {
  // llama-model.cpp: LLM_TYPE_27B (Gemma 2: 46 layers, Gemma 3: 62) uses n_embd / n_head, whose
  // 4608 / 32 = 144 differs from head_dim 128; every other size uses 1/sqrt(head_dim).
  DecoderConfig c;
  c.d_model = 4608;
  c.num_heads = 32;
  c.d_k = 128;
  for (const auto& [architecture, layers27b] : {std::pair<std::string, int>{"gemma2", 46}, {"gemma3", 62}}) {
    INFO(architecture);
    c.architecture = architecture;
    c.num_layers = layers27b;
    CHECK_THAT(gemma_gguf_scale(c), Catch::Matchers::WithinAbs(1.0 / 12.0, 1e-7));
    c.num_layers = layers27b - 4;
    CHECK_THAT(gemma_gguf_scale(c), Catch::Matchers::WithinAbs(1.0 / std::sqrt(128.0), 1e-7));
  }
}

TEST_CASE("families: tensors the architecture does not read are named in a warning, never dropped in silence", "[model][errors]") {
  // A config.json that says fewer layers than the folder holds: layer 1's tensors are not read.
  TempDir dir;
  const std::string folder = edited_folder(dir, "gemma2", [](nlohmann::json& c) {
    c["num_hidden_layers"] = 1;
    if (c.contains("layer_types")) c["layer_types"] = nlohmann::json::array({c["layer_types"][0]});
  });
  const DecoderModel model = decoder_from_hf_folder(folder);
  REQUIRE_FALSE(model.config().warnings.empty());
  CHECK_THAT(model.config().warnings.back(), Contains("that architecture gemma2 with 1 layers does not read, ignored: model.layers.1."));
  // Every bundled family file is read whole: no warning.
  for (const char* family : {"gemma2", "gemma3", "gpt2", "mistral", "phi3", "qwen2", "qwen3"}) {
    INFO(family);
    const DecoderModel whole = decoder_from_hf_folder(test_data_file(std::string("families/") + family + "-hf"));
    for (const std::string& w : whole.config().warnings) CHECK_THAT(w, !Contains("does not read"));
  }
}

namespace {
// The warnings of a folder's model that name config.json members (hf_config_keys).
std::vector<std::string> member_warnings(const std::vector<std::string>& warnings) {
  std::vector<std::string> named;
  for (const std::string& w : warnings)
    if (w.find("config.json members") != std::string::npos || w.find("/architectures lists") != std::string::npos) named.push_back(w);
  return named;
}
}  // namespace

TEST_CASE("families: config.json members no reader looks at are named in one warning", "[model][families][errors]") {
  TempDir dir;
  const std::string folder = edited_folder(dir, "gemma2", [](nlohmann::json& c) {
    c["use_bidirectional_attention"] = true;  // not Gemma 2's: transformers' Gemma2Config would ignore it too
    c["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}, {"beta_fast", 32}};
    c["bos_token_id"] = 2;  // harmless
  });
  const std::vector<std::string> named = member_warnings(decoder_from_hf_folder(folder).config().warnings);
  REQUIRE(named.size() == 1);
  CHECK(named[0] == folder + "/config.json: config.json members attnviz does not read for Gemma2ForCausalLM, ignored: "
                             "/rope_scaling/beta_fast, /use_bidirectional_attention");
}

TEST_CASE("families: every bundled config.json, and the members real Hub configs carry, give no member warning",
          "[model][families]") {
  // The members of real configs (Qwen2.5-0.5B, Qwen3-0.6B, gemma-2-2b, gemma-3-1b-it,
  // Phi-3-mini-4k-instruct, Mistral-7B-v0.1, gpt2, bert-base-uncased) that the bundled
  // synthetic ones leave out, with the values those files have.
  using json = nlohmann::json;
  const json common = {{"_name_or_path", "x"},  {"transformers_version", "4.51.3"}, {"use_cache", true},
                       {"bos_token_id", 1},     {"eos_token_id", json::array({1, 2})}, {"pad_token_id", 0},
                       {"initializer_range", 0.02}, {"attention_dropout", 0.0}, {"torch_dtype", "bfloat16"}};
  const std::map<std::string, json> own = {
      {"qwen2", {{"hidden_act", "silu"}, {"max_window_layers", 21}, {"sliding_window", 32768}, {"rope_scaling", nullptr}}},
      {"qwen3", {{"hidden_act", "silu"}, {"attention_bias", false}, {"max_window_layers", 28}, {"sliding_window", nullptr},
                 {"layer_types", {"full_attention", "full_attention"}}}},
      {"gemma2", {{"hidden_act", "gelu_pytorch_tanh"}, {"attention_bias", false}, {"cache_implementation", "hybrid"}}},
      {"gemma3", {{"attention_bias", false}, {"cache_implementation", "hybrid"}, {"rope_scaling", nullptr},
                  {"use_bidirectional_attention", false}}},
      {"phi3", {{"hidden_act", "silu"}, {"auto_map", {{"AutoConfig", "configuration_phi3.Phi3Config"}}}, {"embd_pdrop", 0.0},
                {"resid_pdrop", 0.0}, {"original_max_position_embeddings", 4096}, {"rope_scaling", nullptr}}},
      {"mistral", {{"hidden_act", "silu"}}},
      {"gpt2", {{"attn_pdrop", 0.1}, {"embd_pdrop", 0.1}, {"resid_pdrop", 0.1}, {"n_ctx", 1024}, {"summary_activation", nullptr},
                {"summary_first_dropout", 0.1}, {"summary_proj_to_labels", true}, {"summary_type", "cls_index"},
                {"summary_use_proj", true}, {"task_specific_params", {{"text-generation", {{"do_sample", true}}}}}}}};
  for (const auto& entry : own) {
    const std::string& family = entry.first;
    const json& members = entry.second;  // a named reference: clang 14 cannot capture a structured binding
    INFO(family);
    CHECK(member_warnings(decoder_from_hf_folder(test_data_file("families/" + family + "-hf")).config().warnings).empty());
    TempDir dir;
    const std::string folder = edited_folder(dir, family, [&](json& c) {
      c.update(common);
      c.update(members);
    });
    CHECK(member_warnings(decoder_from_hf_folder(folder).config().warnings).empty());
  }
  CHECK(member_warnings(decoder_from_hf_folder(test_data_file("stories260k/hf-safetensors")).config().warnings).empty());
}

TEST_CASE("families: a config.json naming several architectures says which one is read", "[model][families]") {
  TempDir dir;
  const std::string folder = edited_folder(dir, "mistral", [](nlohmann::json& c) {
    c["architectures"] = {"MistralForCausalLM", "MistralForSequenceClassification"};
  });
  const std::vector<std::string> named = member_warnings(decoder_from_hf_folder(folder).config().warnings);
  REQUIRE(named.size() == 1);
  CHECK(named[0] == folder + "/config.json: /architectures lists MistralForCausalLM, MistralForSequenceClassification: attnviz "
                             "reads MistralForCausalLM (the first), not MistralForSequenceClassification");
}

TEST_CASE("families: a setting that would change the mask, met among the members, is refused naming it", "[model][families][errors]") {
  TempDir dir;
  SECTION("Qwen's layer_types with a sliding layer") {
    const std::string folder = edited_folder(dir, "qwen3", [](nlohmann::json& c) { c["layer_types"] = {"full_attention", "sliding_attention"}; });
    CHECK_THAT(folder_error(folder), Contains("config.json: /layer_types/1: expected \"full_attention\"") && Contains("\"sliding_attention\""));
  }
  SECTION("Gemma 3's bidirectional attention") {
    const std::string folder = edited_folder(dir, "gemma3", [](nlohmann::json& c) { c["use_bidirectional_attention"] = true; });
    CHECK_THAT(folder_error(folder), Contains("config.json: /use_bidirectional_attention: expected false"));
  }
}

// Issue 25: the rollout of a windowed model. Â_l of a window layer masks the keys outside its
// window, so R_0 gives them exactly 0; through a later global layer they are reached, and the
// picture of R masks only what every layer masks (the causal triangle), not the window.
TEST_CASE("families: rollout on a sliding-window model masks each window layer's Â, the picture only the causal cells",
          "[model][families][rollout]") {
  const std::vector<AttentionBlock> blocks = all_blocks(family_gguf("gemma2"), ids_from(5, 9));  // layer 0: window 5; layer 1: global
  REQUIRE(blocks[0].record.sliding_window == 5);
  REQUIRE(blocks[1].record.sliding_window == 0);
  RolloutCollector rollout(Options{}, true);
  rollout.add(blocks[0]);
  rollout.add(blocks[1]);
  const nlohmann::json r = nlohmann::json::parse(rollout.json_text());
  // Query 8 of layer 0 sees keys 4 … 8 (i − W < j ≤ i).
  for (int key = 0; key < 4; ++key) CHECK(r[0][8][key].get<double>() == 0.0);
  CHECK(r[0][8][4].get<double>() > 0.0);
  CHECK(r[1][8][0].get<double>() > 0.0);  // reached through layer 1's global attention
  const MaskMatrix& shown = rollout.picture_allowed();
  CHECK(shown(8, 0) == 1);  // outside layer 0's window, yet not masked in R_1's picture
  CHECK(shown(0, 8) == 0);  // causal: masked
  // A window as the last layer (only layer 0 run): the picture still masks only the causal cells.
  RolloutCollector first(Options{}, false);
  first.add(blocks[0]);
  CHECK(first.picture_allowed()(8, 0) == 1);
  CHECK(first.picture_allowed()(0, 8) == 0);
  CHECK(blocks[0].record.allowed()(8, 0) == 0);  // while the layer's own record masks it
}

// Issue 25, bad input: a per-layer list of layer types of the wrong length, through the whole
// command: one line naming the file and the key, exit 1, nothing written.
TEST_CASE("families: a layer_types list whose length is not the layer count stops dump with one line, nothing written",
          "[model][families][errors][cli]") {
  TempDir dir;
  const std::string family = GENERATE(std::string("gemma2"), std::string("gemma3"));
  const std::string folder = edited_folder(dir, family, [](nlohmann::json& c) {
    c["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention"};
  });
  Options o;
  o.command = Command::Dump;
  o.model = folder;
  o.token_ids = std::vector<int>{1, 5, 6};
  o.output = dir.file("dump.json");
  o.threads = 1;
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == kExitInputError);
  const std::string layers = family == "gemma2" ? "2" : "6";
  CHECK(r.err == "attnviz: error: " + folder + "/config.json: /layer_types has 3 entries but /num_hidden_layers is " + layers + "\n");
  CHECK(!fs::exists(dir.file("dump.json")));
}
