// The neuron view and QK/OV circuits (issue 21): identities with what the engine computes
// (dump --scores, --outputs), the d_k route against a full SVD, and `explain`'s bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <nlohmann/json.hpp>

#include "analysis/circuits.hpp"
#include "analysis/explanation.hpp"
#include "analysis/neuron_view.hpp"
#include "cli/attention_job.hpp"
#include "cli/explain_job.hpp"
#include "core/error.hpp"
#include "render/font.hpp"
#include "render/neuron_figure.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

Options layer_options(const std::string& sentence) {
  Options o;
  o.command = Command::Dump;
  o.sentence = sentence;
  o.scores = true;
  o.outputs = true;
  return o;
}

// The engine's record and the prepared inputs of the same layer run.
struct Case {
  AttentionRecord record;
  PreparedLayer prepared;
  LayerInputs inputs() const {
    return {&prepared.in.weights.layer, &prepared.in.queries.embeddings, &prepared.in.keys().embeddings, &prepared.allowed,
            &prepared.rope_request, std::nullopt};
  }
};

Case layer_case(const std::string& sentence, const std::string& source = "") {
  Options o = layer_options(sentence);
  o.source = source;
  std::vector<std::string> warnings;
  return Case{compute_record(o, warnings), prepare_layer(o, warnings)};
}

Options explain_options(const std::string& sentence, const std::string& head, const std::string& output) {
  Options o;
  o.command = Command::Explain;
  o.sentence = sentence;
  o.explain_head = head;
  o.output = output;
  return o;
}

Eigen::MatrixXd random_matrix(long rows, long cols, unsigned seed) {
  std::srand(seed);
  return Eigen::MatrixXd::Random(rows, cols);
}

}  // namespace

TEST_CASE("neuron_view: scores, weights and output equal the engine's, every head and query", "[analysis][golden]") {
  // stories260K layer 0: RoPE, GQA (8 query heads over 4 key/value heads), a causal mask.
  // USE-Lite: biases, no RoPE. aren-translit: cross-attention (keys from the source).
  const auto [name, c] = GENERATE(table<const char*, Case>(
      {{"stories260k", layer_case(test::data_file("stories260k/layer0.json"))},
       {"use-lite", layer_case(test::data_file("use-lite/layer0.json"))},
       {"aren-translit", layer_case(test::data_file("aren-translit/atzmon/decoder_layer2.json"),
                                    test::data_file("aren-translit/atzmon/source.json"))}}));
  INFO(name);
  const AttentionRecord& r = c.record;
  for (int h = 0; h < r.num_heads; ++h) {
    for (long i = 0; i < static_cast<long>(r.query_tokens.size()); ++i) {
      const NeuronView v = neuron_view(c.inputs(), h, i);
      double worst_score = 0, worst_weight = 0, worst_output = 0, worst_sum = 0, row_size = 1;
      for (long j = 0; j < static_cast<long>(r.key_tokens.size()); ++j)
        if (std::isfinite(r.scores[h](i, j))) row_size = std::max(row_size, std::abs(double(r.scores[h](i, j))));
      for (long j = 0; j < static_cast<long>(r.key_tokens.size()); ++j) {
        const bool masked = v.masked[static_cast<std::size_t>(j)] != 0;
        CHECK(masked == std::isinf(r.scores[h](i, j)));
        // 1e-5 relative to the row's largest |score| (at least 1): float32's spacing at
        // stories260K's scores of 30 is 1.9e-6, and products of ±70 cancel into small scores, so
        // the engine's GEMM and this sum, rounding in different orders, differ by ~1e-5 there.
        if (!masked) worst_score = std::max(worst_score, std::abs(double(v.scores_raw(j) - r.scores[h](i, j))) / row_size);
        worst_weight = std::max(worst_weight, std::abs(double(v.weights(j) - r.weights[h](i, j))));
        // scores_raw is scale · Σ_d products: the products are what the score is made of.
        worst_sum = std::max(worst_sum, std::abs(double(v.scale * v.products.row(j).sum() - v.scores_raw(j))));
      }
      for (long d = 0; d < v.output.size(); ++d)
        worst_output = std::max(worst_output, std::abs(double(v.output(d) - r.head_outputs[h](i, d))));
      CHECK(worst_score < 1e-5);
      CHECK(worst_weight < 1e-5);
      CHECK(worst_output < 1e-5);
      CHECK(worst_sum < 1e-5);
      CHECK_THAT(v.weights.sum(), WithinAbs(1.0, 1e-6));
    }
  }
}

