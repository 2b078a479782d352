// Value-weighted norms, ALTI and attention flow (issue 20): hand-checked small cases, the
// identity Σ_j Σ_h α f^h(x_j) + b_O = the block's output, and the bad inputs of --measure/--flow.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <filesystem>
#include <memory>
#include <random>

#include "analysis/alti.hpp"
#include "analysis/attention_flow.hpp"
#include "analysis/max_flow.hpp"
#include "analysis/measures.hpp"
#include "analysis/value_norms.hpp"
#include "attention/attention.hpp"
#include "attention/mask.hpp"
#include "attention/rollout.hpp"
#include "attention/value_vectors.hpp"
#include "cli/attention_job.hpp"
#include "model/decoder_model.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/gguf_decoder.hpp"
#include "records/input_schema.hpp"
#include "records/record_json.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::check_matrix_near;
using attnviz::test::data_file;
using attnviz::test::matrix;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

Matrix random_matrix(long rows, long cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.5f);
  Matrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
  return m;
}

Vector random_vector(long n, std::mt19937& rng) { return random_matrix(1, n, rng).row(0).transpose(); }

// Σ_h A_h · F^h + b_O: the block's output rebuilt from the head value vectors.
Matrix rebuilt_output(const std::vector<Matrix>& weights, const std::vector<Matrix>& f, const Vector& b_o) {
  Matrix sum = Matrix::Zero(weights.front().rows(), f.front().cols());
  for (std::size_t h = 0; h < weights.size(); ++h) sum += weights[h] * f[h];
  if (b_o.size() != 0) sum.rowwise() += b_o.transpose();
  return sum;
}

}  // namespace

TEST_CASE("head_value_vectors: a value vector of zeros gets zero norm whatever its weight", "[measures]") {
  AttentionLayer layer;
  layer.num_heads = layer.num_kv_heads = 2;
  layer.w_q = layer.w_k = Matrix::Identity(2, 2);
  layer.w_v = Matrix::Identity(2, 2);
  layer.w_o = matrix({{2, 0}, {0, 3}});
  const Matrix x = matrix({{0, 0}, {3, 4}});  // key 0's value vector is zero
  const MaskMatrix all;
  AttentionResult result = multi_head_attention(layer, matrix({{50, 50}}), x, all, {false, false, true});
  REQUIRE(result.weights[0](0, 0) < 1e-3);  // the query looks at key 1 …
  const NormMeasures n = value_weighted_norms(result.weights, result.value_vectors);
  // … but put the weight on key 0 and its norm is still 0: α·‖0‖ = 0.
  std::vector<Matrix> heavy = {matrix({{0.99, 0.01}}), matrix({{1, 0}})};
  const NormMeasures m = value_weighted_norms(heavy, result.value_vectors);
  for (int h = 0; h < 2; ++h) {
    CHECK(n.value_norms(h, 0) == 0.0f);
    CHECK(m.norms[h](0, 0) == 0.0f);
  }
  CHECK(m.layer_norms(0, 0) == 0.0f);
  // Head 0 writes (3·2, 0) per unit of weight from key 1, head 1 (0, 4·3): norms 6 and 12.
  CHECK_THAT(n.value_norms(0, 1), WithinAbs(6.0, 1e-6));
  CHECK_THAT(n.value_norms(1, 1), WithinAbs(12.0, 1e-6));
  CHECK_THAT(m.norms[0](0, 1), WithinAbs(0.01 * 6.0, 1e-6));
  // The layer's sum α0·(6, 0) + α1·(0, 12) for key 1 = (0.06, 0): norm 0.06.
  CHECK_THAT(m.layer_norms(0, 1), WithinAbs(0.06, 1e-6));
}

TEST_CASE("value_weighted_norms: heads that cancel give a layer norm of zero though each head's norm is not", "[measures]") {
  const std::vector<Matrix> weights = {matrix({{0.5, 0.5}}), matrix({{0.5, 0.5}})};
  const std::vector<Matrix> f = {matrix({{1, 0}, {0, 2}}), matrix({{-1, 0}, {0, 2}})};
  const NormMeasures m = value_weighted_norms(weights, f);
  CHECK_THAT(m.norms[0](0, 0), WithinAbs(0.5, 1e-7));
  CHECK_THAT(m.norms[1](0, 0), WithinAbs(0.5, 1e-7));
  CHECK_THAT(m.layer_norms(0, 0), WithinAbs(0.0, 1e-7));
  CHECK_THAT(m.layer_norms(0, 1), WithinAbs(2.0, 1e-6));  // ‖0.5·(0,2) + 0.5·(0,2)‖
}

