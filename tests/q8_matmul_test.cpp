// The Q8_0 × Q8_0 product (model/formats/q8_matmul): ggml's activation quantisation, the SIMD path equal
// to the scalar one bit for bit, and both close to the float product they approximate.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "model/formats/q8_matmul.hpp"

#if defined(__F16C__)
#include <immintrin.h>
#endif

using namespace attnviz;

namespace {

// A [rows, cols] Q8_0 matrix with random scales and values (−128 included: a file may hold it).
std::vector<std::uint8_t> random_q8(long rows, long cols, std::mt19937& rng) {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(rows * cols / 32 * 34));
  std::uniform_real_distribution<float> scale(1e-4f, 2e-2f);
  std::uniform_int_distribution<int> value(-128, 127);
  for (std::size_t b = 0; b < bytes.size(); b += 34) {
    const std::uint16_t d = float_to_half_bits(scale(rng));
    std::memcpy(&bytes[b], &d, 2);
    for (int j = 0; j < 32; ++j) bytes[b + 2 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(static_cast<std::int8_t>(value(rng)));
  }
  return bytes;
}

Matrix random_x(long rows, long cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Matrix x(rows, cols);
  for (long i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
  return x;
}

// W decoded to float (q·d): the exact float product the quantised one approximates.
Matrix decode(const std::vector<std::uint8_t>& bytes, long rows, long cols) {
  Matrix w(rows, cols);
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < cols; ++c) {
      const std::uint8_t* block = bytes.data() + (r * cols / 32 + c / 32) * 34;
      std::uint16_t d;
      std::memcpy(&d, block, 2);
      w(r, c) = half_bits_to_float(d) * static_cast<float>(static_cast<std::int8_t>(block[2 + c % 32]));
    }
  return w;
}

}  // namespace

TEST_CASE("float_to_half_bits rounds to nearest even like F16C, normals, subnormals and overflow", "[q8_matmul]") {
  CHECK(float_to_half_bits(1.0f) == 0x3c00);
  CHECK(float_to_half_bits(-2.0f) == 0xc000);
  CHECK(float_to_half_bits(65504.0f) == 0x7bff);
  CHECK(float_to_half_bits(65520.0f) == 0x7c00);  // the tie above the largest half goes to inf
  CHECK(float_to_half_bits(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_half_bits(std::ldexp(1.0f, -25)) == 0x0000);   // a tie to even: 0
  CHECK(float_to_half_bits(std::ldexp(3.0f, -25)) == 0x0002);   // 1.5 ulp: to even, 2
  CHECK(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie below: stays even
  CHECK(float_to_half_bits(1.0f + std::ldexp(3.0f, -11)) == 0x3c02);  // tie above odd: up
  CHECK((float_to_half_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7e00) == 0x7e00);
#if defined(__F16C__)
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    std::uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f)) continue;
    INFO("float bits " << u);
    // The vector forms of F16C's conversions (clang's scalar _cvtss_sh is a C99 compound literal).
    const auto hardware = static_cast<std::uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), 0), 0));
    REQUIRE(float_to_half_bits(f) == hardware);
    const std::uint16_t h = static_cast<std::uint16_t>(u);
    if (((h >> 10) & 0x1f) != 0x1f) REQUIRE(half_bits_to_float(h) == _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))));
  }
#endif
}

TEST_CASE("quantize_q8_0 follows ggml: d = fp16(max|x|/127), q = round-half-even(x·127/max|x|)", "[q8_matmul]") {
  Matrix x = Matrix::Zero(2, 64);
  x(0, 0) = 2.54f;   // max: q = 127
  x(0, 1) = -1.27f;  // q = −63.5 → −64 (half to even)
  x(0, 2) = 0.01f;   // q = 0.5 → 0 (half to even; roundf would give 1)
  x(0, 3) = 0.03f;   // q = 1.5 → 2
  // block 1 of row 0 all zero: d = 0, q = 0
  x(1, 40) = std::numeric_limits<float>::infinity();
  const Q8Activations q = quantize_q8_0(x);
  CHECK(q.scales[0] == half_bits_to_float(float_to_half_bits(2.54f / 127.0f)));
  CHECK(q.values[0] == 127);
  CHECK(q.values[1] == -64);
  CHECK(q.values[2] == 0);
  CHECK(q.values[3] == 2);
  CHECK(q.scales[1] == 0.0f);
  CHECK(q.values[32] == 0);
  CHECK(q.scales[2] == 0.0f);
  CHECK(std::isnan(q.scales[3]));  // a non-finite block poisons its products: the caller sees NaN
  CHECK_THROWS_WITH(quantize_q8_0(Matrix::Zero(1, 33)), "quantize_q8_0: 33 columns are not a multiple of 32");
}

TEST_CASE("q8_matmul's SIMD path equals the scalar path bit for bit, every tile edge and thread count", "[q8_matmul]") {
  std::mt19937 rng(1);
  // Shapes off every tile size (rows of X not a multiple of 4, rows of W not of 4), one row alone.
  for (const auto& [n, out, in] : std::vector<std::array<long, 3>>{{1, 1, 32}, {7, 13, 96}, {9, 21, 256}, {16, 8, 64}, {17, 40, 128}, {3, 33, 4864}}) {
    const std::vector<std::uint8_t> bytes = random_q8(out, in, rng);
    const Q8Rows w{bytes.data(), out, in};
    const Matrix x = random_x(n, in, rng);
    const Matrix reference = q8_matmul_scalar(x, w);
    for (const int threads : {1, 2, 3}) {
      INFO(n << " x " << in << " · " << out << ", " << threads << " threads, path " << q8_matmul_path());
      const Matrix y = q8_matmul(x, w, threads);
      REQUIRE(std::memcmp(y.data(), reference.data(), sizeof(float) * static_cast<std::size_t>(y.size())) == 0);
    }
  }
}

TEST_CASE("q8_matmul is within the 8-bit rounding of X of the float product X·Wᵀ", "[q8_matmul]") {
  std::mt19937 rng(2);
  const long n = 5, out = 12, in = 512;
  const std::vector<std::uint8_t> bytes = random_q8(out, in, rng);
  const Matrix x = random_x(n, in, rng);
  const Matrix exact = (x.cast<double>() * decode(bytes, out, in).cast<double>().transpose()).cast<float>();
  const Matrix y = q8_matmul(x, Q8Rows{bytes.data(), out, in});
  // Each x moves by at most d_x/2 = max|x|/254 per block; the sum of those moves against W's
  // values is a random walk: relative to the scale of the terms, about 1e-2.
  const double scale = (x.cwiseAbs().cast<double>() * decode(bytes, out, in).cwiseAbs().cast<double>().transpose()).maxCoeff();
  const double worst = (y - exact).cwiseAbs().maxCoeff();
  INFO("largest difference " << worst << " against terms up to " << scale);
  CHECK(worst < 1e-2 * scale);
  CHECK(worst > 0);  // the activations really are rounded
}

TEST_CASE("q8_matmul refuses shapes that do not fit", "[q8_matmul]") {
  std::vector<std::uint8_t> bytes(34 * 2, 0);
  CHECK_THROWS_WITH(q8_matmul(Matrix::Zero(1, 32), Q8Rows{bytes.data(), 1, 64}), "q8_matmul: X has 32 columns, W 64");
  CHECK_THROWS_WITH(q8_matmul_scalar(Matrix::Zero(1, 48), Q8Rows{bytes.data(), 1, 48}), "q8_matmul: W has 48 columns, not a multiple of 32");
}