TEST_CASE("neuron_view: a masked key keeps its entry, weight 0 and score -inf", "[analysis]") {
  const Case c = layer_case(test::data_file("stories260k/layer0.json"));
  const NeuronView v = neuron_view(c.inputs(), 5, 3);  // causal: keys 4… are masked for query 3
  REQUIRE(v.k.rows() == 32);
  CHECK(v.masked[3] == 0);
  CHECK(v.masked[4] == 1);
  CHECK(v.weights(4) == 0.0f);
  CHECK(std::isinf(v.scores(4)));
  CHECK(std::isfinite(v.scores_raw(4)));
  CHECK(v.weighted_values.row(31).isZero());
}

TEST_CASE("low_rank_svd: the d_k route equals a full SVD of the d_model x d_model product", "[analysis][circuits]") {
  const auto [m, n, r] = GENERATE(table<long, long, long>({{12, 12, 3}, {10, 7, 4}, {6, 9, 6}, {4, 4, 6}}));
  const Eigen::MatrixXd a = random_matrix(m, r, 7), b = random_matrix(n, r, 11);
  const LowRankSvd small = low_rank_svd(a, b);
  const Eigen::MatrixXd full = a * b.transpose();
  const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(full).singularValues();
  REQUIRE(static_cast<long>(small.singular_values.size()) == std::min({m, n, r}));
  for (std::size_t i = 0; i < small.singular_values.size(); ++i)
    CHECK_THAT(small.singular_values[i], WithinAbs(s(static_cast<long>(i)), 1e-9));
  // u_i, v_i are singular vectors of the product: (A Bᵀ) v_i = s_i u_i.
  for (long i = 0; i < static_cast<long>(small.singular_values.size()); ++i)
    CHECK((full * small.v.col(i) - small.singular_values[static_cast<std::size_t>(i)] * small.u.col(i)).norm() < 1e-9);
}

TEST_CASE("head_circuits: OV eigenvalues and the copying score equal the full matrices'", "[analysis][circuits]") {
  // A 2-head layer, d_model 6, d_k 2, with a vocabulary of 5 tokens.
  AttentionLayer layer;
  layer.num_heads = layer.num_kv_heads = 2;
  layer.w_q = random_matrix(6, 4, 1).cast<Scalar>();
  layer.w_k = random_matrix(6, 4, 2).cast<Scalar>();
  layer.w_v = random_matrix(6, 4, 3).cast<Scalar>();
  layer.w_o = random_matrix(4, 6, 4).cast<Scalar>();
  Vector gain = random_matrix(6, 1, 5).cast<Scalar>();
  VocabularyCircuit vocab;
  vocab.embedding = random_matrix(5, 6, 6).cast<Scalar>();
  vocab.unembedding = random_matrix(6, 5, 8).cast<Scalar>();
  vocab.pieces = {"a", "b", "c", "d", "e"};
  const WideCircuitMatrix loop = vocabulary_loop(vocab);
  const HeadCircuits c = head_circuits(layer, 1, gain, Vector(), &loop);
  const Eigen::MatrixXd g = gain.cast<double>().asDiagonal();
  const Eigen::MatrixXd w_v = g * layer.w_v.middleCols(2, 2).cast<double>(), w_o = layer.w_o.middleRows(2, 2).cast<double>();
  const Eigen::MatrixXd w_ov = w_v * w_o;  // [6, 6], rank 2
  const Eigen::VectorXcd full = Eigen::EigenSolver<Eigen::MatrixXd>(w_ov).eigenvalues();
  REQUIRE(c.ov_eigenvalues);
  REQUIRE(c.ov_eigenvalues->size() == 2);
  for (const std::complex<double>& l : *c.ov_eigenvalues) {
    double nearest = 1e9;
    for (long i = 0; i < full.size(); ++i) nearest = std::min(nearest, std::abs(full(i) - l));
    CHECK(nearest < 1e-9);
  }
  const Eigen::MatrixXd full_ov = vocab.embedding.cast<double>() * w_ov * vocab.unembedding.cast<double>();  // [5, 5]
  const Eigen::VectorXcd lambda = Eigen::EigenSolver<Eigen::MatrixXd>(full_ov).eigenvalues();
  const double expected = lambda.sum().real() / lambda.cwiseAbs().sum();
  REQUIRE(c.copying_score);
  CHECK_THAT(*c.copying_score, WithinAbs(expected, 1e-9));
  // The gain is folded into the input side: the QK spectrum is that of diag(g) W_Q (diag(g) W_K)ᵀ.
  const Eigen::MatrixXd w_qk = g * layer.w_q.middleCols(2, 2).cast<double>() * (g * layer.w_k.middleCols(2, 2).cast<double>()).transpose();
  const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(w_qk).singularValues();
  CHECK_THAT(c.qk_singular_values[0], WithinAbs(s(0), 1e-9));
  CHECK_THAT(c.qk_singular_values[1], WithinAbs(s(1), 1e-9));
}