TEST_CASE("head_value_vectors: grouped-query heads share their key/value head's V, each its own W_O rows", "[measures]") {
  AttentionLayer layer;
  layer.num_heads = 2;
  layer.num_kv_heads = 1;
  layer.w_q = Matrix::Identity(2, 2);
  layer.w_k = layer.w_v = matrix({{1}, {0}});  // d_k = d_v = 1, one shared head
  layer.w_o = matrix({{1, 0}, {0, 5}});        // head 0 writes to column 0, head 1 (×5) to column 1
  const std::vector<Matrix> f = head_value_vectors(layer, matrix({{2}, {3}}));
  check_matrix_near(f[0], matrix({{2, 0}, {3, 0}}), 0);
  check_matrix_near(f[1], matrix({{0, 10}, {0, 15}}), 0);
}

TEST_CASE("head_value_vectors: without W_O each head writes its own columns of the concat", "[measures]") {
  AttentionLayer layer;
  layer.num_heads = layer.num_kv_heads = 2;
  layer.w_q = layer.w_k = layer.w_v = Matrix::Identity(2, 2);
  const std::vector<Matrix> f = head_value_vectors(layer, matrix({{3, 4}}));
  check_matrix_near(f[0], matrix({{3, 0}}), 0);
  check_matrix_near(f[1], matrix({{0, 4}}), 0);
}

// The largest relative difference of two same-shaped matrices (absolute below 1e-30).
static double worst_relative(const Matrix& a, const Matrix& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  const Eigen::ArrayXXd x = a.cast<double>().array(), y = b.cast<double>().array();
  return ((x - y).abs() / y.abs().max(1e-30)).maxCoeff();
}

TEST_CASE("head_value_norms: ‖f^h(x_j)‖ through W_O's Gram matrix equals the norm of f itself (GQA, biases, no W_O)", "[measures]") {
  std::mt19937 rng(7);
  AttentionLayer layer;
  layer.num_heads = 4;
  layer.num_kv_heads = 2;
  layer.w_q = random_matrix(8, 12, rng);
  layer.w_k = random_matrix(8, 6, rng);
  layer.w_v = random_matrix(8, 6, rng);
  layer.w_o = random_matrix(12, 10, rng);
  Matrix v = random_matrix(9, 6, rng);
  v.row(3).setZero();  // a zero value vector: norm exactly 0, no NaN from rounding below 0
  for (const bool with_w_o : {true, false}) {
    if (!with_w_o) layer.w_o.resize(0, 0);
    const std::vector<Matrix> f = head_value_vectors(layer, v);
    const Matrix norms = head_value_norms(layer, v);
    REQUIRE(norms.rows() == 4);
    REQUIRE(norms.cols() == 9);
    for (long h = 0; h < 4; ++h) {
      Matrix expected(1, 9);
      expected.row(0) = f[h].cast<double>().rowwise().norm().cast<Scalar>().transpose();
      CHECK(worst_relative(norms.row(h), expected) < 1e-6);
      CHECK(norms(h, 3) == 0);
    }
  }
}

TEST_CASE("value_weighted_norms: without layer_norms (pictures) norms and value_norms are the dump's", "[measures]") {
  std::mt19937 rng(11);
  std::vector<Matrix> weights, f;
  for (int h = 0; h < 3; ++h) {
    weights.push_back(random_matrix(5, 6, rng).cwiseAbs());
    f.push_back(random_matrix(6, 4, rng));
  }
  const NormMeasures dump = value_weighted_norms(weights, f);
  const NormMeasures pictures = value_weighted_norms(weights, f, false);
  REQUIRE(dump.layer_norms.size() == 30);
  CHECK(pictures.layer_norms.size() == 0);
  CHECK(worst_relative(pictures.value_norms, dump.value_norms) < 1e-6);
  for (int h = 0; h < 3; ++h) CHECK(worst_relative(pictures.norms[h], dump.norms[h]) < 1e-6);
}

