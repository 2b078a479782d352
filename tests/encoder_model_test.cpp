// The BERT encoder (issue 25): a synthetic bert GGUF (scripts/bert_gguf_writer.py) against
// llama.cpp's own attention for it (tests/data/bert), bidirectional rows, token types, and the
// bad inputs named.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run.hpp"
#include "core/error.hpp"
#include "model/gguf_decoder.hpp"
#include "model/gguf_encoder.hpp"
#include "model/hf_encoder.hpp"
#include "support/run_support.hpp"
#include "support/scripts.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::TempDir;
using attnviz::test::test_data_file;
using Catch::Matchers::Contains;

namespace {

const std::string kBert = "bert/synthetic-bert.gguf";

std::vector<AttentionBlock> run_bert(const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& types = {}) {
  const EncoderModel model = encoder_from_gguf(std::make_shared<const GgufFile>(test_data_file(kBert)));
  std::vector<AttentionBlock> blocks;
  const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
  EncoderRequest request;
  request.token_ids = ids;
  request.token_types = types;
  request.tokens.assign(ids.size(), "t");
  request.sink = &sink;
  model.forward(request);
  return blocks;
}

// A GGUF's tensors with one of them hidden, for the missing-tensor message.
class WithoutTensor : public WeightSource {
 public:
  WithoutTensor(std::unique_ptr<WeightSource> inner, std::string hidden) : inner_(std::move(inner)), hidden_(std::move(hidden)) {}
  Matrix matrix(const std::string& name, long rows, long cols) const override { return inner_->matrix(name, rows, cols); }
  Vector vector(const std::string& name, long n) const override { return inner_->vector(name, n); }
  bool has(const std::string& name) const override { return name != hidden_ && inner_->has(name); }
  std::vector<std::int64_t> shape(const std::string& name) const override {
    return name == hidden_ ? std::vector<std::int64_t>{} : inner_->shape(name);
  }
  std::string describe(const std::string& name) const override { return inner_->describe(name); }

 private:
  std::unique_ptr<WeightSource> inner_;
  std::string hidden_;
};

}  // namespace

TEST_CASE("encoder: a synthetic bert GGUF gives llama.cpp's attention for every layer and head", "[model][encoder][golden]") {
  const nlohmann::json reference = nlohmann::json::parse(attnviz::test::read_file(test_data_file("bert/llamacpp-attention.json")));
  const std::vector<std::int32_t> ids = reference["token_ids"];
  const std::vector<AttentionBlock> blocks = run_bert(ids);
  REQUIRE(blocks.size() == 2);
  double worst = 0;
  for (const AttentionBlock& b : blocks) {
    CHECK(b.stack == "encoder");
    CHECK(!b.record.causal);
    REQUIRE(b.record.weights.size() == 4);
    for (int h = 0; h < 4; ++h)
      for (std::size_t q = 0; q < ids.size(); ++q)
        for (std::size_t k = 0; k < ids.size(); ++k)
          worst = std::max(worst, std::abs(reference["attention"][b.layer][h][q][k].get<double>() -
                                           b.record.weights[static_cast<std::size_t>(h)](static_cast<long>(q), static_cast<long>(k))));
  }
  // llama.cpp's GELU is a float16 table of the tanh approximation; attnviz's is exact.
  INFO("max |attnviz - llama.cpp| = " << worst);
  CHECK(worst < 1e-6);  // llama.cpp's float16 GELU table too (model/ggml_gelu); the tanh formula missed by 2e-5
}

TEST_CASE("encoder: attention is bidirectional (weight above the diagonal) and rows sum to one", "[model][encoder]") {
  const std::vector<AttentionBlock> blocks = run_bert({2, 7, 12, 9, 30, 3});
  double above = 0;
  for (const AttentionBlock& b : blocks)
    for (const Matrix& w : b.record.weights) {
      for (Eigen::Index q = 0; q < w.rows(); ++q) {
        CHECK_THAT(w.row(q).sum(), Catch::Matchers::WithinAbs(1.0, 1e-5));
        for (Eigen::Index k = q + 1; k < w.cols(); ++k) above += w(q, k);
      }
    }
  CHECK(above > 1.0);
}