TEST_CASE("head_circuits: no W_O leaves the OV circuit unset, a rectangular W_OV has no eigenvalues", "[analysis][circuits]") {
  Case c = layer_case(test::data_file("use-lite/layer0.json"));  // W_O is [256, 512]
  const HeadCircuits rectangular = head_circuits(c.prepared.in.weights.layer, 0, Vector(), Vector(), nullptr);
  CHECK(rectangular.ov_singular_values);
  CHECK_FALSE(rectangular.ov_eigenvalues);
  CHECK_FALSE(rectangular.copying_score);
  c.prepared.in.weights.layer.w_o.resize(0, 0);
  const HeadCircuits none = head_circuits(c.prepared.in.weights.layer, 0, Vector(), Vector(), nullptr);
  CHECK(none.qk_singular_values.size() == 64);
  CHECK_FALSE(none.ov_singular_values);
}

TEST_CASE("parse_explain_head: the forms of a layer and of a model", "[cli][errors]") {
  CHECK(parse_explain_head("3", false) == LayerHead{0, 3, ""});
  CHECK(parse_explain_head("H3", false) == LayerHead{0, 3, ""});
  CHECK(parse_explain_head("L2H5", true) == LayerHead{2, 5, ""});
  CHECK(parse_explain_head("cross.L2H5", true) == LayerHead{2, 5, "cross"});
  CHECK_THROWS_WITH(parse_explain_head("L2H5", false), Contains("--head") && Contains("H (e.g. 3) or H3") && Contains("--model"));
  CHECK_THROWS_WITH(parse_explain_head("5", true), Contains("L<layer>H<head>") && Contains("cross.L2H5"));
  CHECK_THROWS_AS(parse_explain_head("H-1", false), UsageError);
  CHECK_THROWS_AS(parse_explain_head("side.L0H1", true), UsageError);
}

TEST_CASE("explain: bad --head and --query are one line, exit 1, nothing written", "[cli][errors]") {
  test::TempDir dir;
  const std::string stories = test::data_file("stories260k/layer0.json");
  struct Bad {
    std::string head;
    std::optional<long> query;
    std::string message;
  };
  const Bad bad = GENERATE(Bad{"8", std::nullopt, "--head: 8: head 8 does not exist (the layer has 8 heads, 0-7)"},
                           Bad{"L0H1", std::nullopt, "--head: expected a head of the layer: H (e.g. 3) or H3, got \"L0H1\""},
                           Bad{"1", 32L, "--query: 32 is past the text: it has 32 query tokens (0-31)"});
  Options o = explain_options(stories, bad.head, dir.file("out"));
  o.query = bad.query;
  const auto before = test::snapshot(dir.path());
  const test::RunResult r = test::run_with(o);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains(bad.message));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(test::snapshot(dir.path()) == before);
}

TEST_CASE("explain: a layer without W_O explains the scores with a warning naming W_O", "[cli]") {
  test::TempDir dir;
  nlohmann::json layer = nlohmann::json::parse(test::read_file(test::data_file("use-lite/layer0.json")));
  layer.erase("W_O");
  layer.erase("b_O");
  layer.erase("reference_attn_output");
  const std::string path = dir.file("no_wo.json");
  std::ofstream(path) << layer.dump();
  const test::RunResult r = test::run_with(explain_options(path, "2", dir.file("out")));
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Contains("warning") && Contains("has no W_O"));
  const nlohmann::json e = nlohmann::json::parse(test::read_file(dir.file("out/explain.json")));
  CHECK(e["circuits"]["ov_singular_values"].is_null());
  CHECK(e["circuits"]["ov_eigenvalues"].is_null());
  CHECK(e["output"].size() == 64);
}

