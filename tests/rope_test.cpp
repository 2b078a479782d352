// Rotary position embeddings (issue #5): the engine against the float64 NumPy reference of
// scripts/rope_reference.py (golden files in tests/rope_golden/, tolerance 1e-5 on weights),
// RoPE's defining properties, and the errors for bad settings and positions.
#include "attention/rope.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <utility>

#include "attention/attention.hpp"
#include "attention/mask.hpp"
#include "cli/attention_job.hpp"
#include "core/error.hpp"
#include "records/input_schema.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::check_matrix_near;
using attnviz::test::max_abs_diff;
using attnviz::test::TempDir;
using Catch::Contains;
using nlohmann::json;

namespace {

constexpr double kGoldenTolerance = 1e-5;

std::string golden(const std::string& name) { return std::string(ATTNVIZ_TESTS_DIR) + "/rope_golden/" + name; }

json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return json::parse(in);
}

void write_json(const std::string& path, const json& value) { std::ofstream(path) << value.dump(); }

std::vector<Matrix> expected_weights(const json& golden_case) {
  std::vector<Matrix> heads;
  for (const json& head : golden_case.at("expected_weights")) {
    Matrix m(static_cast<Eigen::Index>(head.size()), static_cast<Eigen::Index>(head.at(0).size()));
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = head.at(r).at(c).get<Scalar>();
    }
    heads.push_back(std::move(m));
  }
  return heads;
}

// The CLI's own path (compute_record) for a golden file: a self-contained input with its rope
// block, or {"input": data file, "rope": {...}} for a large input kept only once in data/.
Options golden_options(const json& golden_case, const std::string& path) {
  Options options;
  options.sentence = path;
  options.causal = golden_case.value("causal", false);
  if (golden_case.contains("source_file")) options.source = golden(golden_case.at("source_file").get<std::string>());
  if (golden_case.contains("input")) {
    options.sentence = (std::filesystem::path(ATTNVIZ_DATA_DIR).parent_path() /
                        golden_case.at("input").get<std::string>()).string();
    const json& rope = golden_case.at("rope");
    options.rope = rope.at("style").get<std::string>();
    options.rope_theta = rope.at("theta").get<double>();
    options.rope_dim = rope.at("dim").get<long>();
  }
  return options;
}

double check_golden(const std::string& name) {
  const std::string path = golden(name);
  const json golden_case = read_json(path);
  std::vector<std::string> warnings;
  const AttentionRecord record = compute_record(golden_options(golden_case, path), warnings);
  const std::vector<Matrix> expected = expected_weights(golden_case);
  REQUIRE(record.rope.has_value());
  REQUIRE(record.weights.size() == expected.size());
  double worst = 0;
  for (std::size_t h = 0; h < expected.size(); ++h) {
    INFO("head " << h);
    check_matrix_near(record.weights[h], expected[h], kGoldenTolerance);
    worst = std::max(worst, max_abs_diff(record.weights[h], expected[h]));
  }
  return worst;
}

// Weights of a loaded input with explicit RoPE settings and positions (the engine's API).
std::vector<Matrix> rope_weights(const InputBundle& in, const AttentionLayer& layer, const RopeSettings& rope,
                                 const std::vector<long long>& query_positions,
                                 const std::vector<long long>& key_positions, bool causal) {
  const Sentence& keys = in.keys();
  const MaskMatrix allowed = build_mask(static_cast<long>(in.queries.tokens.size()),
                                        static_cast<long>(keys.tokens.size()), causal, keys.attention_mask);
  return multi_head_attention(layer, in.queries.embeddings, keys.embeddings, allowed, {},
                              RopeRequest{rope, query_positions, key_positions})
      .weights;
}

std::vector<long long> shifted(std::vector<long long> positions, long long offset) {
  for (long long& p : positions) p += offset;
  return positions;
}

// Column c of the result takes column source[c] of w (or entry source[c] of b).
Matrix permute_columns(const Matrix& w, const std::vector<long>& source) {
  Matrix out(w.rows(), w.cols());
  for (long c = 0; c < w.cols(); ++c) out.col(c) = w.col(source[c]);
  return out;
}

Vector permute_entries(const Vector& b, const std::vector<long>& source) {
  if (b.size() == 0) return b;
  Vector out(b.size());
  for (long c = 0; c < b.size(); ++c) out(c) = b(source[c]);
  return out;
}

