// ggml's products per weight type (model/formats/quant_matmul, ggml_activations) against ggml
// itself: tests/data/quant-blocks/ggml-blocks.json holds, for rows of every type made by ggml's
// quantizer, ggml's own quantisation of the activations (bytes) and the floats its SIMD and
// generic kernels give (README there). The activation blocks must be ggml's byte for byte; the
// products within float rounding of the sum; the SIMD path equal to the scalar one bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "model/formats/ggml_activations.hpp"
#include "model/formats/ggml_types.hpp"
#include "model/formats/q8_matmul.hpp"
#include "model/formats/quant_matmul.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

const std::map<std::string, GgmlType> kTypes = {
    {"q4_0", GgmlType::Q4_0}, {"q4_1", GgmlType::Q4_1}, {"q5_0", GgmlType::Q5_0}, {"q5_1", GgmlType::Q5_1},
    {"q8_0", GgmlType::Q8_0}, {"q2_K", GgmlType::Q2_K}, {"q3_K", GgmlType::Q3_K}, {"q4_K", GgmlType::Q4_K},
    {"q5_K", GgmlType::Q5_K}, {"q6_K", GgmlType::Q6_K}, {"iq4_nl", GgmlType::IQ4_NL}, {"iq4_xs", GgmlType::IQ4_XS},
};

const nlohmann::json& golden() {
  static const nlohmann::json data = [] {
    std::ifstream in(test::test_data_file("quant-blocks/ggml-blocks.json"));
    return nlohmann::json::parse(in);
  }();
  return data;
}

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> bytes(hex.size() / 2);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return bytes;
}

Matrix activations(std::size_t c) {
  const nlohmann::json& x = golden()["x"][c];
  Matrix m(1, static_cast<long>(x.size()));
  for (std::size_t j = 0; j < x.size(); ++j) m(0, static_cast<long>(j)) = test::float_from_bits(x[j].get<std::uint32_t>());
  return m;
}

template <typename T>
void put(std::vector<std::uint8_t>& out, T value) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

// Our activation blocks in ggml's byte layout: block_q8_0 {d, qs[32]}, block_q8_1 {d, s, qs[32]},
// block_q8_K {float d, qs[256], int16 bsums[16]}.
std::vector<std::uint8_t> ggml_bytes(const QuantizedActivations& q) {
  std::vector<std::uint8_t> out;
  const long blocks = q.cols / q.block;
  for (long b = 0; b < blocks; ++b) {
    const auto at = static_cast<std::size_t>(b);
    if (q.kind == ActivationBlocks::Q8_K) {
      put(out, q.scales[at]);
    } else {
      put(out, float_to_half_bits(q.scales[at]));
      if (q.kind == ActivationBlocks::Q8_1) put(out, float_to_half_bits(q.sums[at]));
    }
    for (long j = 0; j < q.block; ++j) put(out, q.values[static_cast<std::size_t>(b * q.block + j)]);
    if (q.kind == ActivationBlocks::Q8_K)
      for (long g = 0; g < 16; ++g) put(out, static_cast<std::int16_t>(q.sums16[static_cast<std::size_t>(b * 16 + g)]));
  }
  return out;
}

// Σ|w_t|·|x̂_t| over the row (w decoded by ggml's dequantizer, x̂ = the quantised activations
// read back): the scale of the float rounding any order of the sum makes.
double magnitude(const QuantRows& w, const QuantizedActivations& q) {
  std::vector<float> decoded(static_cast<std::size_t>(w.cols));
  dequantize_row(w.type, w.blocks, decoded.data(), w.cols);
  double sum = 0;
  for (long t = 0; t < w.cols; ++t)
    sum += std::fabs(decoded[static_cast<std::size_t>(t)]) * std::fabs(static_cast<double>(q.values[static_cast<std::size_t>(t)]) *
                                                                        q.scales[static_cast<std::size_t>(t / q.block)]);
  return sum;
}

bool same_bits(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0;
}

}  // namespace

TEST_CASE("activations are quantised to ggml's q8_0, q8_1 and q8_K blocks byte for byte", "[quant_matmul]") {
  for (const nlohmann::json& c : golden()["cases"]) {
    const std::string type = c["type"];
    const std::size_t which = c["case"];
    INFO(type << " case " << which);
    const QuantizedActivations q = quantize_activations(activations(which), activation_blocks_for(kTypes.at(type)));
    CHECK(ggml_bytes(q) == from_hex(c["x_blocks"]));
  }
}