TEST_CASE("explain: explain.json has the issue's fields, a masked score null", "[cli]") {
  test::TempDir dir;
  Options o = explain_options(test::data_file("stories260k/layer0.json"), "H5", dir.file("out"));
  o.query = 3;
  const test::RunResult r = test::run_with(o);
  REQUIRE(r.code == 0);
  const nlohmann::json e = nlohmann::json::parse(test::read_file(dir.file("out/explain.json")));
  std::set<std::string> keys, circuits;
  for (const auto& item : e.items()) keys.insert(item.key());
  for (const auto& item : e["circuits"].items()) circuits.insert(item.key());
  CHECK(keys == std::set<std::string>{"format", "version", "query_tokens", "key_tokens", "query", "scale", "q", "k",
                                      "products", "scores_raw", "scores", "weights", "masked", "v", "weighted_values",
                                      "output", "circuits", "qk_top_tokens"});
  CHECK(circuits == std::set<std::string>{"qk_singular_values", "ov_singular_values", "ov_eigenvalues", "copying_score",
                                          "folded"});
  CHECK(e["format"] == "attnviz.explain");
  CHECK(e["version"] == 1);
  CHECK(e["query"] == 3);
  CHECK(e["scores"][4].is_null());
  CHECK(e["masked"][4] == true);
  CHECK(e["weights"][4] == 0.0);
  CHECK(e["k"].size() == 32);
  CHECK(e["k"][0].size() == 8);
  CHECK(e["circuits"]["folded"] == false);
  CHECK(e["circuits"]["copying_score"].is_null());
  CHECK(e["qk_top_tokens"].is_null());
}

TEST_CASE("explain: a query whose every key is masked is refused, saying the row has no weights", "[cli][errors]") {
  // stories260K with key 0 as padding under its causal mask: query 0 may attend to nothing.
  test::TempDir dir;
  nlohmann::json layer = nlohmann::json::parse(test::read_file(test::data_file("stories260k/layer0.json")));
  std::vector<int> mask(layer["tokens"].size(), 1);
  mask[0] = 0;
  layer["attention_mask"] = mask;
  const std::string path = dir.file("padded.json");
  std::ofstream(path) << layer.dump();
  Options o = explain_options(path, "0", dir.file("out"));
  o.query = 0;
  const test::RunResult r = test::run_with(o);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("--query: 0 (\"<s>\"): every key is masked (causal/padding), so the row has no weights to explain"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out")));
  o.query = 1;  // the next query still sees itself
  CHECK(test::run_with(o).code == 0);
}

TEST_CASE("explain: --format png,svg,html writes the pictures as SVG and a page that switches queries", "[cli][render]") {
  test::TempDir dir;
  Options o = explain_options(test::data_file("stories260k/layer0.json"), "5", dir.file("out"));
  o.formats = {"png", "svg", "html"};
  o.query = 10;
  const test::RunResult r = test::run_with(o);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("wrote explain.json, explain.png, circuits.png, explain.svg, circuits.svg, explain.html"));
  const std::string svg = test::read_file(dir.file("out/explain.svg"));
  CHECK_THAT(svg, Contains("<svg") && Contains(">k (key vectors)</text>") && Contains("\u2581Once"));
  const std::string html = test::read_file(dir.file("out/explain.html"));
  // Every query's view is in the page (the script switches between them), the one asked first.
  CHECK_THAT(html, Contains("\"first_query\":10") && Contains("addEventListener(\"click\""));
  CHECK(std::count(html.begin(), html.end(), '{') > 32);
  CHECK(html.find("innerHTML") == std::string::npos);
}