// Within each head block of width d_k: dimension 2i -> i and 2i+1 -> i + rope_dim/2 for the
// first rope_dim dimensions, so interleaved pair i becomes half pair i; the rest stays put.
std::vector<long> interleaved_to_half(long n_heads, long d_k, long rope_dim) {
  std::vector<long> source(static_cast<std::size_t>(n_heads * d_k));
  for (long h = 0; h < n_heads; ++h) {
    for (long c = 0; c < d_k; ++c) {
      long from = c;
      if (c < rope_dim / 2) from = 2 * c;
      else if (c < rope_dim) from = 2 * (c - rope_dim / 2) + 1;
      source[static_cast<std::size_t>(h * d_k + c)] = h * d_k + from;
    }
  }
  return source;
}

// A golden input with one field replaced, written to `dir`.
std::string edited_input(const TempDir& dir, const std::string& pointer, const json& value) {
  json input = read_json(golden("interleaved_full.json"));
  input[json::json_pointer(pointer)] = value;
  const std::string path = dir.file("edited.json");
  write_json(path, input);
  return path;
}

std::string error_message(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  FAIL("no attnviz::Error thrown");
  return "";
}

}  // namespace

TEST_CASE("rope: random cases match the float64 NumPy reference", "[rope][golden]") {
  const std::string name = GENERATE(as<std::string>{}, "interleaved_full.json", "half_full_causal.json",
                                    "interleaved_partial.json", "half_partial.json", "gqa_positions_offset.json",
                                    "half_gqa_gapped_positions.json", "cross_half_source_positions.json");
  INFO(name);
  const double worst = check_golden(name);
  INFO("max |diff| " << worst);
  CHECK(worst <= kGoldenTolerance);
}

TEST_CASE("rope: stories260K layer 0 (interleaved, theta 1e4, dim 8, GQA, causal) matches the reference",
          "[rope][golden]") {
  const double worst = check_golden("stories260k_layer0.json");
  INFO("max |diff| " << worst);
  CHECK(worst <= kGoldenTolerance);
}

TEST_CASE("rope: apply_rope at position 0 is the identity", "[rope]") {
  const RopeStyle style = GENERATE(RopeStyle::Interleaved, RopeStyle::Half);
  const long rope_dim = GENERATE(0L, 2L, 4L);
  INFO(rope_style_name(style) << ", rope_dim " << rope_dim);
  const Matrix x = Matrix::Random(3, 12);  // 2 heads of d_k 6
  Matrix rotated = x;
  apply_rope(rotated, 6, RopeSettings{style, 10000.0, rope_dim, 1.0, {}}, {0, 0, 0});
  CHECK(max_abs_diff(rotated, x) == 0.0);
}

TEST_CASE("rope: apply_rope turns pair 0 by p radians and leaves dimensions past rope_dim alone", "[rope]") {
  // Pair 0 has frequency theta^0 = 1, so at position p it turns by exactly p radians.
  const auto [style, partner] = GENERATE(std::pair{RopeStyle::Interleaved, 1L}, std::pair{RopeStyle::Half, 2L});
  Matrix x = Matrix::Zero(1, 6);
  x(0, 0) = 1;
  x(0, 5) = 3;
  apply_rope(x, 6, RopeSettings{style, 10000.0, 4, 1.0, {}}, {2});
  CHECK_THAT(x(0, 0), Catch::Matchers::WithinAbs(std::cos(2.0), 1e-6));
  CHECK_THAT(x(0, partner), Catch::Matchers::WithinAbs(std::sin(2.0), 1e-6));
  CHECK(x(0, 4) == 0.0f);
  CHECK(x(0, 5) == 3.0f);
}

TEST_CASE("rope: weights depend only on position differences", "[rope]") {
  // Shifting every query and key position by the same offset leaves q·k, hence the weights.
  const std::string name = GENERATE(as<std::string>{}, "gqa_positions_offset.json", "half_partial.json",
                                    "cross_half_source_positions.json");
  const RopeStyle style = GENERATE(RopeStyle::Interleaved, RopeStyle::Half);
  const long long offset = GENERATE(17LL, -250LL, 4096LL);
  INFO(name << ", " << rope_style_name(style) << ", offset " << offset);
  const json golden_case = read_json(golden(name));
  const InputBundle in = load_inputs({golden(name), "", golden_case.contains("source_file")
                                                            ? golden(golden_case.at("source_file").get<std::string>())
                                                            : ""});
  RopeSettings rope = *in.weights.rope;
  rope.style = style;
  const bool causal = golden_case.value("causal", false);
  const std::vector<long long>& q_pos = in.queries.positions;
  const std::vector<long long>& k_pos = in.keys().positions;
  const std::vector<Matrix> base = rope_weights(in, in.weights.layer, rope, q_pos, k_pos, causal);
  const std::vector<Matrix> moved =
      rope_weights(in, in.weights.layer, rope, shifted(q_pos, offset), shifted(k_pos, offset), causal);
  for (std::size_t h = 0; h < base.size(); ++h) check_matrix_near(moved[h], base[h], kGoldenTolerance);
}