TEST_CASE("encoder: token types change the embeddings, and of the wrong length or value are refused", "[model][encoder][errors]") {
  const std::vector<std::int32_t> ids = {2, 7, 12, 3, 9, 30, 3};
  const std::vector<AttentionBlock> segment_a = run_bert(ids);
  const std::vector<AttentionBlock> explicit_a = run_bert(ids, {0, 0, 0, 0, 0, 0, 0});
  const std::vector<AttentionBlock> two_segments = run_bert(ids, {0, 0, 0, 0, 1, 1, 1});
  CHECK(segment_a[1].record.weights[0] == explicit_a[1].record.weights[0]);
  CHECK((segment_a[1].record.weights[0] - two_segments[1].record.weights[0]).cwiseAbs().maxCoeff() > 1e-3);
  CHECK_THROWS_WITH(run_bert(ids, {0, 1}), Contains("--token-types: gives 2 token types for 7 tokens (one per token)"));
  CHECK_THROWS_WITH(run_bert(ids, {0, 0, 0, 0, 2, 0, 0}),
                    Contains("--token-types: token type 2 (position 4) is outside the model's 2 token types (0-1)"));
  CHECK_THROWS_WITH(run_bert({2, 40}), Contains("token id 40 (position 1) is outside the vocabulary of 40 tokens"));
}

TEST_CASE("encoder: a missing bert tensor is named with the family", "[model][encoder][errors]") {
  auto file = std::make_shared<const GgufFile>(test_data_file(kBert));
  EncoderConfig config = encoder_from_gguf(file).config();
  CHECK_THROWS_WITH(EncoderModel(config, std::make_unique<WithoutTensor>(gguf_weight_source(file), "blk.1.attn_output_norm.bias")),
                    test_data_file(kBert) + ": tensor blk.1.attn_output_norm.bias is missing (needed by a bert model)");
}

TEST_CASE("encoder CLI: dump --model on a bert GGUF writes non-causal layers, --generate, bad --token-types refused, nothing written",
          "[model][encoder][cli]") {
  TempDir dir;
  Options o;
  o.command = Command::Dump;
  o.model = test_data_file(kBert);
  o.output = dir.file("dump.json");
  o.threads = 1;
  o.token_ids = std::vector<int>{2, 7, 12, 3, 9, 30, 3};
  o.token_types = std::vector<int>{0, 0, 0, 0, 1, 1, 1};
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json dump = nlohmann::json::parse(attnviz::test::read_file(dir.file("dump.json")));
  CHECK(dump["model"]["architecture"] == "bert");
  CHECK(dump["model"]["activation"] == "gelu (tanh, float16 table)");
  CHECK(dump["tokens"][0] == "[CLS]");
  CHECK(dump["layers"][0]["causal"] == false);
  std::filesystem::remove(dir.file("dump.json"));
  o.generate = 3;
  const attnviz::test::RunResult generate = attnviz::test::run_with(o);
  CHECK(generate.code == kExitInputError);
  CHECK_THAT(generate.err, Contains("--generate: " + o.model + " is an encoder (bert): its attention is bidirectional"));
  o.generate = -1;
  o.token_types = std::vector<int>{0, 1};
  const attnviz::test::RunResult types = attnviz::test::run_with(o);
  CHECK(types.code == kExitInputError);
  CHECK(types.err == "attnviz: error: --token-types: gives 2 token types for 7 tokens (one per token)\n");
  CHECK(!std::filesystem::exists(dir.file("dump.json")));
  // --token-types is for encoders.
  o.model = test_data_file("stories260k/hf-safetensors");
  o.token_types = std::vector<int>{0};
  CHECK_THAT(attnviz::test::run_with(o).err, Contains("--token-types: is for encoder models (bert)"));
}