TEST_CASE("compute_record: heatmaps --measure norms (Gram path, no f) gives dump's norms and value_norms, without layer_norms", "[measures]") {
  for (const char* file : {"stories260k/layer0.json", "use-lite/layer0.json"}) {
    INFO(file);
    Options o;
    o.sentence = data_file(file);
    o.measure = "norms";
    std::vector<std::string> warnings;
    o.command = Command::Dump;
    const AttentionRecord dump = compute_record(o, warnings);
    o.command = Command::Heatmaps;
    const AttentionRecord pictures = compute_record(o, warnings);
    REQUIRE(dump.layer_norms.size() != 0);
    CHECK(pictures.layer_norms.size() == 0);
    CHECK(worst_relative(pictures.value_norms, dump.value_norms) < 1e-6);
    REQUIRE(pictures.norms.size() == dump.norms.size());
    for (std::size_t h = 0; h < dump.norms.size(); ++h) check_matrix_near(pictures.norms[h], dump.norms[h], 1e-6 * dump.norms[h].maxCoeff());
  }
}

TEST_CASE("multi_head_attention: the heads' value vectors add up to the block's output (single layer)", "[measures]") {
  std::mt19937 rng(20);
  AttentionLayer layer;
  layer.num_heads = 4;
  layer.num_kv_heads = 2;
  layer.w_q = random_matrix(8, 12, rng);
  layer.w_k = random_matrix(8, 6, rng);
  layer.w_v = random_matrix(8, 6, rng);
  layer.b_v = random_vector(6, rng);
  layer.w_o = random_matrix(12, 8, rng);
  layer.b_o = random_vector(8, rng);
  const Matrix x = random_matrix(5, 8, rng);
  const AttentionResult r = multi_head_attention(layer, x, x, MaskMatrix(), {false, true, true});
  check_matrix_near(rebuilt_output(r.weights, r.value_vectors, layer.b_o), r.output, 1e-5);
}

TEST_CASE("multi_head_attention: the identity holds on the real stories260K layer file", "[measures]") {
  InputBundle in = load_inputs({data_file("stories260k/layer0.json"), "", ""});
  const AttentionLayer& layer = in.weights.layer;
  const long n = static_cast<long>(in.queries.tokens.size());
  std::vector<long long> positions(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) positions[static_cast<std::size_t>(i)] = i;
  const RopeRequest rope{*in.weights.rope, positions, positions};
  const AttentionResult r = multi_head_attention(layer, in.queries.embeddings, in.queries.embeddings,
                                                 build_mask(n, n, true, {}), {false, true, true}, rope);
  check_matrix_near(rebuilt_output(r.weights, r.value_vectors, layer.b_o), r.output, 1e-5);
}

TEST_CASE("DecoderModel: every layer's value vectors add up to its attention output (stories260K)", "[measures]") {
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(data_file("stories260k/stories260K.gguf")));
  int layers = 0;
  const BlockSink sink = [&](AttentionBlock&& block) {
    REQUIRE(block.record.output.rows() == 5);
    REQUIRE(block.residual.rows() == 5);
    check_matrix_near(rebuilt_output(block.record.weights, block.value_vectors, block.b_o), block.record.output, 1e-5);
    ++layers;
  };
  ForwardRequest request;
  request.token_ids = {1, 403, 407, 261, 378};
  request.tokens.assign(5, "t");
  request.sink = &sink;
  request.logits = false;
  request.wants = AttentionWants{false, true, true};
  model.forward(request);
  CHECK(layers == 5);
}

TEST_CASE("DecoderModel: each family's value vectors and b_O add up to its attention output", "[measures][families]") {
  // GPT-2 has an attention output bias b_O: the block's b_o must carry it (it was left empty).
  for (const char* family : {"gpt2", "qwen2", "qwen3", "gemma2", "gemma3", "phi3"}) {
    INFO(family);
    const DecoderModel model = decoder_from_gguf(
        std::make_shared<const GgufFile>(attnviz::test::test_data_file(std::string("families/") + family + ".gguf")));
    int layers = 0;
    const BlockSink sink = [&](AttentionBlock&& block) {
      if (std::string(family) == "gpt2") CHECK(block.b_o.size() == model.config().d_model);
      check_matrix_near(rebuilt_output(block.record.weights, block.value_vectors, block.b_o), block.record.output, 1e-5);
      ++layers;
    };
    ForwardRequest request;
    request.token_ids = {1, 5, 9, 2, 7, 3};
    request.tokens.assign(6, "t");
    request.sink = &sink;
    request.logits = false;
    request.wants = AttentionWants{false, true, true};
    model.forward(request);
    CHECK(layers == model.config().num_layers);
  }
}