TEST_CASE("rope: interleaved and half agree when W_Q/W_K columns are permuted between the pairings",
          "[rope]") {
  const std::string name =
      GENERATE(as<std::string>{}, "interleaved_full.json", "interleaved_partial.json", "gqa_positions_offset.json");
  INFO(name);
  const InputBundle in = load_inputs({golden(name), "", ""});
  const AttentionLayer& layer = in.weights.layer;
  RopeSettings rope = *in.weights.rope;
  const long d_k = layer.d_k();
  const std::vector<long> q_source = interleaved_to_half(layer.num_heads, d_k, rope.dim);
  const std::vector<long> k_source = interleaved_to_half(layer.num_kv_heads, d_k, rope.dim);
  AttentionLayer permuted = layer;
  permuted.w_q = permute_columns(layer.w_q, q_source);
  permuted.b_q = permute_entries(layer.b_q, q_source);
  permuted.w_k = permute_columns(layer.w_k, k_source);
  permuted.b_k = permute_entries(layer.b_k, k_source);

  rope.style = RopeStyle::Interleaved;
  const std::vector<Matrix> interleaved =
      rope_weights(in, layer, rope, in.queries.positions, in.keys().positions, false);
  rope.style = RopeStyle::Half;
  const std::vector<Matrix> half = rope_weights(in, permuted, rope, in.queries.positions, in.keys().positions, false);
  for (std::size_t h = 0; h < interleaved.size(); ++h) check_matrix_near(half[h], interleaved[h], kGoldenTolerance);
  // Without the permutation the styles differ, so the check above is not vacuous.
  const std::vector<Matrix> unpermuted = rope_weights(in, layer, rope, in.queries.positions, in.keys().positions, false);
  CHECK(max_abs_diff(unpermuted[0], interleaved[0]) > 1e-3);
}

TEST_CASE("rope: settings and positions errors name the file and JSON pointer, or the option",
          "[rope][errors]") {
  const TempDir dir;
  SECTION("unknown style in the file") {
    const std::string path = edited_input(dir, "/rope/style", "neox");
    CHECK_THROWS_AS(load_inputs({path, "", ""}), InputError);
    CHECK_THAT(error_message([&] { load_inputs({path, "", ""}); }),
               Contains(path) && Contains("/rope/style") && Contains("neox"));
  }
  SECTION("odd --rope-dim, or --rope-dim larger than d_k") {
    const long rope_dim = GENERATE(3L, 8L);
    std::vector<std::string> warnings;
    Options options;
    options.sentence = golden("interleaved_full.json");
    options.rope_dim = rope_dim;
    CHECK_THROWS_AS(compute_record(options, warnings), UsageError);
    CHECK_THAT(error_message([&] { compute_record(options, warnings); }),
               Contains("--rope-dim") && Contains(std::to_string(rope_dim)));
  }
  SECTION("positions of the wrong length") {
    const std::string path = edited_input(dir, "/positions", json::array({0, 1, 2}));  // 5 tokens
    CHECK_THROWS_AS(load_inputs({path, "", ""}), InputError);
    CHECK_THAT(error_message([&] { load_inputs({path, "", ""}); }),
               Contains(path) && Contains("/positions") && Contains("5"));
  }
  SECTION("positions that are not integers") {
    const json bad = GENERATE(json(1.5), json("3"), json(nullptr));
    json positions = json::array({0, 1, 2, 3, 4});
    positions[2] = bad;
    const std::string path = edited_input(dir, "/positions", positions);
    CHECK_THROWS_AS(load_inputs({path, "", ""}), InputError);
    CHECK_THAT(error_message([&] { load_inputs({path, "", ""}); }), Contains(path) && Contains("/positions/2"));
  }
}