// The llm.c way: an independent float64 forward pass (scripts/bert_reference.py, sharing no code
// with src/) on the same file, ids and token types; attnviz's attention runs in float32.
// The reference applies llama.cpp's GELU (--gelu ggml, its default) as attnviz does for a GGUF file.
TEST_CASE("encoder: the bert GGUF's attention equals the float64 reference forward to 1e-6", "[model][encoder][golden]") {
  TempDir dir;
  const std::vector<std::int32_t> ids = {2, 7, 12, 9, 30, 5, 18, 3, 22, 11, 25, 6, 14, 39, 8, 3};
  const std::vector<std::int32_t> types = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  std::string id_text, type_text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    id_text += (i ? "," : "") + std::to_string(ids[i]);
    type_text += (i ? "," : "") + std::to_string(types[i]);
  }
  attnviz::test::run_script("bert_reference.py", {test_data_file(kBert), id_text, dir.file("reference.json"), "--types", type_text});
  const nlohmann::json reference = nlohmann::json::parse(attnviz::test::read_file(dir.file("reference.json")));
  double worst = 0;
  for (const AttentionBlock& b : run_bert(ids, types))
    for (int h = 0; h < 4; ++h)
      for (std::size_t q = 0; q < ids.size(); ++q)
        for (std::size_t k = 0; k < ids.size(); ++k)
          worst = std::max(worst, std::abs(reference["attention"][std::to_string(b.layer)][h][q][k].get<double>() -
                                           b.record.weights[static_cast<std::size_t>(h)](static_cast<long>(q), static_cast<long>(k))));
  INFO("max |attnviz - float64 reference| = " << worst);
  CHECK(worst < 1e-6);
}

namespace {

std::vector<AttentionBlock> run_encoder(const EncoderModel& model, const std::vector<std::int32_t>& ids) {
  std::vector<AttentionBlock> blocks;
  const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
  EncoderRequest request;
  request.token_ids = ids;
  request.tokens.assign(ids.size(), "t");
  request.sink = &sink;
  model.forward(request);
  return blocks;
}

double worst_difference(const std::vector<AttentionBlock>& blocks, const nlohmann::json& attention, bool keyed_by_text) {
  double worst = 0;
  for (const AttentionBlock& b : blocks) {
    const nlohmann::json& layer = keyed_by_text ? attention[std::to_string(b.layer)] : attention[b.layer];
    for (std::size_t h = 0; h < b.record.weights.size(); ++h)
      for (Eigen::Index q = 0; q < b.record.weights[h].rows(); ++q)
        for (Eigen::Index k = 0; k < b.record.weights[h].cols(); ++k)
          worst = std::max(worst, std::abs(layer[h][q][k].get<double>() - b.record.weights[h](q, k)));
  }
  return worst;
}

}  // namespace

// The same weights as a Hugging Face BertModel folder (scripts/bert_hf_folder.py): transformers'
// "gelu" is the exact erf GELU where llama.cpp's is a tanh table; the FFN is small enough that
// both stay within 1e-4 of llama.cpp, and the folder equals the float64 forward with erf to 1e-5.
TEST_CASE("encoder: the bert GGUF's weights as a Hugging Face BertModel folder give the same attention (erf GELU)",
          "[model][encoder][golden]") {
  const EncoderModel model = encoder_from_hf_folder(test_data_file("bert/hf"));
  CHECK(model.config().gelu == GeluKind::Erf);
  CHECK_THAT(model.config().layer_norm_epsilon, Catch::Matchers::WithinAbs(1e-5, 1e-11));
  const nlohmann::json llamacpp = nlohmann::json::parse(attnviz::test::read_file(test_data_file("bert/llamacpp-attention.json")));
  const std::vector<std::int32_t> ids = llamacpp["token_ids"];
  const std::vector<AttentionBlock> blocks = run_encoder(model, ids);
  REQUIRE(blocks.size() == 2);
  const double against_llamacpp = worst_difference(blocks, llamacpp["attention"], false);
  INFO("max |attnviz (folder) - llama.cpp (GGUF)| = " << against_llamacpp);
  CHECK(against_llamacpp < 1e-4);
  TempDir dir;
  std::string id_text;
  for (std::size_t i = 0; i < ids.size(); ++i) id_text += (i ? "," : "") + std::to_string(ids[i]);
  attnviz::test::run_script("bert_reference.py", {test_data_file(kBert), id_text, dir.file("reference.json"), "--gelu", "erf"});
  const double against_float64 =
      worst_difference(blocks, nlohmann::json::parse(attnviz::test::read_file(dir.file("reference.json")))["attention"], true);
  INFO("max |attnviz (folder) - float64 reference (erf)| = " << against_float64);
  CHECK(against_float64 < 1e-5);
}