TEST_CASE("render_neuron_figure: masked keys are grey, every part inside the picture", "[render]") {
  const Case c = layer_case(test::data_file("stories260k/layer0.json"));
  const NeuronView v = neuron_view(c.inputs(), 5, 3);
  const FontSet fonts({default_font_path()}, nullptr);
  const RenderedNeuronFigure f =
      render_neuron_figure(NeuronFigureRequest{"t", "q", c.record.key_tokens, &v, 4096}, fonts);
  REQUIRE(f.image.width_px() == f.width_px);
  for (const Rect& part : {f.q_cells, f.key_cells, f.product_cells, f.value_cells, f.output_cells})
    CHECK((part.x_px >= 0 && part.right_px() <= f.image.width_px() && part.bottom_px() <= f.image.height_px()));
  CHECK(f.key_cells.height_px == 32 * f.row_px);
  // Key 10 is masked for query 3: its products and weighted value are grey; key 1's are not.
  const int masked_y = f.product_cells.y_px + 10 * f.row_px + f.row_px / 2, open_y = f.product_cells.y_px + f.row_px + f.row_px / 2;
  CHECK(f.image.at(f.product_cells.x_px + 1, masked_y) == Rgb{225, 225, 225});
  CHECK(f.image.at(f.value_cells.x_px + 1, masked_y) == Rgb{225, 225, 225});
  CHECK_FALSE(f.image.at(f.product_cells.x_px + 1, open_y) == Rgb{225, 225, 225});
}

TEST_CASE("neuron_view: a soft-cap bends the scores before the softmax, scores_raw stays uncapped", "[analysis]") {
  // Gemma 2's attention soft-cap: scores = c·tanh(scores_raw / c); weights = softmax(scores).
  Case c = layer_case(test::data_file("stories260k/layer0.json"));
  LayerInputs capped = c.inputs();
  capped.soft_cap = 5.0f;
  const NeuronView plain = neuron_view(c.inputs(), 5, 20), v = neuron_view(capped, 5, 20);
  double sum = 0;
  for (long j = 0; j <= 20; ++j) sum += std::exp(double(v.scores(j)));
  for (long j = 0; j <= 20; ++j) {
    CHECK(v.scores_raw(j) == plain.scores_raw(j));
    CHECK_THAT(v.scores(j), WithinAbs(5.0 * std::tanh(plain.scores_raw(j) / 5.0), 1e-5));
    CHECK_THAT(v.weights(j), WithinAbs(std::exp(double(v.scores(j))) / sum, 1e-6));
  }
  CHECK(std::isinf(v.scores(21)));
  CHECK(v.weights(21) == 0.0f);
}

TEST_CASE("explain --model: weights equal the model dump's row, for a decoder, a cross-attention head and other families", "[cli][model]") {
  test::TempDir dir;
  struct Model {
    std::string model, text, head;
    int layer, h;
    std::string stack, kind;
  };
  const Model m = GENERATE(Model{test::data_file("stories260k/stories260K.gguf"), "Lily saw a cat. Lily saw a", "L1H3", 1, 3, "decoder", "self"},
                           Model{test::data_file("aren-translit/model"), "\u0622\u062a\u0632\u0645\u0648\u0646", "cross.L2H6", 2, 6,
                                 "decoder", "cross"},
                           // Families (issue 25): a soft-capped, windowed layer; QK-norm; an encoder.
                           Model{test::test_data_file("families/gemma2.gguf"), "a b c d e f g h i j", "L1H1", 1, 1, "decoder", "self"},
                           Model{test::test_data_file("families/qwen3.gguf"), "a b c d e f", "L0H2", 0, 2, "decoder", "self"},
                           Model{test::test_data_file("bert/synthetic-bert.gguf"), "a b c", "L1H0", 1, 0, "encoder", "self"});
  Options e;
  e.command = Command::Explain;
  e.model = m.model;
  e.text = m.text;
  e.explain_head = m.head;
  e.output = dir.file("explain");
  REQUIRE(test::run_with(e).code == 0);
  Options d = e;
  d.command = Command::Dump;
  d.output = dir.file("dump.json");
  REQUIRE(test::run_with(d).code == 0);
  const nlohmann::json x = nlohmann::json::parse(test::read_file(dir.file("explain/explain.json")));
  const nlohmann::json dump = nlohmann::json::parse(test::read_file(dir.file("dump.json")));
  const long query = x["query"].get<long>();
  bool found = false;
  for (const nlohmann::json& block : dump["layers"]) {
    if (block["layer"] != m.layer || block.value("stack", "decoder") != m.stack || block.value("kind", "self") != m.kind) continue;
    found = true;
    const nlohmann::json& row = block["weights"][m.h][query];
    REQUIRE(row.size() == x["weights"].size());
    for (std::size_t j = 0; j < row.size(); ++j) CHECK_THAT(x["weights"][j].get<double>(), WithinAbs(row[j].get<double>(), 1e-6));
  }
  CHECK(found);
}
