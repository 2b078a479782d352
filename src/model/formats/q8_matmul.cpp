#include "model/formats/q8_matmul.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define ATTNVIZ_Q8_SIMD 1
#endif

namespace attnviz {

std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // ≥ 65520 rounds to inf
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half, m·2^-24 (m = 1024 is the smallest normal)
    float a;
    std::memcpy(&a, &magnitude, 4);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  std::uint32_t h = (((magnitude >> 23) - 112u) << 10) | ((magnitude & 0x7fffffu) >> 13);
  const std::uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is right
  return static_cast<std::uint16_t>(sign | h);
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: m·2^-24, exact in float
    const float v = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  const std::uint32_t bits = sign | (exponent == 0x1f ? 0x7f800000u | (mantissa << 13) : ((exponent + 112) << 23) | (mantissa << 13));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Q8Activations quantize_q8_0(const Matrix& x) {
  if (x.cols() % kQ8BlockValues != 0)
    throw std::invalid_argument("quantize_q8_0: " + std::to_string(x.cols()) + " columns are not a multiple of 32");
  Q8Activations q;
  q.rows = x.rows();
  q.cols = x.cols();
  const long blocks = q.cols / kQ8BlockValues;
  q.scales.resize(static_cast<std::size_t>(q.rows * blocks));
  q.values.resize(static_cast<std::size_t>(q.rows * q.cols));
  for (long r = 0; r < q.rows; ++r) {
    const float* row = x.data() + r * q.cols;
    for (long b = 0; b < blocks; ++b) {
      const float* v = row + b * kQ8BlockValues;
      std::int8_t* out = q.values.data() + r * q.cols + b * kQ8BlockValues;
      float amax = 0.0f;
      bool finite = true;
      for (long j = 0; j < kQ8BlockValues; ++j) {
        finite = finite && std::isfinite(v[j]);
        amax = std::max(amax, std::fabs(v[j]));
      }
      float& scale = q.scales[static_cast<std::size_t>(r * blocks + b)];
      if (!finite) {
        scale = std::numeric_limits<float>::quiet_NaN();
        std::fill(out, out + kQ8BlockValues, std::int8_t{0});
        continue;
      }
      scale = half_bits_to_float(float_to_half_bits(amax / 127.0f));
      const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
      // x·(127/a) is at most 127 in magnitude; nearbyint rounds half to even (the default mode),
      // as _mm256_round_ps(_MM_ROUND_NEAREST) does.
      for (long j = 0; j < kQ8BlockValues; ++j) out[j] = static_cast<std::int8_t>(std::nearbyint(v[j] * inverse));
    }
  }
  return q;
}

namespace {

void check_shapes(const Matrix& x, const Q8Rows& w) {
  if (w.cols % kQ8BlockValues != 0)
    throw std::invalid_argument("q8_matmul: W has " + std::to_string(w.cols) + " columns, not a multiple of 32");
  if (x.cols() != w.cols)
    throw std::invalid_argument("q8_matmul: X has " + std::to_string(x.cols()) + " columns, W " + std::to_string(w.cols));
}

const std::uint8_t* block_of(const Q8Rows& w, long row, long block) {
  return w.blocks + (row * (w.cols / kQ8BlockValues) + block) * kQ8BlockBytes;
}

float block_scale(const std::uint8_t* block) {
  std::uint16_t h;
  std::memcpy(&h, block, 2);
  return half_bits_to_float(h);
}

#ifdef ATTNVIZ_Q8_SIMD

// W is multiplied a panel of kPanel rows at a time, its blocks re-laid so that one register
// holds the same 4 bytes of every row of the panel: chunk k of block b is, for row r, bytes
// 4k … 4k+3 of w_r's block b. Against X's 4 bytes broadcast, one multiply-add of bytes into
// int32 lanes advances the block's dot product of every row at once, and after the 8 chunks
// lane r holds the whole block's integer dot, exactly; then one fma per block and row.
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define ATTNVIZ_Q8_ZMM 1
constexpr long kPanel = 16;
constexpr int kTileRows = 8;  // 8 integer and 8 float accumulators of the 32 registers
#else
constexpr long kPanel = 8;
constexpr int kTileRows = 4;
#endif
// Per block of a panel: 8 chunks of kPanel·4 bytes, then kPanel float scales.
constexpr long kPanelBlockBytes = 8 * kPanel * 4 + kPanel * 4;

// Re-lays W rows [j0, j0 + kPanel) (rows past the end repeat the last; their results are not
// stored) into `panel`. The AVX-512 path stores w + 128 (w XOR 0x80: unsigned, for vpdpbusd's
// unsigned operand; X's sum corrects it), the AVX2 path w itself.
void pack_panel(const Q8Rows& w, long j0, std::uint8_t* panel) {
  const long blocks = w.cols / kQ8BlockValues;
  for (long r = 0; r < kPanel; ++r) {
    const long row = std::min(j0 + r, w.rows - 1);
    for (long b = 0; b < blocks; ++b) {
      const std::uint8_t* block = block_of(w, row, b);
      std::uint8_t* out = panel + b * kPanelBlockBytes;
      for (long k = 0; k < 8; ++k) {
        std::uint32_t word;
        std::memcpy(&word, block + 2 + 4 * k, 4);
#if defined(ATTNVIZ_Q8_ZMM)
        word ^= 0x80808080u;
#endif
        std::memcpy(out + (k * kPanel + r) * 4, &word, 4);
      }
      const float scale = block_scale(block);
      std::memcpy(out + 8 * kPanel * 4 + r * 4, &scale, 4);
    }
  }
}

// X with what the kernels need beside q: per row and block, −128·Σq (the AVX-512 path's
// correction for w + 128).
std::vector<std::int32_t> offset_sums(const Q8Activations& x) {
  const long blocks = x.cols / kQ8BlockValues;
  std::vector<std::int32_t> sums(static_cast<std::size_t>(x.rows * blocks));
  for (long i = 0; i < x.rows * blocks; ++i) {
    std::int32_t sum = 0;
    for (long t = 0; t < kQ8BlockValues; ++t) sum += x.values[static_cast<std::size_t>(i * kQ8BlockValues + t)];
    sums[static_cast<std::size_t>(i)] = -128 * sum;
  }
  return sums;
}

inline std::int32_t word_at(const std::int8_t* p) {
  std::int32_t word;
  std::memcpy(&word, p, 4);
  return word;
}

// Y[i0 … i0+MR, j0 … j0+kPanel) (only the first `valid` columns stored) from a packed panel.
template <int MR>
void panel_tile(const Q8Activations& x, const std::vector<std::int32_t>& x_offsets, const std::uint8_t* panel, long i0,
                long j0, long valid, Matrix& y) {
  const long blocks = x.cols / kQ8BlockValues;
#if defined(ATTNVIZ_Q8_ZMM)
  (void)x_offsets;
  __m512 acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm512_setzero_ps();
  for (long b = 0; b < blocks; ++b) {
    const std::uint8_t* chunks = panel + b * kPanelBlockBytes;
    __m512i dot[MR];
    for (int i = 0; i < MR; ++i) dot[i] = _mm512_set1_epi32(x_offsets[static_cast<std::size_t>((i0 + i) * blocks + b)]);
    for (long k = 0; k < 8; ++k) {
      const __m512i w_chunk = _mm512_loadu_si512(chunks + k * kPanel * 4);
      for (int i = 0; i < MR; ++i)
        dot[i] = _mm512_dpbusd_epi32(dot[i], w_chunk, _mm512_set1_epi32(word_at(x.values.data() + (i0 + i) * x.cols + b * kQ8BlockValues + 4 * k)));
    }
    const __m512 w_scale = _mm512_loadu_ps(reinterpret_cast<const float*>(chunks + 8 * kPanel * 4));
    for (int i = 0; i < MR; ++i) {
      const __m512 scale = _mm512_mul_ps(w_scale, _mm512_set1_ps(x.scales[static_cast<std::size_t>((i0 + i) * blocks + b)]));
      acc[i] = _mm512_fmadd_ps(scale, _mm512_maskz_cvtepi32_ps(__mmask16(0xffff), dot[i]), acc[i]);
    }
  }
  const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1u);
  for (int i = 0; i < MR; ++i) _mm512_mask_storeu_ps(&y(i0 + i, j0), mask, acc[i]);
#else
  (void)x_offsets;
  __m256 acc[MR];
  for (int i = 0; i < MR; ++i) acc[i] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (long b = 0; b < blocks; ++b) {
    const std::uint8_t* chunks = panel + b * kPanelBlockBytes;
    __m256i dot[MR];
    for (int i = 0; i < MR; ++i) dot[i] = _mm256_setzero_si256();
    for (long k = 0; k < 8; ++k) {
      const __m256i w_chunk = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunks + k * kPanel * 4));
      const __m256i w_abs = _mm256_sign_epi8(w_chunk, w_chunk);  // |w| as unsigned: right for −128 too
      for (int i = 0; i < MR; ++i) {
        const __m256i x_word = _mm256_set1_epi32(word_at(x.values.data() + (i0 + i) * x.cols + b * kQ8BlockValues + 4 * k));
        // |w|·sign(x, w) in int16 pairs (at most 2·128·127: no saturation), then int32.
        dot[i] = _mm256_add_epi32(dot[i], _mm256_madd_epi16(_mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(x_word, w_chunk)), ones));
      }
    }
    const __m256 w_scale = _mm256_loadu_ps(reinterpret_cast<const float*>(chunks + 8 * kPanel * 4));
    for (int i = 0; i < MR; ++i) {
      const __m256 scale = _mm256_mul_ps(w_scale, _mm256_set1_ps(x.scales[static_cast<std::size_t>((i0 + i) * blocks + b)]));
      acc[i] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(dot[i]), acc[i]);
    }
  }
  for (int i = 0; i < MR; ++i) {
    alignas(32) float out[8];
    _mm256_store_ps(out, acc[i]);
    for (long j = 0; j < valid; ++j) y(i0 + i, j0 + j) = out[j];
  }