TEST_CASE("encoder CLI: a BertModel folder tokenizes --text with its tokenizer.json as [CLS] ... [SEP]", "[model][encoder][cli]") {
  TempDir dir;
  Options o;
  o.command = Command::Dump;
  o.model = test_data_file("bert/hf");
  o.output = dir.file("dump.json");
  o.threads = 1;
  o.text = "A b zz Q";
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json dump = nlohmann::json::parse(attnviz::test::read_file(dir.file("dump.json")));
  CHECK(dump["token_ids"] == std::vector<int>{2, 5, 6, 1, 21, 3});  // the tokenizers library's ids (npm 0.23.2)
  CHECK(dump["tokens"] == std::vector<std::string>{"[CLS]", "a", "b", "[UNK]", "q", "[SEP]"});
  CHECK(dump["model"]["activation"] == "gelu (erf)");
}

TEST_CASE("encoder: a BertModel config.json with settings attnviz does not implement is refused naming the member",
          "[model][encoder][errors]") {
  TempDir dir;
  std::filesystem::copy_file(test_data_file("bert/hf/model.safetensors"), dir.file("model.safetensors"));
  const nlohmann::json original = nlohmann::json::parse(attnviz::test::read_file(test_data_file("bert/hf/config.json")));
  const std::string path = dir.file("config.json");
  const std::vector<std::pair<std::pair<std::string, nlohmann::json>, std::string>> cases = {
      {{"hidden_act", "relu"}, "/hidden_act: expected \"gelu\", \"gelu_new\" or \"gelu_pytorch_tanh\", got \"relu\""},
      {{"position_embedding_type", "relative_key"}, "/position_embedding_type: expected \"absolute\""},
      {{"is_decoder", true}, "/is_decoder: expected false (a BERT encoder), got true"},
      {{"num_attention_heads", 3}, "/num_attention_heads 3 does not divide /hidden_size 16"},
      {{"intermediate_size", 9}, "tensor encoder.layer.0.intermediate.dense.weight: expected shape [9, 16]"},
  };
  for (const auto& [edit, message] : cases) {
    CAPTURE(message);
    nlohmann::json config = original;
    config[edit.first] = edit.second;
    std::ofstream(path) << config.dump();
    CHECK_THROWS_WITH(encoder_from_hf_folder(dir.path().string()), Contains(message));
  }
}

// BertForMaskedLM saves the encoder under "bert." (beside its cls.predictions head).
TEST_CASE("encoder: a BertForMaskedLM folder (tensors under \"bert.\") gives the BertModel folder's attention", "[model][encoder]") {
  TempDir dir;
  attnviz::test::run_script("bert_hf_folder.py", {test_data_file(kBert), dir.path().string(), "--architecture", "BertForMaskedLM"});
  const std::vector<std::int32_t> ids = {2, 7, 12, 9, 30, 3};
  const std::vector<AttentionBlock> masked_lm = run_encoder(encoder_from_hf_folder(dir.path().string()), ids);
  const std::vector<AttentionBlock> base = run_encoder(encoder_from_hf_folder(test_data_file("bert/hf")), ids);
  REQUIRE(masked_lm.size() == base.size());
  for (std::size_t l = 0; l < base.size(); ++l) CHECK(masked_lm[l].record.weights == base[l].record.weights);
}

TEST_CASE("encoder: config.json members the BERT reader does not read are named in one warning, harmless ones are not",
          "[model][encoder][errors]") {
  CHECK(encoder_from_hf_folder(test_data_file("bert/hf")).config().warnings.empty());
  TempDir dir;
  std::filesystem::copy_file(test_data_file("bert/hf/model.safetensors"), dir.file("model.safetensors"));
  nlohmann::json config = nlohmann::json::parse(attnviz::test::read_file(test_data_file("bert/hf/config.json")));
  // bert-base-uncased's members beyond the bundled ones: none changes the forward pass.
  config.update({{"gradient_checkpointing", false}, {"transformers_version", "4.6.0.dev0"}, {"use_cache", true},
                 {"classifier_dropout", nullptr}});
  std::ofstream(dir.file("config.json")) << config.dump();
  CHECK(encoder_from_hf_folder(dir.path().string()).config().warnings.empty());
  config["attention_window"] = 4;  // Longformer's: a window BertModel does not apply
  std::ofstream(dir.file("config.json")) << config.dump();
  CHECK(encoder_from_hf_folder(dir.path().string()).config().warnings ==
        std::vector<std::string>{dir.file("config.json") + ": config.json members attnviz does not read for BertModel, ignored: /attention_window"});
}

