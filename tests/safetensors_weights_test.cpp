// Issue 37: tied checkpoints. A Hugging Face folder whose input embedding and output projection
// are one matrix is saved under either name: safetensors.torch.save_model keeps the first name in
// sorted order (lm_head.weight) and records the other in __metadata__, transformers'
// save_pretrained keeps the embedding, and other writers keep either without a word; config.json's
// tie_word_embeddings says they are one. Each layout (scripts/tied_checkpoint.py) must give the
// untied model's attention and logits exactly, for every family read from folders, and a tie or
// alias that cannot hold is refused naming both tensors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/formats/safetensors_file.hpp"
#include "model/hf_decoder.hpp"
#include "model/hf_encoder.hpp"
#include "support/scripts.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::TempDir;
using attnviz::test::test_data_file;

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kLayouts = {"save_model", "output_only", "embedding_only"};

// Every layer's attention and the last logits of one forward pass.
struct Run {
  std::vector<AttentionBlock> blocks;
  std::vector<float> logits;
};

Run run_decoder(const DecoderModel& model, const std::vector<std::int32_t>& ids) {
  Run run;
  ForwardRequest request;
  request.token_ids = ids;
  request.tokens.assign(ids.size(), "t");
  const BlockSink sink = [&](AttentionBlock&& block) { run.blocks.push_back(std::move(block)); };
  request.sink = &sink;
  run.logits = model.forward(request);
  return run;
}

std::vector<AttentionBlock> run_encoder(const EncoderModel& model, const std::vector<std::int32_t>& ids) {
  std::vector<AttentionBlock> blocks;
  EncoderRequest request;
  request.token_ids = ids;
  request.tokens.assign(ids.size(), "t");
  const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
  request.sink = &sink;
  model.forward(request);
  return blocks;
}

// Equal to the last bit: the same matrix read under another name is the same numbers.
void check_same_attention(const std::vector<AttentionBlock>& a, const std::vector<AttentionBlock>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t l = 0; l < a.size(); ++l) {
    REQUIRE(a[l].record.weights.size() == b[l].record.weights.size());
    for (std::size_t h = 0; h < a[l].record.weights.size(); ++h) {
      INFO("layer " << l << " head " << h << ": max |difference| " << attnviz::test::max_abs_diff(a[l].record.weights[h], b[l].record.weights[h]));
      CHECK(a[l].record.weights[h] == b[l].record.weights[h]);
    }
  }
}

void check_same_run(const Run& a, const Run& b) {
  check_same_attention(a.blocks, b.blocks);
  REQUIRE(!a.logits.empty());
  CHECK(a.logits == b.logits);
}

void check_no_unread_warning(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) CHECK_THAT(w, !Catch::Matchers::Contains("does not read"));
}

std::string decoder_error(const std::string& folder) {
  try {
    decoder_from_hf_folder(folder);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// One tensor of a safetensors file to write: name, shape and raw F32 bytes.
struct TensorBytes {
  std::string name;
  std::vector<std::int64_t> shape;
  std::string bytes;
};

std::vector<TensorBytes> tensors_of(const std::string& path) {
  const SafetensorsFile file(path);
  std::vector<TensorBytes> tensors;
  for (const auto& [name, tensor] : file.tensors())
    tensors.push_back({name, tensor.shape, std::string(reinterpret_cast<const char*>(tensor.data), tensor.bytes)});
  return tensors;
}

// A safetensors file of F32 `tensors` with `metadata` as __metadata__ (none when null).
void write_safetensors(const std::string& path, const std::vector<TensorBytes>& tensors, const nlohmann::json& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  std::string data;
  for (const TensorBytes& t : tensors) {
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  const std::string text = header.dump();
  const std::uint64_t length = text.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&length), 8);
  out << text << data;
}

std::vector<TensorBytes> without(std::vector<TensorBytes> tensors, const std::vector<std::string>& names) {
  std::erase_if(tensors, [&](const TensorBytes& t) { return std::find(names.begin(), names.end(), t.name) != names.end(); });
  return tensors;
}

TensorBytes& named(std::vector<TensorBytes>& tensors, const std::string& name) {
  const auto it = std::find_if(tensors.begin(), tensors.end(), [&](const TensorBytes& t) { return t.name == name; });
  REQUIRE(it != tensors.end());
  return *it;
}

// qwen2's folder (lm_head.weight and model.embed_tokens.weight both stored, [48, 32]) rewritten
// into dir/NAME with `tensors`, `metadata` and tie_word_embeddings = `tied`.
std::string qwen2_folder(const TempDir& dir, const std::string& name, const std::vector<TensorBytes>& tensors,
                         const nlohmann::json& metadata, bool tied) {
  const fs::path folder = dir.path() / name;
  fs::create_directories(folder);
  write_safetensors((folder / "model.safetensors").string(), tensors, metadata);
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(test_data_file("families/qwen2-hf/config.json")));
  config["tie_word_embeddings"] = tied;
  std::ofstream(folder / "config.json") << config.dump();
  return folder.string();
}