TEST_CASE("run: --measure alti on a family with a post-attention norm (Gemma) is refused saying why", "[measures][errors]") {
  attnviz::test::TempDir dir;
  Options o;
  o.command = Command::Dump;
  o.output = dir.file("out.json");
  o.model = attnviz::test::test_data_file("families/gemma2.gguf");
  o.token_ids = std::vector<int>{1, 5, 9, 2};
  o.measure = "alti";
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("--measure: alti:") && Contains("post-attention norm") && Contains("use --measure norms"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out.json")));
}

TEST_CASE("alti_contributions: a hand-checked two-token layer", "[measures]") {
  // T_0 = {(1,0) + r_0 = (2,0), 0}: y_0 = (2,0), c_0 = [2, 0] → [1, 0].
  // T_1 = {0.5·(1,0), 0.5·(0,1) + r_1 = (0,2.5)}: y_1 = (0.5,2.5), ‖y_1‖₁ = 3,
  // c_1 = [3 − 2.5, 3 − 0.5] = [0.5, 2.5] → [1/6, 5/6].
  const std::vector<Matrix> weights = {matrix({{1, 0}, {0.5, 0.5}})};
  const std::vector<Matrix> f = {matrix({{1, 0}, {0, 1}})};
  const Matrix c = alti_contributions(weights, f, matrix({{1, 0}, {0, 2}}), Vector());
  check_matrix_near(c, matrix({{1, 0}, {1.0 / 6.0, 5.0 / 6.0}}), 1e-6);
}

TEST_CASE("alti_contributions: a term pointing away from the output contributes nothing, and b_O counts in y", "[measures]") {
  // One query: T(x_0) = (1, 0) (with r_0 = 0), T(x_1) = (−0.5, 0), b_O = (0, 1): y = (0.5, 1),
  // ‖y‖₁ = 1.5; c_0 = 1.5 − ‖(−0.5, 1)‖₁ = 0, c_1 = 1.5 − ‖(1, 1)‖₁ < 0 → 0: a zero row.
  const std::vector<Matrix> weights = {matrix({{0.5, 0.5}, {0.5, 0.5}})};
  const std::vector<Matrix> f = {matrix({{2, 0}, {-1, 0}})};
  Vector b_o(2);
  b_o << 0, 1;
  const Matrix c = alti_contributions(weights, f, Matrix::Zero(2, 2), b_o);
  CHECK(c(0, 0) == 0.0f);
  CHECK(c(0, 1) == 0.0f);
}

TEST_CASE("alti_contributions: a post-LN block's parts add up to LayerNorm(y) and its contributions follow them", "[measures]") {
  // y = (3, 1): mean 2, σ = 1 (ε 0), LN(y) = γ ⊙ (1, −1) + β. With γ = (2, 2), β = (0, 0):
  // T̃(x_0) = 2·((1,1) − 1)/1 = (0, 0) from T(x_0) = (2, 0) + r_0 (= (−1, 1)) = (1, 1),
  // T̃(x_1) = 2·((2, 0) − 1) = (2, −2) from T(x_1) = (2, 0): all of LN(y) = (2, −2) is x_1's.
  const std::vector<Matrix> weights = {matrix({{0.5, 0.5}, {0.5, 0.5}})};
  const std::vector<Matrix> f = {matrix({{4, 0}, {4, 0}})};
  PostLayerNorm norm;
  norm.gamma = Vector::Constant(2, 2.0f);
  norm.beta = Vector::Zero(2);
  norm.epsilon = 0;
  const Matrix c = alti_contributions(weights, f, matrix({{-1, 1}, {0, 0}}), Vector(), norm);
  CHECK_THAT(c(0, 0), WithinAbs(0.0, 1e-6));
  CHECK_THAT(c(0, 1), WithinAbs(1.0, 1e-6));
}

TEST_CASE("AltiRollout: composes layers first layer first, R_1 = C_1 · C_0", "[measures]") {
  AltiRollout rollout;
  rollout.add_layer(matrix({{1, 0}, {0.5, 0.5}}));
  rollout.add_layer(matrix({{0, 1}, {1, 0}}));
  const Eigen::MatrixXd expected = (Eigen::MatrixXd(2, 2) << 0.5, 0.5, 1, 0).finished();
  CHECK((rollout.current() - expected).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE("MaxFlow: the textbook network of Cormen et al. (Fig. 26.1) carries 23", "[measures]") {
  MaxFlow graph(6);  // s = 0, v1 … v4 = 1 … 4, t = 5
  graph.add_edge(0, 1, 16);
  graph.add_edge(0, 2, 13);
  graph.add_edge(2, 1, 4);
  graph.add_edge(1, 3, 12);
  graph.add_edge(3, 2, 9);
  graph.add_edge(2, 4, 14);
  graph.add_edge(4, 3, 7);
  graph.add_edge(3, 5, 20);
  graph.add_edge(4, 5, 4);
  CHECK_THAT(graph.run(0, 5), WithinAbs(23.0, 1e-12));
  CHECK_THAT(graph.run(0, 5), WithinAbs(23.0, 1e-12));  // a second run starts from zero flow
  CHECK_THAT(graph.run(2, 1), WithinAbs(4.0, 1e-12));  // only the edge v2 → v1 leads there
}

TEST_CASE("AttentionFlow: one layer's flow is Â itself, two layers differ from the rollout", "[measures]") {
  // A = [[1, 0], [0, 1]] (causal, each token on itself) gives Â = I; A = [[1, 0], [1, 0]] gives
  // Â = [[1, 0], [0.5, 0.5]].
  const Matrix a = matrix({{1, 0}, {1, 0}});
  AttentionFlow one;
  one.add_layer(a, MaskMatrix());
  const Eigen::MatrixXd expected = (Eigen::MatrixXd(2, 2) << 1, 0, 0.5, 0.5).finished();
  CHECK((one.flow() - expected).cwiseAbs().maxCoeff() < 1e-12);
  // Two such layers: from position 1, 0.5 + 0.5 reach input 0 (through nodes 0 and 1 of the
  // middle layer) and 0.5 input 1: row [2/3, 1/3]. The rollout's product gives [0.75, 0.25].
  AttentionFlow two;
  two.add_layer(a, MaskMatrix());
  two.add_layer(a, MaskMatrix());
  const Eigen::MatrixXd flow = two.flow();
  CHECK_THAT(flow(0, 0), WithinAbs(1.0, 1e-12));
  CHECK_THAT(flow(1, 0), WithinAbs(2.0 / 3.0, 1e-12));
  CHECK_THAT(flow(1, 1), WithinAbs(1.0 / 3.0, 1e-12));
}

TEST_CASE("normalise_rows: rows of N become distributions, an all-zero row stays zero", "[measures]") {
  check_matrix_near(normalise_rows(matrix({{1, 3}, {0, 0}})), matrix({{0.25, 0.75}, {0, 0}}), 1e-7);
}

TEST_CASE("record_json: the measure fields round-trip through a dump", "[measures][io]") {
  AttentionRecord record;
  record.query_tokens = record.key_tokens = {"a", "b"};
  record.num_heads = 1;
  record.weights = {matrix({{1, 0}, {0.25, 0.75}})};
  record.norms = {matrix({{2, 0}, {0.5, 3}})};
  record.value_norms = matrix({{2, 4}});
  record.layer_norms = matrix({{2, 0}, {0.5, 3}});
  record.alti = matrix({{1, 0}, {0.5, 0.5}});
  attnviz::test::TempDir dir;
  const std::string path = dir.file("dump.json");
  {
    std::ofstream(path) << record_to_json(record);
  }
  std::vector<std::string> warnings;
  const AttentionRecord back = read_record(path, 0, warnings);
  CHECK(warnings.empty());
  check_matrix_near(back.norms.at(0), record.norms[0], 0);
  check_matrix_near(back.value_norms, record.value_norms, 0);
  check_matrix_near(back.layer_norms, record.layer_norms, 0);
  check_matrix_near(back.alti, record.alti, 0);
}

TEST_CASE("record_json: a negative norm or a dump with norms but no value_norms is refused, naming the field", "[measures][errors]") {
  attnviz::test::TempDir dir;
  const std::string path = dir.file("bad.json");
  const std::string head = R"({"tokens": ["a", "b"], "weights": [[[1, 0], [0.5, 0.5]]], )";
  std::vector<std::string> warnings;
  std::ofstream(path) << head << R"("norms": [[[1, 0], [0.5, -0.5]]], "value_norms": [[1, 1]], "layer_norms": [[1, 0], [0.5, 0.5]]})";
  CHECK_THROWS_WITH(read_record(path, 0, warnings), Contains("bad.json") && Contains("/norms/0/1/1") && Contains(">= 0"));
  std::ofstream(path) << head << R"("norms": [[[1, 0], [0.5, 0.5]]], "layer_norms": [[1, 0], [0.5, 0.5]]})";
  CHECK_THROWS_WITH(read_record(path, 0, warnings), Contains("/value_norms"));
  std::ofstream(path) << head << R"("alti": [[1, 0], [0.5, 0.4]]})";
  CHECK_THROWS_WITH(read_record(path, 0, warnings), Contains("/alti/1") && Contains("row sum 0.9"));
}

namespace {

// A self-attention layer file with no W_O: two tokens, d_model 2, one head.
std::string layer_without_w_o(const attnviz::test::TempDir& dir) {
  const std::string path = dir.file("no_w_o.json");
  std::ofstream(path) << R"({"tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]], "num_heads": 1,
    "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1, 0], [0, 1]]})";
  return path;
}

Options dump_options(const std::string& output) {
  Options o;
  o.command = Command::Dump;
  o.output = output;
  return o;
}

}  // namespace

TEST_CASE("run: --measure alti on a layer without W_O is refused, naming the file and /W_O, nothing written", "[measures][errors]") {
  attnviz::test::TempDir dir;
  Options o = dump_options(dir.file("out.json"));
  o.sentence = layer_without_w_o(dir);
  o.measure = "alti";
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("no_w_o.json") && Contains("/W_O") && Contains("--measure alti"));
  CHECK_FALSE(std::filesystem::exists(o.output));
  o.measure = "norms";  // norms need no W_O: each head's value vector in its columns of the concat
  CHECK(attnviz::test::run_with(o).code == 0);
}