TEST_CASE("rope: an invalid rope dim in the weights file is an InputError naming the file and /rope/dim",
          "[rope][errors]") {
  // A bad value in an input file is an InputError (STYLE.md 2.4), like a bad /rope/style; the
  // same value given as --rope-dim is a UsageError (above).
  const TempDir dir;
  const auto [rope_dim, detail] = GENERATE(std::pair{5, "5"}, std::pair{8, "d_k = 6"});
  const std::string path = edited_input(dir, "/rope/dim", rope_dim);
  std::vector<std::string> warnings;
  Options options;
  options.sentence = path;
  CHECK_THROWS_AS(compute_record(options, warnings), InputError);
  CHECK_THAT(error_message([&] { compute_record(options, warnings); }),
             Contains(path) && Contains("/rope/dim") && Contains(detail));
}

TEST_CASE("RoPE scaling: linear factor f at position f·p equals no scaling at p", "[rope]") {
  Matrix scaled(1, 8), plain(1, 8);
  scaled << 1, 2, 3, 4, 5, 6, 7, 8;
  plain = scaled;
  RopeSettings settings;
  apply_rope(plain, 8, settings, {3});
  settings.linear_factor = 4.0;
  apply_rope(scaled, 8, settings, {12});
  CHECK(max_abs_diff(scaled, plain) < 1e-6);
}

TEST_CASE("RoPE scaling: frequency factors divide each pair's frequency", "[rope]") {
  Matrix scaled(1, 4), plain(1, 4);
  scaled << 1, 2, 3, 4;
  plain = scaled;
  RopeSettings settings;
  settings.theta = 100.0;
  apply_rope(plain, 4, settings, {5});  // pair 0 turns by 5, pair 1 by 5/10
  settings.frequency_factors = {1.0, 10.0};
  apply_rope(scaled, 4, settings, {5});  // pair 1 now by 5/100
  CHECK(scaled(0, 0) == Approx(plain(0, 0)));
  CHECK(scaled(0, 2) == Approx(3 * std::cos(0.05) - 4 * std::sin(0.05)));
  CHECK(scaled(0, 3) == Approx(3 * std::sin(0.05) + 4 * std::cos(0.05)));
}

TEST_CASE("RoPE scaling: LLaMA 3's frequency factors keep short wavelengths and divide long ones", "[rope]") {
  // Llama 3.1's settings: theta 500000, head dim 128, factor 8, low 1, high 4, context 8192.
  const std::vector<double> f = llama3_frequency_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192.0);
  REQUIRE(f.size() == 64);
  CHECK(f[0] == 1.0);    // wavelength 2π, far below 8192 / 4
  CHECK(f[63] == 8.0);   // wavelength ~2.9e6, beyond 8192 / 1
  // pair 40: wavelength 2π·500000^(80/128) ≈ 23 411 > 8192: divided fully
  CHECK(f[40] == 8.0);
  // pair 30: wavelength 2π·500000^(60/128) ≈ 2923, between 2048 and 8192: blended
  const double wavelength = 2 * 3.14159265358979323846 * std::pow(500000.0, 60.0 / 128.0);
  const double smooth = (8192.0 / wavelength - 1.0) / (4.0 - 1.0);
  CHECK(f[30] == Approx(1.0 / ((1 - smooth) / 8.0 + smooth)));
  CHECK(f[30] > 1.0);
  CHECK(f[30] < 8.0);
}