const std::vector<std::int32_t> kStoryIds = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426};

}  // namespace

// The issue's case: a tied Llama as save_model writes it was refused with "tensor
// model.embed_tokens.weight is missing (architecture llama needs it)".
TEST_CASE("tied checkpoints: stories260K saved by safetensors' save_model gives the untied model's attention and logits exactly",
          "[model][tied]") {
  TempDir dir;
  attnviz::test::run_script("tied_checkpoint.py", {test_data_file("stories260k/hf-safetensors"), dir.path().string()});
  // The layout save_model writes: lm_head.weight stored, the embedding an alias in __metadata__.
  const SafetensorsFile saved(dir.file("save_model/model.safetensors"));
  CHECK(saved.find("lm_head.weight") != nullptr);
  CHECK(saved.find("model.embed_tokens.weight") == nullptr);
  CHECK(saved.metadata() == std::map<std::string, std::string, std::less<>>{{"model.embed_tokens.weight", "lm_head.weight"}});
  const DecoderModel untied = decoder_from_hf_folder(dir.file("untied"));
  REQUIRE(!untied.config().tied_output);
  const Run expected = run_decoder(untied, kStoryIds);
  for (const std::string& layout : kLayouts) {
    INFO(layout);
    const DecoderModel tied = decoder_from_hf_folder(dir.file(layout));
    CHECK(tied.config().tied_output);
    check_no_unread_warning(tied.config().warnings);
    check_same_run(run_decoder(tied, kStoryIds), expected);
  }
  // The attention reads only the embedding, which is the original folder's: llama.cpp's (hf_decoder_test).
  check_same_attention(run_decoder(decoder_from_hf_folder(test_data_file("stories260k/hf-safetensors")), kStoryIds).blocks,
                       expected.blocks);
}

TEST_CASE("tied checkpoints: every family's folder in every tied layout gives its untied equivalent's attention and logits",
          "[model][tied][families]") {
  for (const char* family : {"qwen2", "qwen3", "mistral", "gemma2", "gemma3", "phi3", "gpt2"}) {
    INFO(family);
    TempDir dir;
    attnviz::test::run_script("tied_checkpoint.py", {test_data_file(std::string("families/") + family + "-hf"), dir.path().string()});
    const std::vector<std::int32_t> ids = {1, 5, 6, 7, 8, 9, 10, 11};
    const Run expected = run_decoder(decoder_from_hf_folder(dir.file("untied")), ids);
    for (const std::string& layout : kLayouts) {
      INFO(layout);
      const DecoderModel tied = decoder_from_hf_folder(dir.file(layout));
      check_no_unread_warning(tied.config().warnings);
      check_same_run(run_decoder(tied, ids), expected);
    }
  }
}

// BertForMaskedLM's MLM decoder is tied to the word embeddings: save_model keeps
// bert.embeddings.word_embeddings.weight and records cls.predictions.decoder.weight (and the
// decoder's bias) as aliases; a folder storing only the decoder gives the embeddings from it.
TEST_CASE("tied checkpoints: a BertForMaskedLM folder storing its word embeddings as the tied MLM decoder gives the same attention",
          "[model][tied][encoder]") {
  TempDir dir;
  attnviz::test::run_script("tied_checkpoint.py", {test_data_file("bert/hf"), dir.path().string()});
  CHECK(SafetensorsFile(dir.file("save_model/model.safetensors")).metadata() ==
        std::map<std::string, std::string, std::less<>>{{"cls.predictions.decoder.bias", "cls.predictions.bias"},
                                                        {"cls.predictions.decoder.weight", "bert.embeddings.word_embeddings.weight"}});
  const std::vector<std::int32_t> ids = {2, 7, 12, 9, 30, 5, 18, 3};
  const std::vector<AttentionBlock> expected = run_encoder(encoder_from_hf_folder(dir.file("untied")), ids);
  check_same_attention(run_encoder(encoder_from_hf_folder(test_data_file("bert/hf")), ids), expected);
  for (const std::string& layout : kLayouts) {
    INFO(layout);
    check_same_attention(run_encoder(encoder_from_hf_folder(dir.file(layout)), ids), expected);
  }
}