TEST_CASE("run: --measure alti on cross-attention is refused saying why", "[measures][errors]") {
  attnviz::test::TempDir dir;
  Options o = dump_options(dir.file("out.json"));
  o.sentence = attnviz::test::fixture("fb_queries.json");
  o.source = attnviz::test::fixture("fb_source.json");
  o.measure = "alti";
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("--measure") && Contains("cross-attention") && Contains("residual"));
  CHECK_FALSE(std::filesystem::exists(o.output));
}

TEST_CASE("run: --flow past its bound of tokens is refused naming the bound, nothing written", "[measures][errors]") {
  attnviz::test::TempDir dir;
  Options o = dump_options(dir.file("out.json"));
  o.model = data_file("stories260k/stories260K.gguf");
  o.token_ids = std::vector<int>(kMaxFlowTokens + 1, 403);
  o.flow = true;
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("--flow") && Contains("limited to 64 tokens") && Contains("has 65"));
  CHECK_FALSE(std::filesystem::exists(o.output));
}

TEST_CASE("run: --flow without --model is refused", "[measures][errors]") {
  attnviz::test::TempDir dir;
  Options o = dump_options(dir.file("out.json"));
  o.sentence = data_file("stories260k/layer0.json");
  o.flow = true;
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("--flow") && Contains("--model"));
}