// Issue 24 §2: a weights file's linear rope scaling ran unscaled without a word. Linear
// interpolation divides positions by f (apply_rope), so factor 2 at positions 2p must give
// exactly the weights of no scaling at p — as the model path applies a config's rope_scaling.
TEST_CASE("RoPE scaling: a weights file's linear factor is applied, recorded, and needs RoPE to scale", "[rope]") {
  const TempDir dir;
  json input = read_json(golden("interleaved_full.json"));  // 5 tokens, positions 0 … 4
  input.erase("expected_weights");
  const std::string plain_path = dir.file("plain.json");
  write_json(plain_path, input);
  input["positions"] = {0, 2, 4, 6, 8};
  input["rope"]["scaling"] = {{"type", "linear"}, {"factor", 2}};
  const std::string scaled_path = dir.file("scaled.json");
  write_json(scaled_path, input);
  std::vector<std::string> warnings;
  Options options;
  options.sentence = plain_path;
  const AttentionRecord plain = compute_record(options, warnings);
  options.sentence = scaled_path;
  const AttentionRecord scaled = compute_record(options, warnings);
  CHECK(warnings.empty());
  REQUIRE(scaled.rope);
  CHECK(scaled.rope->linear_factor == 2.0);
  for (int h = 0; h < plain.num_heads; ++h) test::check_matrix_near(scaled.weights[h], plain.weights[h], 1e-6);
  // The same positions unscaled differ, so the check above is not vacuous.
  input["rope"].erase("scaling");
  write_json(scaled_path, input);
  CHECK(max_abs_diff(compute_record(options, warnings).weights[0], plain.weights[0]) > 1e-3);

  SECTION("a top-level rope_scaling (Hugging Face's spelling) applies to RoPE turned on by --rope") {
    input.erase("rope");
    input["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2}};
    write_json(scaled_path, input);
    CHECK_THAT(error_message([&] { compute_record(options, warnings); }),
               Contains(scaled_path + ": /rope_scaling: scales RoPE, but the file has no rope block and no --rope turns "
                                      "RoPE on"));
    options.rope = "interleaved";
    options.rope_dim = 6;
    const AttentionRecord flagged = compute_record(options, warnings);
    REQUIRE(flagged.rope);
    CHECK(flagged.rope->linear_factor == 2.0);
    test::check_matrix_near(flagged.weights[0], plain.weights[0], 1e-6);
    // Tester's report: --rope none dropped the file's scaling in silence; refused, as
    // --rope none --rope-theta is.
    options.rope = "none";
    options.rope_dim.reset();
    CHECK(error_message([&] { compute_record(options, warnings); }) ==
          "--rope: none turns RoPE off, but " + scaled_path +
              " /rope_scaling scales it (drop the scaling from the file, or leave --rope none out)");
    input["rope_scaling"] = nullptr;  // null scales nothing: --rope none, and no rope at all, are fine
    write_json(scaled_path, input);
    CHECK_FALSE(compute_record(options, warnings).rope);
    options.rope.clear();
    CHECK_FALSE(compute_record(options, warnings).rope);
  }
  SECTION("--rope none with the rope block's scaling is refused") {
    input["rope"]["scaling"] = {{"type", "linear"}, {"factor", 2}};
    write_json(scaled_path, input);
    options.rope = "none";
    CHECK(error_message([&] { compute_record(options, warnings); }) ==
          "--rope: none turns RoPE off, but " + scaled_path +
              " /rope/scaling scales it (drop the scaling from the file, or leave --rope none out)");
  }
}

// apply_rope keeps a table of each position's cos/sin per thread: switching θ, growing the
// positions and positions past the table must all give the angles computed on the spot.
TEST_CASE("rope: the angle table follows θ and positions, and positions past it are computed directly", "[rope]") {
  const auto direct = [](Matrix x, double theta, const std::vector<long long>& positions) {
    // RoPE by its definition (Su et al. 2021, interleaved pairs), angles in double as apply_rope
    // (within 1e-6: the compiler may fuse a·c − b·s differently here).
    for (Eigen::Index r = 0; r < x.rows(); ++r)
      for (long i = 0; i < 3; ++i) {
        const double angle = static_cast<double>(positions[static_cast<std::size_t>(r)]) * std::pow(theta, -2.0 * i / 6.0);
        const Scalar c = static_cast<Scalar>(std::cos(angle)), s = static_cast<Scalar>(std::sin(angle));
        const Scalar a = x(r, 2 * i), b = x(r, 2 * i + 1);
        x(r, 2 * i) = a * c - b * s;
        x(r, 2 * i + 1) = a * s + b * c;
      }
    return x;
  };
  Matrix x(3, 6);
  x << 1, 2, 3, 4, 5, 6, -1, 0.5f, 2, -3, 0.25f, 1, 7, -2, 0, 1, 3, -4;
  const auto rotated = [&](double theta, const std::vector<long long>& positions) {
    Matrix y = x;
    apply_rope(y, 6, RopeSettings{RopeStyle::Interleaved, theta, 6, 1.0, {}}, positions);
    return y;
  };
  attnviz::test::check_matrix_near(rotated(10000.0, {0, 1, 2}), direct(x, 10000.0, {0, 1, 2}), 1e-6);
  attnviz::test::check_matrix_near(rotated(500000.0, {0, 1, 2}), direct(x, 500000.0, {0, 1, 2}), 1e-6);  // another θ: the table is rebuilt
  attnviz::test::check_matrix_near(rotated(10000.0, {7, 300, 2}), direct(x, 10000.0, {7, 300, 2}), 1e-6);  // longer: the table grows
  attnviz::test::check_matrix_near(rotated(10000.0, {70000, 5, 123456}), direct(x, 10000.0, {70000, 5, 123456}), 1e-6);  // past the table
  attnviz::test::check_matrix_near(rotated(10000.0, {1, 0, 2}), direct(x, 10000.0, {1, 0, 2}), 1e-6);
}