#endif
}

#endif  // ATTNVIZ_Q8_SIMD

}  // namespace

Matrix q8_matmul_scalar(const Matrix& x_float, const Q8Rows& w) {
  check_shapes(x_float, w);
  const Q8Activations x = quantize_q8_0(x_float);
  const long blocks = w.cols / kQ8BlockValues;
  Matrix y(x.rows, w.rows);
  for (long i = 0; i < x.rows; ++i) {
    for (long j = 0; j < w.rows; ++j) {
      float acc = 0.0f;
      for (long b = 0; b < blocks; ++b) {
        const std::uint8_t* block = block_of(w, j, b);
        const auto* w_values = reinterpret_cast<const std::int8_t*>(block + 2);
        const std::int8_t* x_values = x.values.data() + i * x.cols + b * kQ8BlockValues;
        std::int32_t dot = 0;  // at most 32·128·127 in magnitude: exact as a float too
        for (long t = 0; t < kQ8BlockValues; ++t) dot += static_cast<std::int32_t>(w_values[t]) * x_values[t];
        const float scale = block_scale(block) * x.scales[static_cast<std::size_t>(i * blocks + b)];
        acc = std::fma(scale, static_cast<float>(dot), acc);
      }
      y(i, j) = acc;
    }
  }
  return y;
}