TEST_CASE("run: render --measure norms of a dump without norms names the missing field", "[measures][errors]") {
  attnviz::test::TempDir dir;
  Options dump = dump_options(dir.file("plain.json"));
  dump.sentence = data_file("stories260k/layer0.json");
  REQUIRE(attnviz::test::run_with(dump).code == 0);
  Options render = attnviz::test::render_options(dump.output, dir.file("pictures"));
  render.measure = "norms";
  const attnviz::test::RunResult r = attnviz::test::run_with(render);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("plain.json") && Contains("/norms") && Contains("dump --measure norms"));
  CHECK_FALSE(std::filesystem::exists(render.output));
}

TEST_CASE("run: --measure weights (the default) writes the dump of before, byte for byte", "[measures]") {
  attnviz::test::TempDir dir;
  Options plain = dump_options(dir.file("plain.json"));
  plain.sentence = data_file("stories260k/layer0.json");
  Options weights = plain;
  weights.output = dir.file("weights.json");
  weights.measure = "weights";
  REQUIRE(attnviz::test::run_with(plain).code == 0);
  REQUIRE(attnviz::test::run_with(weights).code == 0);
  CHECK(attnviz::test::read_file(plain.output) == attnviz::test::read_file(weights.output));
  Options norms = plain;
  norms.output = dir.file("norms.json");
  norms.measure = "norms";
  REQUIRE(attnviz::test::run_with(norms).code == 0);
  // The norms dump is the plain dump with the norm fields appended: the weights are untouched.
  const std::string plain_text = attnviz::test::read_file(plain.output);
  const std::string norms_text = attnviz::test::read_file(norms.output);
  const std::string body = plain_text.substr(0, plain_text.rfind("\n}"));
  CHECK(norms_text.compare(0, body.size(), body) == 0);
  CHECK(norms_text.compare(body.size(), 11, ",\n  \"norms\"") == 0);
}