TEST_CASE("encoder CLI: a BertModel folder whose tokenizer.json has pieces past the embeddings is refused at load", "[model][encoder][errors]") {
  TempDir dir;
  for (const char* name : {"model.safetensors", "config.json"}) std::filesystem::copy_file(test_data_file(std::string("bert/hf/") + name), dir.file(name));
  nlohmann::json tokenizer = nlohmann::json::parse(attnviz::test::read_file(test_data_file("bert/hf/tokenizer.json")));
  tokenizer["model"]["vocab"]["zebra"] = 40;  // the model has 40 embeddings (0-39)
  std::ofstream(dir.file("tokenizer.json")) << tokenizer.dump();
  Options o;
  o.command = Command::Dump;
  o.model = dir.path().string();
  o.output = dir.file("dump.json");
  o.threads = 1;
  o.text = "a b";
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == kExitInputError);
  CHECK_THAT(r.err, Contains(dir.file("tokenizer.json") + ": 1 piece of its vocabulary has an id past the model's table (the first: \"zebra\" 40), "
                                                          "but the model " + dir.path().string() + " has 40 token embeddings (0-39)"));
  CHECK(!std::filesystem::exists(dir.file("dump.json")));
}

// --measure norms|alti on BERT (issue 20): each block hands on f^h(x_j), its input as the residual,
// b_O and its own attention output LayerNorm (post-LN) only when asked. The values are held by the
// CTest measures_reference against a float64 reference.
TEST_CASE("encoder: value vectors, residual, b_O and the post-LN norm of each block are handed on only when asked",
          "[model][encoder][measures]") {
  const auto file = std::make_shared<const GgufFile>(test_data_file(kBert));
  const EncoderModel model = encoder_from_gguf(file);
  const std::unique_ptr<WeightSource> weights = gguf_weight_source(file);
  const long d = model.config().d_model;
  for (const bool wanted : {false, true}) {
    std::vector<AttentionBlock> blocks;
    const BlockSink sink = [&](AttentionBlock&& block) { blocks.push_back(std::move(block)); };
    EncoderRequest request;
    request.token_ids = {2, 7, 12, 3};
    request.tokens.assign(4, "t");
    request.sink = &sink;
    request.value_vectors = wanted;
    model.forward(request);
    REQUIRE(blocks.size() == 2);
    for (const AttentionBlock& b : blocks) {
      INFO("layer " << b.layer << (wanted ? " asked" : " not asked"));
      if (!wanted) {
        CHECK(b.value_vectors.empty());
        CHECK(b.residual.size() == 0);
        CHECK(!b.post_norm);
        continue;
      }
      REQUIRE(b.value_vectors.size() == static_cast<std::size_t>(model.config().num_heads));
      CHECK(b.value_vectors[0].rows() == 4);
      CHECK(b.value_vectors[0].cols() == d);
      CHECK(b.residual.rows() == 4);
      CHECK(b.residual.cols() == d);
      const std::string p = "blk." + std::to_string(b.layer) + ".";
      CHECK(b.b_o == weights->vector(p + "attn_output.bias", d));
      REQUIRE(b.post_norm);
      CHECK(b.post_norm->gamma == weights->vector(p + "attn_output_norm.weight", d));
      CHECK(b.post_norm->beta == weights->vector(p + "attn_output_norm.bias", d));
      CHECK(b.post_norm->epsilon == model.config().layer_norm_epsilon);
    }
    if (wanted) CHECK(blocks[0].residual != blocks[1].residual);  // each block's own input
  }
}
