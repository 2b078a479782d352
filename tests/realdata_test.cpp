// attnviz against three real pretrained models' own attention (data/README.md): USE-Lite's
// TF.js graph, stories260K's plain references, and every aren-translit decoder layer's
// cross-attention. Tolerance 1e-5 on weights, 1e-4 on the W_O output (issue #2).
#include <fstream>
#include <nlohmann/json.hpp>

#include "attention/attention.hpp"
#include "attention/mask.hpp"
#include "records/input_schema.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::data_file;

namespace {

constexpr double kWeightTolerance = 1e-5;
constexpr double kOutputTolerance = 1e-4;

nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

Matrix to_matrix(const nlohmann::json& rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t c = 0; c < rows[r].size(); ++c) m(r, c) = rows[r][c].get<Scalar>();
  }
  return m;
}

double worst_head_diff(const AttentionResult& result, const nlohmann::json& reference) {
  REQUIRE(result.weights.size() == reference.size());
  double worst = 0;
  for (std::size_t h = 0; h < reference.size(); ++h) {
    worst = std::max(worst, test::max_abs_diff(result.weights[h], to_matrix(reference[h])));
  }
  return worst;
}

AttentionResult run(const InputBundle& in, bool causal) {
  const Sentence& keys = in.keys();
  const MaskMatrix allowed = build_mask(static_cast<long>(in.queries.tokens.size()),
                                        static_cast<long>(keys.tokens.size()), causal, keys.attention_mask);
  return multi_head_attention(in.weights.layer, in.queries.embeddings, keys.embeddings, allowed, {false, true});
}

}  // namespace

TEST_CASE("realdata: USE-Lite layer 0 matches the TF.js graph's own weights and output", "[attention][realdata]") {
  const std::string path = data_file("use-lite/layer0.json");
  const InputBundle in = load_inputs({path, "", ""});
  REQUIRE(in.weights.layer.num_heads == 4);
  REQUIRE(in.weights.layer.d_k() == 64);
  const AttentionResult r = run(in, false);
  const nlohmann::json reference = load(path);
  const double weights_diff = worst_head_diff(r, reference["reference_attention_weights"]);
  INFO("max |weights - reference| = " << weights_diff);
  CHECK(weights_diff <= kWeightTolerance);
  const double output_diff = test::max_abs_diff(r.output, to_matrix(reference["reference_attn_output"]));
  INFO("max |output - reference| = " << output_diff);
  CHECK(output_diff <= kOutputTolerance);
}

TEST_CASE("realdata: stories260K layer 0 (GQA, 8 query heads on 4 kv heads) matches its plain references",
          "[attention][realdata]") {
  const std::string path = data_file("stories260k/layer0.json");
  const InputBundle in = load_inputs({path, "", ""});
  REQUIRE(in.weights.layer.num_kv_heads == 4);
  const nlohmann::json reference = load(path);
  const double plain = worst_head_diff(run(in, false), reference["reference_attention_plain"]);
  const double causal = worst_head_diff(run(in, true), reference["reference_attention_plain_causal"]);
  INFO("plain " << plain << ", causal " << causal);
  CHECK(plain <= kWeightTolerance);
  CHECK(causal <= kWeightTolerance);
}

TEST_CASE("realdata: aren-translit decoder cross-attention, all six layers, both pairs", "[attention][realdata]") {
  const std::string pair = GENERATE(std::string("mcdonald"), std::string("atzmon"));
  const int layer = GENERATE(0, 1, 2, 3, 4, 5);
  const std::string folder = "aren-translit/" + pair + "/";
  const std::string path = data_file(folder + "decoder_layer" + std::to_string(layer) + ".json");
  const InputBundle in = load_inputs({path, "", data_file(folder + "source.json")});
  const AttentionResult r = run(in, false);
  const nlohmann::json reference = load(path);
  const double weights_diff = worst_head_diff(r, reference["reference_attention_weights"]);
  const double output_diff = test::max_abs_diff(r.output, to_matrix(reference["reference_attn_output"]));
  INFO(pair << " layer " << layer << ": weights " << weights_diff << ", output " << output_diff);
  CHECK(weights_diff <= kWeightTolerance);
  CHECK(output_diff <= kOutputTolerance);
}