TEST_CASE("run: heatmaps --measure norms --format html holds the norms and the weights, switchable", "[measures][render]") {
  attnviz::test::TempDir dir;
  Options o;
  o.command = Command::Heatmaps;
  o.sentence = data_file("stories260k/layer0.json");
  o.output = dir.file("pictures");
  o.formats = {"html", "png"};
  o.measure = "norms";
  REQUIRE(attnviz::test::run_with(o).code == 0);
  const std::string page = attnviz::test::read_file(dir.file("pictures/index.html"));
  CHECK_THAT(page, Contains("\"measure\":\"norms\""));
  CHECK_THAT(page, Contains("value-weighted norms"));  // the norms view's title
  CHECK_THAT(page, Contains("measure-select"));        // the switch
  // The weights view is there too, without a measure field (weights are the default).
  CHECK(page.find("self-attention weights") != std::string::npos);
  o.measure = "weights";
  o.output = dir.file("plain");
  REQUIRE(attnviz::test::run_with(o).code == 0);
  CHECK(attnviz::test::read_file(dir.file("plain/index.html")).find("\"measure\":") == std::string::npos);
}

TEST_CASE("run: heatmaps --measure alti draws one map per layer (grid.png only)", "[measures][render]") {
  attnviz::test::TempDir dir;
  Options o;
  o.command = Command::Heatmaps;
  o.sentence = data_file("stories260k/layer0.json");
  o.output = dir.file("alti");
  o.measure = "alti";
  const attnviz::test::RunResult r = attnviz::test::run_with(o);
  REQUIRE(r.code == 0);
  CHECK(std::filesystem::exists(dir.file("alti/grid.png")));
  CHECK_FALSE(std::filesystem::exists(dir.file("alti/head_0.png")));
}

TEST_CASE("run: render --format html of a dump holding norms offers them beside the weights", "[measures][render]") {
  attnviz::test::TempDir dir;
  Options dump = dump_options(dir.file("norms.json"));
  dump.sentence = data_file("stories260k/layer0.json");
  dump.measure = "norms";
  REQUIRE(attnviz::test::run_with(dump).code == 0);
  Options render = attnviz::test::render_options(dump.output, dir.file("pictures"));
  render.formats = {"html"};
  REQUIRE(attnviz::test::run_with(render).code == 0);  // no --measure: weights first, norms offered
  const std::string page = attnviz::test::read_file(dir.file("pictures/index.html"));
  CHECK_THAT(page, Contains("\"measure\":\"norms\""));
  CHECK(page.find("self-attention weights") < page.find("value-weighted norms"));
}

