// The CTranslate2 reader and encoder-decoder run against the real aren-transliteration model
// (data/aren-translit/model, CTranslate2's own test model): its greedy outputs, every decoder
// layer's cross-attention against the float64 references in data/aren-translit/<pair>/ (an
// independent numpy implementation; tolerance 1e-6), the log-probabilities CTranslate2's tests
// record for it, and the refusals of damaged directories.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <nlohmann/json.hpp>

#include "attention/attention.hpp"
#include "core/error.hpp"
#include "model/ct2_model.hpp"
#include "model/formats/ct2_file.hpp"
#include "model/tokenizers/ct2_vocabulary.hpp"
#include "records/input_schema.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::data_file;
using Catch::Matchers::Contains;

namespace {

namespace fs = std::filesystem;

// Cross-attention weights against the float64 references, through 6 encoder and up to 6
// decoder layers (the attention blocks in float32, the rest in float64). The float32 attention
// block alone, given the reference's own float32-rounded inputs, is 1.166e-6 from the float64
// weights at mcdonald layer 2 (the worst entry; realdata_test checks that block at 1e-5), so
// 1e-6 is out of reach of float32 attention there; the model run adds nothing to it (below).
constexpr double kWeightTolerance = 1.5e-6;
// The model's cross-attention against attnviz's attention on the inputs stored in the reference
// files (X_q, X_kv rounded to float32): the forward pass up to each block, checked alone.
constexpr double kSameBlockTolerance = 1e-6;
// CTranslate2's recorded log-probabilities have 6 decimals (rounding 5e-7) and come from its
// own float32 run.
constexpr double kLogProbTolerance = 2e-6;

const std::string kModelDir = data_file("aren-translit/model");

nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

struct Pair {
  std::string name;       // folder under data/aren-translit
  std::string expected;   // the model's greedy output
};

std::string source_tokens_of(const std::string& pair) {
  const nlohmann::json source = load_json(data_file("aren-translit/" + pair + "/source.json"));
  std::string text;
  for (const auto& token : source.at("tokens")) text += (text.empty() ? "" : " ") + token.get<std::string>();
  return text;
}

struct Run {
  ModelRunInfo info;
  std::vector<AttentionBlock> blocks;
  std::vector<std::string> warnings;
};

Run run(Ct2Request request) {
  Run r;
  r.info = run_ct2_model(request, [&](AttentionBlock&& block) { r.blocks.push_back(std::move(block)); }, r.warnings);
  return r;
}

Ct2Request request_for(const std::string& source_tokens) {
  Ct2Request request;
  request.model_dir = kModelDir;
  request.source_tokens = source_tokens;
  return request;
}

struct CrossDiffs {
  double reference = 0;   // against the float64 reference_attention_weights
  double same_block = 0;  // against attnviz's attention on the reference's own float32 inputs
};

// Largest differences over every head of every decoder layer's cross-attention.
CrossDiffs worst_cross_diff(const Run& r, const std::string& pair) {
  CrossDiffs worst;
  int layers = 0;
  for (const AttentionBlock& block : r.blocks) {
    if (block.kind != "cross") continue;
    ++layers;
    const std::string path = data_file("aren-translit/" + pair + "/decoder_layer" + std::to_string(block.layer) + ".json");
    const nlohmann::json reference = load_json(path);
    const auto& heads = reference.at("reference_attention_weights");
    REQUIRE(block.record.weights.size() == heads.size());
    CHECK(block.record.query_tokens == reference.at("tokens").get<Tokens>());
    const InputBundle in = load_inputs({path, "", data_file("aren-translit/" + pair + "/source.json")});
    const AttentionResult same = multi_head_attention(in.weights.layer, in.queries.embeddings, in.keys().embeddings,
                                                      MaskMatrix(), AttentionWants{});
    for (std::size_t h = 0; h < heads.size(); ++h) {
      const Matrix& actual = block.record.weights[h];
      worst.same_block = std::max(worst.same_block, test::max_abs_diff(actual, same.weights[h]));
      REQUIRE(actual.rows() == static_cast<Eigen::Index>(heads[h].size()));
      for (Eigen::Index q = 0; q < actual.rows(); ++q) {
        REQUIRE(actual.cols() == static_cast<Eigen::Index>(heads[h][q].size()));
        for (Eigen::Index k = 0; k < actual.cols(); ++k) {
          worst.reference =
              std::max(worst.reference, std::abs(static_cast<double>(actual(q, k)) - heads[h][q][k].get<double>()));
        }
      }
    }
  }
  CHECK(layers == 6);
  return worst;
}

// A copy of the model directory to damage.
struct ModelCopy {
  test::TempDir dir;
  ModelCopy() {
    for (const char* name : {"model.bin", "source_vocabulary.txt", "target_vocabulary.txt"}) {
      fs::copy_file(fs::path(kModelDir) / name, dir.path() / name);
    }
  }
  std::string path() const { return dir.path().string(); }
  std::string file(const std::string& name) const { return dir.file(name); }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream out(file(name), std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  // Replaces the first occurrence of `from` in model.bin by `to` (same length).
  void patch_model(const std::string& from, const std::string& to) const {
    std::string bytes = test::read_file(file("model.bin"));
    const auto at = bytes.find(from);
    REQUIRE(at != std::string::npos);
    REQUIRE(from.size() == to.size());
    bytes.replace(at, from.size(), to);
    write("model.bin", bytes);
  }
};

}  // namespace

TEST_CASE("ct2_model: greedy decoding of the bundled pairs gives mcdonald and atzmon", "[ct2]") {
  const Pair pair = GENERATE(Pair{"mcdonald", "mcdonald"}, Pair{"atzmon", "atzmon"});
  const Run r = run(request_for(source_tokens_of(pair.name)));
  CHECK(r.info.generated_text == pair.expected);
  CHECK(r.info.text == pair.expected);
  // What the pictures quote beside the translation: the character-level source, concatenated.
  std::string source = source_tokens_of(pair.name);
  source.erase(std::remove(source.begin(), source.end(), ' '), source.end());
  CHECK(r.info.source_text == source);
  CHECK(r.info.target_tokens.front() == "<s>");
  CHECK(r.info.target_tokens.size() == pair.expected.size() + 1);
  CHECK(r.info.prompt_length == 1);
  CHECK(r.info.model.architecture == "transformer");
  CHECK(r.info.model.num_layers == 6);
  CHECK(r.info.model.num_heads == 8);
  CHECK(r.info.model.d_model == 32);
  CHECK(r.warnings.empty());
}

TEST_CASE("ct2_model: every decoder layer's cross-attention equals the reference weights", "[ct2]") {
  const std::string pair = GENERATE(std::string("mcdonald"), std::string("atzmon"));
  SECTION("greedy decoding") {
    const CrossDiffs worst = worst_cross_diff(run(request_for(source_tokens_of(pair))), pair);
    WARN(pair << " greedy, 6 layers x 8 heads: max |weight - float64 reference| = " << worst.reference
              << ", max |weight - attnviz on the reference's float32 inputs| = " << worst.same_block);
    CHECK(worst.reference <= kWeightTolerance);
    CHECK(worst.same_block <= kSameBlockTolerance);
  }
  SECTION("teacher forcing with the known target") {
    Ct2Request request = request_for(source_tokens_of(pair));
    std::string target;
    for (char c : pair) target += std::string(target.empty() ? "" : " ") + c;
    request.target_tokens = target;
    const Run r = run(request);
    CHECK(r.info.generated_text.empty());
    CHECK(r.info.text == pair);
    const CrossDiffs worst = worst_cross_diff(r, pair);
    WARN(pair << " teacher-forced: max |weight - float64 reference| = " << worst.reference
              << ", max |weight - attnviz on the reference's float32 inputs| = " << worst.same_block);
    CHECK(worst.reference <= kWeightTolerance);
    CHECK(worst.same_block <= kSameBlockTolerance);
  }
}

TEST_CASE("ct2_model: blocks come in order with their tokens, masks and layer selection", "[ct2]") {
  SECTION("all layers: 6 encoder self, then self and cross per decoder layer") {
    const Run r = run(request_for(source_tokens_of("mcdonald")));
    REQUIRE(r.blocks.size() == 18);
    for (int i = 0; i < 6; ++i) {
      const AttentionBlock& e = r.blocks[static_cast<std::size_t>(i)];
      CHECK((e.stack == "encoder" && e.kind == "self" && e.layer == i && !e.record.causal));
      CHECK(e.record.query_tokens == r.info.source_tokens);
      CHECK(e.record.key_tokens == r.info.source_tokens);
      const AttentionBlock& s = r.blocks[static_cast<std::size_t>(6 + 2 * i)];
      const AttentionBlock& c = r.blocks[static_cast<std::size_t>(7 + 2 * i)];
      CHECK((s.stack == "decoder" && s.kind == "self" && s.layer == i && s.record.causal));
      CHECK((c.stack == "decoder" && c.kind == "cross" && c.layer == i && c.record.mode == "cross"));
      CHECK(c.record.query_tokens == r.info.target_tokens);
      CHECK(c.record.key_tokens == r.info.source_tokens);
      for (const Matrix& w : s.record.weights) {
        for (Eigen::Index q = 0; q < w.rows(); ++q) {
          for (Eigen::Index k = q + 1; k < w.cols(); ++k) CHECK(w(q, k) == 0);
          CHECK_THAT(w.row(q).sum(), Catch::Matchers::WithinAbs(1.0, 1e-5));
        }
      }
    }
  }
  SECTION("--layers 2 captures layer 2 of each kind only") {
    Ct2Request request = request_for(source_tokens_of("mcdonald"));
    request.layers = parse_layer_selection("2", 0);
    const Run r = run(request);
    REQUIRE(r.blocks.size() == 3);
    for (const AttentionBlock& b : r.blocks) CHECK(b.layer == 2);
    CHECK(r.info.generated_text == "mcdonald");
  }
  SECTION("a layer the model does not have is refused") {
    Ct2Request request = request_for(source_tokens_of("mcdonald"));
    request.layers = parse_layer_selection("6", 0);
    CHECK_THROWS_WITH(run(request), Contains("--layers: layer 6 does not exist (this model has layers 0-5)"));
  }
}

TEST_CASE("ct2_model: teacher-forced log-probabilities match CTranslate2's recorded scores", "[ct2]") {
  // tests/translator_test.cc TranslatorTest.Scoring and python/tests/test_translator.py
  // test_score_api, for the pair atzmon (a t z m o n </s>).
  const double recorded[] = {-0.106023, -0.065410, -0.056002, -0.447953, -0.230714, -0.092184, -0.063463};
  const Ct2Model model = load_ct2_model(kModelDir);
  std::vector<std::string> warnings;
  const auto source = ct2_token_ids(model.source, split_on_spaces(source_tokens_of("atzmon")), "source", warnings);
  const auto target = ct2_token_ids(model.target, split_on_spaces("a t z m o n </s>"), "target", warnings);
  REQUIRE(warnings.empty());
  std::vector<std::int32_t> input{model.bos};
  input.insert(input.end(), target.begin(), target.end() - 1);
  const WideMatrix logits = ct2_decoder_logits(model.transformer, ct2_encode(model.transformer, source), input);
  double worst = 0;
  for (Eigen::Index t = 0; t < logits.rows(); ++t) {
    // log p = logit - log sum exp(logits), with the maximum taken out (a plain loop: GCC 12
    // warns falsely in Eigen's AVX-512 exp of a double array).
    const double top = logits.row(t).maxCoeff();
    double sum = 0;
    for (Eigen::Index v = 0; v < logits.cols(); ++v) sum += std::exp(logits(t, v) - top);
    const double log_p = logits(t, target[static_cast<std::size_t>(t)]) - top - std::log(sum);
    worst = std::max(worst, std::abs(log_p - recorded[t]));
  }
  WARN("atzmon: max |log p - CTranslate2's recorded value| = " << worst);
  CHECK(worst <= kLogProbTolerance);
}

TEST_CASE("ct2_model: source tokens from text, unknown tokens and bad requests", "[ct2]") {
  SECTION("--text splits a character-level source into characters") {
    Ct2Request request;
    request.model_dir = kModelDir;
    request.text = load_json(data_file("aren-translit/mcdonald/source.json")).at("sentence").get<std::string>();
    const Run r = run(request);
    CHECK(r.info.generated_text == "mcdonald");
    CHECK(r.info.source_tokens.size() == 9);
  }
  SECTION("an unknown source token becomes <unk> with a warning naming it") {
    const Run r = run(request_for(source_tokens_of("atzmon") + " Q"));
    REQUIRE(r.warnings.size() == 1);
    CHECK_THAT(r.warnings[0], Contains("'Q' (position 6)") && Contains("source_vocabulary.txt") && Contains("<unk>"));
    CHECK(r.info.source_tokens.back() == "<unk>");
  }
  SECTION("neither or both of the source forms") {
    Ct2Request request;
    request.model_dir = kModelDir;
    CHECK_THROWS_AS(run(request), UsageError);
    request.source_tokens = "x";
    request.text = "x";
    CHECK_THROWS_AS(run(request), UsageError);
  }
  SECTION("config.json's add_source_bos and add_source_eos frame the source") {
    const ModelCopy copy;
    copy.write("config.json", R"({"add_source_bos": true, "add_source_eos": true, "layer_norm_epsilon": null})");
    Ct2Request request = request_for(source_tokens_of("atzmon"));
    request.model_dir = copy.path();
    const Run r = run(request);
    REQUIRE(r.info.source_tokens.size() == 8);
    CHECK(r.info.source_tokens.front() == "<s>");
    CHECK(r.info.source_tokens.back() == "</s>");
    CHECK(r.blocks.front().record.key_tokens == r.info.source_tokens);
  }
  SECTION("the cap on greedy decoding stops it with a warning") {
    Ct2Request request = request_for(source_tokens_of("mcdonald"));
    request.max_generate = 3;
    const Run r = run(request);
    CHECK(r.info.generated_text == "mcd");
    REQUIRE(r.warnings.size() == 1);
    CHECK_THAT(r.warnings[0], Contains("stopped at its limit of 3 tokens without </s>"));
  }
}

TEST_CASE("ct2_model: damaged model directories are refused with one line naming the file", "[ct2][errors]") {
  const ModelCopy copy;
  SECTION("a truncated model.bin") {
    const std::string bytes = test::read_file(copy.file("model.bin"));
    copy.write("model.bin", bytes.substr(0, bytes.size() / 2));
    CHECK_THROWS_WITH(load_ct2_model(copy.path()),
                      Contains(copy.file("model.bin")) && Contains("truncated") && Contains("variable "));
  }
  SECTION("a file that is not a model.bin") {
    copy.write("model.bin", "GGUF\x03\0\0\0 and more bytes");
    CHECK_THROWS_WITH(load_ct2_model(copy.path()), Contains("not a CTranslate2 model.bin"));
  }
  SECTION("an unknown spec name") {
    copy.patch_model("TransformerBase", "WhisperSpecXYZ!");
    CHECK_THROWS_WITH(load_ct2_model(copy.path()), Contains("spec 'WhisperSpecXYZ!'") && Contains("model.bin"));
  }
  SECTION("a missing variable") {
    copy.patch_model("decoder/layer_3/attention/linear_1/bias", "decoder/layer_3/attention/linear_1/BIAS");
    CHECK_THROWS_WITH(load_ct2_model(copy.path()),
                      Contains("model.bin: missing variable decoder/layer_3/attention/linear_1/bias"));
  }
  SECTION("a target vocabulary one line longer than the embeddings") {
    copy.write("target_vocabulary.txt", test::read_file(copy.file("target_vocabulary.txt")) + "extra\n");
    CHECK_THROWS_WITH(load_ct2_model(copy.path()),
                      Contains("target_vocabulary.txt: 44 tokens") && Contains("43 target embedding rows"));
  }
  SECTION("a memory budget the weights do not fit in") {
    CHECK_THROWS_AS(load_ct2_model(copy.path(), 100e3), LimitError);
    CHECK_THROWS_WITH(load_ct2_model(copy.path(), 1e6), Contains("the weights of") && Contains("--max-memory"));
    CHECK(load_ct2_model(copy.path(), 10e6).transformer.decoder.size() == 6);
  }
  SECTION("a missing vocabulary") {
    fs::remove(copy.file("source_vocabulary.txt"));
    CHECK_THROWS_WITH(load_ct2_model(copy.path()), Contains("source_vocabulary.txt: cannot read"));
  }
  SECTION("--text on a source vocabulary that is not character-level") {
    std::string vocab = test::read_file(copy.file("source_vocabulary.txt"));
    vocab.replace(vocab.rfind("\n", vocab.size() - 2) + 1, std::string::npos, "ab\n");
    copy.write("source_vocabulary.txt", vocab);
    Ct2Request request;
    request.model_dir = copy.path();
    request.text = "ab";
    CHECK_THROWS_WITH(run(request), Contains("--text") && Contains("--source-tokens"));
  }
}

TEST_CASE("ct2_model: a vocabulary.json list larger than 64 KiB is read (bug: refused as 'not a JSON object')",
          "[ct2]") {
  // Real translation models have 30 000-token vocabularies: lists of several hundred KB.
  const test::TempDir dir;
  const std::string path = dir.file("target_vocabulary.json");
  nlohmann::json tokens = nlohmann::json::array();
  for (int i = 0; i < 8000; ++i) tokens.push_back("token_" + std::to_string(i));
  std::ofstream(path) << tokens.dump();
  REQUIRE(std::filesystem::file_size(path) > 64 * 1024);
  const Ct2Vocabulary vocabulary = read_ct2_vocabulary(path, "<unk>");
  CHECK(vocabulary.size() == 8001);  // <unk> appended
  CHECK(vocabulary.find("token_7999") == 7999);
  CHECK(vocabulary.unk == 8000);

  // An object of that size is still refused, as a vocabulary that is not a list.
  nlohmann::json object = nlohmann::json::object();
  for (int i = 0; i < 8000; ++i) object["token_" + std::to_string(i)] = i;
  std::ofstream(path) << object.dump();
  CHECK_THROWS_WITH(read_ct2_vocabulary(path, "<unk>"), Contains("target_vocabulary.json") && Contains("a list of tokens"));
}

TEST_CASE("ct2_model: a model.bin with corrupted bytes loads or throws an Error, never crashes", "[ct2][errors]") {
  // LevelDB's corruption_test in miniature: single-byte changes, three in four in the file's
  // structure (the header, and each variable's name, rank, shape, type and size: the 64 bytes
  // from its name's length), one in four anywhere; seeded, so a failure reproduces.
  const ModelCopy copy;
  const std::string original = test::read_file(copy.file("model.bin"));
  std::vector<std::size_t> structure;
  for (std::size_t i = 0; i < 32; ++i) structure.push_back(i);
  for (const std::string stack : {"encoder/", "decoder/"}) {
    for (std::size_t at = original.find(stack); at != std::string::npos; at = original.find(stack, at + 1)) {
      for (std::size_t i = at - 2; i < std::min(at + 62, original.size()); ++i) structure.push_back(i);
    }
  }
  std::mt19937 random(20261130);
  constexpr int kTrials = 400;
  int refused = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::string bytes = original;
    const std::size_t at = trial % 4 == 3 ? random() % bytes.size() : structure[random() % structure.size()];
    bytes[at] = static_cast<char>(bytes[at] ^ static_cast<char>(1 + random() % 255));
    copy.write("model.bin", bytes);
    INFO("trial " << trial << ": byte " << at);
    try {
      Ct2Request request = request_for(source_tokens_of("atzmon"));
      request.model_dir = copy.path();
      request.max_generate = 20;
      const Run r = run(request);
      CHECK(r.info.target_tokens.front() == "<s>");
    } catch (const Error&) {
      ++refused;
    }
  }
  WARN(refused << " of " << kTrials << " corrupted files refused");
  CHECK(refused > 0);
}