TEST_CASE("tied checkpoints: __metadata__ aliases are followed whatever the tie, and free-text metadata is not an alias",
          "[model][tied]") {
  TempDir dir;
  const std::vector<TensorBytes> all = tensors_of(test_data_file("families/qwen2-hf/model.safetensors"));
  const std::vector<std::int32_t> ids = {1, 5, 6, 7, 8};
  // lm_head.weight's values in both places: the untied model the aliases must reproduce.
  std::vector<TensorBytes> same = all;
  named(same, "lm_head.weight").bytes = named(same, "model.embed_tokens.weight").bytes;
  const Run expected = run_decoder(decoder_from_hf_folder(qwen2_folder(dir, "untied", same, nullptr, false)), ids);
  const std::vector<TensorBytes> no_output = without(same, {"lm_head.weight"});
  const nlohmann::json aliased = {{"format", "pt"}, {"lm_head.weight", "model.embed_tokens.weight"}};
  SECTION("an alias with tie_word_embeddings false: the file says the two names share their bytes") {
    check_same_run(run_decoder(decoder_from_hf_folder(qwen2_folder(dir, "alias", no_output, aliased, false)), ids), expected);
  }
  SECTION("an alias of an alias") {
    const nlohmann::json chain = {{"lm_head.weight", "wte"}, {"wte", "model.embed_tokens.weight"}};
    check_same_run(run_decoder(decoder_from_hf_folder(qwen2_folder(dir, "chain", no_output, chain, false)), ids), expected);
  }
  SECTION("keys that name no tensor the model reads are the writer's notes, never aliases") {
    const nlohmann::json notes = {{"format", "pt"}, {"note", "lm_head.weight"}, {"source", "missing.weight"}};
    check_same_run(run_decoder(decoder_from_hf_folder(qwen2_folder(dir, "notes", same, notes, false)), ids), expected);
    CHECK(decoder_error(qwen2_folder(dir, "notes_untied", no_output, notes, false)) ==
          dir.file("notes_untied/model.safetensors") +
              ": tensor lm_head.weight (model.embed_tokens.weight is stored, but config.json's tie_word_embeddings is false, so it "
              "does not stand in) is missing (architecture qwen2 needs it)");
  }
  SECTION("a tied output stored anyway is named as not read, as before") {
    const DecoderModel both = decoder_from_hf_folder(qwen2_folder(dir, "both", same, nullptr, true));
    REQUIRE(!both.config().warnings.empty());
    CHECK_THAT(both.config().warnings.back(), Catch::Matchers::EndsWith("does not read, ignored: lm_head.weight"));
  }
}

TEST_CASE("tied checkpoints: an alias across the shards of model.safetensors.index.json is followed, two different ones refused",
          "[model][tied]") {
  TempDir dir;
  std::vector<TensorBytes> all = tensors_of(test_data_file("families/qwen2-hf/model.safetensors"));
  named(all, "lm_head.weight").bytes = named(all, "model.embed_tokens.weight").bytes;
  const std::vector<std::int32_t> ids = {1, 5, 6, 7, 8};
  const Run expected = run_decoder(decoder_from_hf_folder(qwen2_folder(dir, "stored", all, nullptr, true)), ids);
  const fs::path folder = dir.path() / "sharded";
  fs::create_directories(folder);
  fs::copy_file(dir.file("stored/config.json"), folder / "config.json");
  std::vector<TensorBytes> first, second;
  nlohmann::json weight_map = nlohmann::json::object();
  for (const TensorBytes& t : all) {
    if (t.name == "model.embed_tokens.weight") continue;
    (t.name == "lm_head.weight" ? second : first).push_back(t);
    weight_map[t.name] = t.name == "lm_head.weight" ? "model-2.safetensors" : "model-1.safetensors";
  }
  const auto write = [&](const nlohmann::json& metadata_1, const nlohmann::json& metadata_2, const nlohmann::json& map) {
    write_safetensors((folder / "model-1.safetensors").string(), first, metadata_1);
    write_safetensors((folder / "model-2.safetensors").string(), second, metadata_2);
    std::ofstream(folder / "model.safetensors.index.json") << nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", map}}.dump();
  };
  const nlohmann::json alias = {{"model.embed_tokens.weight", "lm_head.weight"}};
  write(alias, {{"format", "pt"}}, weight_map);
  check_same_run(run_decoder(decoder_from_hf_folder(folder.string()), ids), expected);
  // The weight_map may list the alias under the shard that records it.
  nlohmann::json with_alias = weight_map;
  with_alias["model.embed_tokens.weight"] = "model-1.safetensors";
  write(alias, {{"format", "pt"}}, with_alias);
  check_same_run(run_decoder(decoder_from_hf_folder(folder.string()), ids), expected);
  write(alias, {{"model.embed_tokens.weight", "model.norm.weight"}}, weight_map);
  CHECK(decoder_error(folder.string()) == (folder / "model.safetensors.index.json").string() +
                                              ": tensor model.embed_tokens.weight is an alias of lm_head.weight in the __metadata__ of " +
                                              (folder / "model-1.safetensors").string() + ", but of model.norm.weight in that of " +
                                              (folder / "model-2.safetensors").string());
  write({{"model.embed_tokens.weight", "lm_head"}}, {}, weight_map);
  CHECK(decoder_error(folder.string()) == (folder / "model-1.safetensors").string() +
                                              ": __metadata__ makes tensor model.embed_tokens.weight an alias of lm_head, but no shard "
                                              "holds tensor lm_head");
}