TEST_CASE("each type's product is ggml's within the float rounding of its sum", "[quant_matmul]") {
  // ggml's own SIMD and generic kernels add the same exact block sums in different orders; ours
  // is a third order. All three must agree to a few float32 roundings of Σ|w|·|x|.
  double worst = 0, worst_ggml = 0;
  int bit_equal = 0, cases = 0;
  for (const nlohmann::json& c : golden()["cases"]) {
    const std::string type = c["type"];
    const std::size_t which = c["case"];
    INFO(type << " case " << which);
    const Matrix x = activations(which);
    const std::vector<std::uint8_t> bytes = from_hex(c["weights"]);
    const QuantRows w{kTypes.at(type), bytes.data(), 1, x.cols()};
    const Matrix ours = quant_matmul_scalar(x, w);
    CHECK(same_bits(ours, quant_matmul(x, w)));
    const float simd = test::float_from_bits(c["dot"]), generic = test::float_from_bits(c["dot_generic"]);
    const double scale = magnitude(w, quantize_activations(x, activation_blocks_for(w.type)));
    const double tolerance = 2e-6 * scale + 1e-30;
    CHECK(std::fabs(ours(0, 0) - simd) <= tolerance);
    worst = std::max(worst, std::fabs(ours(0, 0) - simd) / tolerance);
    worst_ggml = std::max(worst_ggml, std::fabs(generic - simd) / tolerance);
    bit_equal += test::bits_of_float(ours(0, 0)) == test::bits_of_float(simd);
    ++cases;
  }
  INFO("largest |ours − ggml| / tolerance " << worst << ", ggml generic vs SIMD " << worst_ggml << "; bit-equal " << bit_equal << " of "
                                             << cases);
  CHECK(worst_ggml <= 1.0);  // the tolerance holds ggml's own two kernels
  CHECK(bit_equal > cases / 3);
}

TEST_CASE("attnviz's decoders give ggml's dequantized values bit for bit, every type (iq4_nl, iq4_xs too)", "[quant_matmul]") {
  int checked = 0;
  for (const nlohmann::json& c : golden()["cases"]) {
    if (!c.contains("decoded")) continue;
    const std::string type = c["type"];
    INFO(type << " case " << c["case"].get<int>());
    const std::vector<std::uint8_t> bytes = from_hex(c["weights"]), theirs = from_hex(c["decoded"]);
    std::vector<float> ours(theirs.size() / 4);
    dequantize_row(kTypes.at(type), bytes.data(), ours.data(), static_cast<std::int64_t>(ours.size()));
    CHECK(std::memcmp(ours.data(), theirs.data(), theirs.size()) == 0);
    ++checked;
  }
  CHECK(checked == 24);
}