Matrix q8_matmul(const Matrix& x_float, const Q8Rows& w, int threads) {
#ifdef ATTNVIZ_Q8_SIMD
  check_shapes(x_float, w);
  const Q8Activations x = quantize_q8_0(x_float);
  const std::vector<std::int32_t> x_offsets = offset_sums(x);
  Matrix y(x.rows, w.rows);
  const long blocks = w.cols / kQ8BlockValues;
  // Rows of X in chunks whose int8 values stay in L2 (512 KB) while every panel passes them;
  // a panel (kPanel rows of W, re-laid once per chunk) stays in L1 or L2 across the chunk.
  const long chunk = std::max<long>(kTileRows, (512L * 1024 / x.cols) / kTileRows * kTileRows);
  const long panels = (w.rows + kPanel - 1) / kPanel;
  threads = static_cast<int>(std::max<long>(1, std::min<long>(threads, panels)));
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    const long t = omp_get_thread_num(), team = omp_get_num_threads();
#else
    const long t = 0, team = 1;
#endif
    // Each thread its own contiguous share of the panels: no synchronisation.
    const long first = panels * t / team, last = panels * (t + 1) / team;
    std::vector<std::uint8_t> panel(static_cast<std::size_t>(blocks * kPanelBlockBytes));
    for (long i_begin = 0; i_begin < x.rows; i_begin += chunk) {
      const long i_end = std::min(x.rows, i_begin + chunk);
      for (long p = first; p < last; ++p) {
        const long j0 = p * kPanel, valid = std::min(kPanel, w.rows - j0);
        pack_panel(w, j0, panel.data());
        long i = i_begin;
        for (; i + kTileRows <= i_end; i += kTileRows) panel_tile<kTileRows>(x, x_offsets, panel.data(), i, j0, valid, y);
        for (; i < i_end; ++i) panel_tile<1>(x, x_offsets, panel.data(), i, j0, valid, y);
      }
    }
  }
  return y;
#else
  (void)threads;
  return q8_matmul_scalar(x_float, w);
#endif
}

int q8_matmul_threads(int budget, long n, const Q8Rows& w) {
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(w.rows) * static_cast<double>(w.cols);
  return static_cast<int>(std::max(1.0, std::min(static_cast<double>(budget), flops / 400e6)));
}

std::string q8_matmul_path() {
#if defined(ATTNVIZ_Q8_ZMM)
  return "avx512-vnni";
#elif defined(ATTNVIZ_Q8_SIMD)
  return "avx2";
#else
  return "scalar";
#endif
}

}  // namespace attnviz