// Issue 37: each refusal names both tensors.
TEST_CASE("tied checkpoints: a tie the shapes contradict, an alias to a missing tensor and an alias cycle are refused naming both",
          "[model][tied][errors]") {
  TempDir dir;
  const std::vector<TensorBytes> all = tensors_of(test_data_file("families/qwen2-hf/model.safetensors"));
  const std::vector<TensorBytes> no_embedding = without(all, {"model.embed_tokens.weight"});
  const auto at = [&](const std::string& name) { return dir.file(name + "/model.safetensors") + ": "; };
  // lm_head.weight cut to 47 of its 48 rows.
  std::vector<TensorBytes> short_output = all;
  TensorBytes& output = named(short_output, "lm_head.weight");
  output.shape = {47, 32};
  output.bytes.resize(47 * 32 * 4);
  CHECK(decoder_error(qwen2_folder(dir, "tie_shapes", short_output, nullptr, true)) ==
        at("tie_shapes") + "tensor model.embed_tokens.weight [48, 32] and tensor lm_head.weight [47, 32] have different shapes, but "
                           "config.json's tie_word_embeddings makes them one matrix");
  CHECK(decoder_error(qwen2_folder(dir, "tie_shape", without(short_output, {"model.embed_tokens.weight"}), nullptr, true)) ==
        at("tie_shape") + "tensor model.embed_tokens.weight (absent; config.json's tie_word_embeddings ties it to lm_head.weight): "
                          "expected shape [48, 32] (from the model's settings), got [47, 32]");
  const nlohmann::json to_norm = {{"model.embed_tokens.weight", "model.norm.weight"}};
  CHECK(decoder_error(qwen2_folder(dir, "alias_shape", no_embedding, to_norm, false)) ==
        at("alias_shape") + "tensor model.embed_tokens.weight (an alias of model.norm.weight in __metadata__): expected shape [48, 32] "
                            "(from the model's settings), got [32]");
  CHECK(decoder_error(qwen2_folder(dir, "alias_tie_shapes", no_embedding, to_norm, true)) ==
        at("alias_tie_shapes") + "tensor model.embed_tokens.weight (an alias of model.norm.weight in __metadata__) [32] and tensor "
                                 "lm_head.weight [48, 32] have different shapes, but config.json's tie_word_embeddings makes them one matrix");
  CHECK(decoder_error(qwen2_folder(dir, "missing", no_embedding, {{"model.embed_tokens.weight", "lm_head.weights"}}, true)) ==
        at("missing") + "__metadata__ makes tensor model.embed_tokens.weight an alias of lm_head.weights, but the file holds no tensor "
                        "lm_head.weights");
  CHECK(decoder_error(qwen2_folder(dir, "missing_chain", no_embedding,
                                   {{"model.embed_tokens.weight", "wte.weight"}, {"wte.weight", "gone.weight"}}, true)) ==
        at("missing_chain") + "__metadata__ makes tensor wte.weight an alias of gone.weight, but the file holds no tensor gone.weight "
                              "(model.embed_tokens.weight -> wte.weight -> gone.weight)");
  const std::vector<TensorBytes> neither = without(all, {"model.embed_tokens.weight", "lm_head.weight"});
  CHECK(decoder_error(qwen2_folder(dir, "cycle", neither,
                                   {{"model.embed_tokens.weight", "lm_head.weight"}, {"lm_head.weight", "model.embed_tokens.weight"}}, true)) ==
        at("cycle") + "__metadata__'s aliases go round in a cycle, model.embed_tokens.weight -> lm_head.weight -> "
                      "model.embed_tokens.weight, and no tensor holds their bytes");
  CHECK(decoder_error(qwen2_folder(dir, "self", no_embedding, {{"model.embed_tokens.weight", "model.embed_tokens.weight"}}, true)) ==
        at("self") + "__metadata__'s aliases go round in a cycle, model.embed_tokens.weight -> model.embed_tokens.weight, and no tensor "
                     "holds its bytes");
  CHECK(decoder_error(qwen2_folder(dir, "neither", neither, {{"format", "pt"}}, true)) ==
        at("neither") + "tensor model.embed_tokens.weight (nor lm_head.weight, which config.json's tie_word_embeddings ties to it) is "
                        "missing (architecture qwen2 needs it)");
}