TEST_CASE("the unpacked integers and scales give ggml's dequantized values", "[quant_matmul]") {
  // d·scale·q − dmin·min (q4_1, q5_1: d·q + m) in float64 against ggml's float32 decoding: equal
  // up to that rounding, so every quant, scale and min is where ggml's vec_dot reads it.
  for (const nlohmann::json& c : golden()["cases"]) {
    if (!c.contains("decoded")) continue;
    const std::string type = c["type"];
    INFO(type << " case " << c["case"].get<int>());
    const std::vector<std::uint8_t> bytes = from_hex(c["weights"]), theirs = from_hex(c["decoded"]);
    const long n = golden()["n"];
    const QuantRows w{kTypes.at(type), bytes.data(), 1, n};
    std::vector<float> decoded(static_cast<std::size_t>(n));
    std::memcpy(decoded.data(), theirs.data(), theirs.size());
    const UnpackedRow u = unpack_quant_row(w, 0);
    const long block = n / static_cast<long>(u.d.size());
    const bool additive_min = w.type == GgmlType::Q4_1 || w.type == GgmlType::Q5_1;
    int wrong = 0;
    for (long t = 0; t < n; ++t) {
      const auto b = static_cast<std::size_t>(t / block), g = static_cast<std::size_t>(t / 16);
      const double scaled = static_cast<double>(u.d[b]) * u.scales16[g] * u.values[static_cast<std::size_t>(t)];
      const double offset = additive_min ? u.m[b] : -static_cast<double>(u.m[b]) * u.mins16[g];
      const double expected = scaled + offset;
      const double slack = 1e-6 * (std::fabs(scaled) + std::fabs(offset));
      wrong += !(std::fabs(expected - decoded[static_cast<std::size_t>(t)]) <= slack);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("SIMD and scalar products agree bit for bit on random and adversarial blocks", "[quant_matmul]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const long cols = 512, rows = 9;
  for (const auto& [name, type] : kTypes) {
    INFO(name);
    // Random bytes: every quant, scale and min a block can hold (some fp16 scales inf or NaN:
    // both paths must still give the same bits).
    const long row_bytes = quant_row_bytes(QuantRows{type, nullptr, 1, cols});
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(rows * row_bytes));
    for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(byte(rng));
    // Row 0 all zero (zero scales); row 1 all 0xff bytes (largest quants, NaN scales).
    std::fill(bytes.begin(), bytes.begin() + row_bytes, std::uint8_t{0});
    std::fill(bytes.begin() + row_bytes, bytes.begin() + 2 * row_bytes, std::uint8_t{0xff});
    const QuantRows w{type, bytes.data(), rows, cols};
    Matrix x(6, cols);
    for (long j = 0; j < cols; ++j) {
      x(0, j) = normal(rng);
      x(1, j) = 1.5f;                                   // all equal
      x(2, j) = (j % 2 ? -1.0f : 1.0f) * 3.0e38f;       // ±max float
      x(3, j) = 0.0f;                                   // zero scale
      x(4, j) = static_cast<float>(j % 256) - 128.0f;   // halfway cases
      x(5, j) = j == 7 ? 1e6f : normal(rng) * 1e-3f;    // one outlier
    }
    CHECK(same_bits(quant_matmul_scalar(x, w), quant_matmul(x, w, 2)));
  }
}

TEST_CASE("quant_matmul refuses shapes it cannot multiply and types it has no product for", "[quant_matmul]") {
  std::vector<std::uint8_t> bytes(144 * 2, 0);
  CHECK_THROWS_AS(quant_matmul(Matrix::Zero(1, 256), QuantRows{GgmlType::Q4_K, bytes.data(), 1, 128}), std::invalid_argument);
  CHECK_THROWS_AS(quant_matmul(Matrix::Zero(1, 512), QuantRows{GgmlType::Q4_K, bytes.data(), 1, 256}), std::invalid_argument);
  CHECK_THROWS_AS(quant_matmul(Matrix::Zero(1, 256), QuantRows{GgmlType::IQ2_XXS, bytes.data(), 1, 256}), std::invalid_argument);
  CHECK_FALSE(quant_matmul_supports(GgmlType::TQ1_0));
  CHECK(quant_matmul_supports(GgmlType::Q4_K));
}

TEST_CASE("a NaN fp16 scale or a non-finite activation makes the product NaN, never a finite number", "[quant_matmul]") {
  std::vector<std::uint8_t> bytes(144, 0x11);
  const std::uint16_t nan_half = 0x7e00;
  std::memcpy(bytes.data(), &nan_half, 2);  // q4_K's d
  const QuantRows w{GgmlType::Q4_K, bytes.data(), 1, 256};
  CHECK(std::isnan(quant_matmul(Matrix::Ones(1, 256), w)(0, 0)));
  const std::uint16_t one = 0x3c00;
  std::memcpy(bytes.data(), &one, 2);
  Matrix x = Matrix::Ones(1, 256);
  x(0, 3) = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(quant_matmul(x, w)(0, 0)));
  x(0, 3) = std::numeric_limits<float>::infinity();
  CHECK(std::isnan(quant_matmul(x, w)(0, 0)));
}

TEST_CASE("bfloat16 rounding is ggml's: nearest even, NaN kept quiet", "[quant_matmul]") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(float_to_bf16_bits(test::float_from_bits(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(float_to_bf16_bits(test::float_from_bits(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(float_to_bf16_bits(test::float_from_bits(0x3f808001u)) == 0x3f81);
  CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(round_to_half(Matrix::Constant(1, 1, 1.0f + 1.0f / 4096.0f))(0, 0) == 1.0f);
}