TEST_CASE("run: value vectors past float32 (V·W_O) are refused by dump (f itself) and heatmaps (Gram path) alike, nothing written",
          "[measures][errors]") {
  attnviz::test::TempDir dir;
  const std::string layer = dir.file("huge_w_o.json");
  // V = 1e20 is finite, f = V·W_O = 1e40 is not; the weights are.
  std::ofstream(layer) << R"({"tokens": ["a", "b"], "embeddings": [[1, 0], [0, 1]], "num_heads": 1,
    "W_Q": [[1, 0], [0, 1]], "W_K": [[1, 0], [0, 1]], "W_V": [[1e20, 0], [0, 1e20]], "W_O": [[1e20, 0], [0, 1e20]]})";
  for (const Command command : {Command::Dump, Command::Heatmaps}) {
    Options o = dump_options(dir.file(command == Command::Dump ? "out.json" : "pictures"));
    o.command = command;
    o.sentence = layer;
    o.measure = "norms";
    const attnviz::test::RunResult r = attnviz::test::run_with(o);
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains("huge_w_o.json") && Contains("value vectors f(x) = (X·W_V + b_V)·W_O of a head overflow") &&
                          Contains("run with --measure weights"));
    CHECK_FALSE(std::filesystem::exists(o.output));
    o.measure = "weights";
    CHECK(attnviz::test::run_with(o).code == 0);
  }
}

TEST_CASE("value_weighted_norms: layer_norms by pairs of heads equal ‖Σ_h α f‖ summed directly (causal zeros, rows past a block)",
          "[measures]") {
  std::mt19937 rng(5);
  const long n = 19, heads = 3, d = 7;  // 19 rows: two full row blocks and a short one
  std::vector<Matrix> weights, f;
  for (long h = 0; h < heads; ++h) {
    Matrix a = random_matrix(n, n, rng).cwiseAbs();
    for (long i = 0; i < n; ++i) a.row(i).tail(n - 1 - i).setZero();  // causal
    weights.push_back(a);
    f.push_back(random_matrix(n, d, rng));
  }
  const NormMeasures m = value_weighted_norms(weights, f);
  Matrix expected(n, n);
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      Eigen::VectorXd sum = Eigen::VectorXd::Zero(d);
      for (long h = 0; h < heads; ++h) sum += static_cast<double>(weights[h](i, j)) * f[h].row(j).transpose().cast<double>();
      expected(i, j) = static_cast<Scalar>(sum.norm());
    }
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      if (j > i) CHECK(m.layer_norms(i, j) == 0);
      else CHECK_THAT(m.layer_norms(i, j), WithinAbs(expected(i, j), 1e-6 * expected(i, j) + 1e-12));
    }
}

TEST_CASE("value_weighted_norms: layer_norms find a lone weight past long runs of zeros (row blocks, any head)", "[measures]") {
  // The scan for each row block's last non-zero key skips zeros 16 at a time: lone weights just
  // before, at and after a chunk's edge, at the last key, in one head of one row, must all count.
  std::mt19937 rng(11);
  const long n_q = 12, n_k = 70, heads = 2, d = 5;
  std::vector<Matrix> weights(heads, Matrix::Zero(n_q, n_k)), f;
  for (long h = 0; h < heads; ++h) f.push_back(random_matrix(n_k, d, rng));
  weights[0](0, 0) = 0.5f;
  weights[1](2, 69) = 0.25f;   // the last key, in one row of the first block, second head only
  weights[0](5, 53) = 0.125f;  // 16 zeros after it to the end
  weights[1](9, 37) = 0.75f;   // the second block: its only weights
  weights[0](10, 38) = 0.5f;
  weights[0](11, 21) = 1.0f;
  const NormMeasures m = value_weighted_norms(weights, f);
  for (long i = 0; i < n_q; ++i)
    for (long j = 0; j < n_k; ++j) {
      Eigen::VectorXd sum = Eigen::VectorXd::Zero(d);
      for (long h = 0; h < heads; ++h) sum += static_cast<double>(weights[h](i, j)) * f[h].row(j).transpose().cast<double>();
      const auto expected = static_cast<Scalar>(sum.norm());
      CHECK_THAT(m.layer_norms(i, j), WithinAbs(expected, 1e-6 * expected + 1e-12));
      if (expected != 0) CHECK(m.layer_norms(i, j) > 0);
    }
}
