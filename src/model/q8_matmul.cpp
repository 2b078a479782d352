#include "model/q8_matmul.hpp"

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

// ggml's hsum_float_8 order: lanes k and k+4, then the pairs (0,2), (1,3), then the two.
float lane_sum(const float* a) {
  const float r0 = a[0] + a[4], r1 = a[1] + a[5], r2 = a[2] + a[6], r3 = a[3] + a[7];
  return (r0 + r2) + (r1 + r3);
}

#ifdef ATTNVIZ_Q8_SIMD

// Lane k of |w|·sign(x, w) summed over bytes 4k … 4k+3: the int8·int8 dot of one block in 8
// int32 lanes. |w| as unsigned is right even for w = −128; x never is −128 (|q| ≤ 127), so
// negating it cannot overflow.
inline __m256i block_dot(__m256i abs_w, __m256i signed_x) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), abs_w, signed_x);
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), abs_w, signed_x);
#else
  // Pairs into int16 (at most 2·128·127, no saturation), then pairs of pairs into int32.
  return _mm256_madd_epi16(_mm256_maddubs_epi16(abs_w, signed_x), _mm256_set1_epi16(1));
#endif
}

float lane_sum(__m256 v) {
  alignas(32) float a[8];
  _mm256_store_ps(a, v);
  return lane_sum(a);
}

// Y[i0 … i0+MR, j0 … j0+NR]: MR rows of X against NR rows of W, MR·NR accumulators of 8 lanes
// held in registers across every block of the row.
template <int MR, int NR>
void tile(const Q8Activations& x, const Q8Rows& w, long i0, long j0, Matrix& y) {
  const long blocks = w.cols / kQ8BlockValues;
  __m256 acc[MR][NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i][j] = _mm256_setzero_ps();
  const std::uint8_t* w_row[NR];
  for (int j = 0; j < NR; ++j) w_row[j] = block_of(w, j0 + j, 0);
  const std::int8_t* x_row[MR];
  const float* x_scale[MR];
  for (int i = 0; i < MR; ++i) {
    x_row[i] = x.values.data() + (i0 + i) * x.cols;
    x_scale[i] = x.scales.data() + (i0 + i) * blocks;
  }
  for (long b = 0; b < blocks; ++b) {
    __m256i w_values[NR], w_abs[NR];
    __m256 w_scale[NR];
    for (int j = 0; j < NR; ++j) {
      const std::uint8_t* block = w_row[j] + b * kQ8BlockBytes;
      w_values[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 2));
      w_abs[j] = _mm256_sign_epi8(w_values[j], w_values[j]);
      w_scale[j] = _mm256_set1_ps(block_scale(block));
    }
    for (int i = 0; i < MR; ++i) {
      const __m256i x_values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x_row[i] + b * kQ8BlockValues));
      const __m256 x_scale_b = _mm256_set1_ps(x_scale[i][b]);
      for (int j = 0; j < NR; ++j) {
        const __m256i dot = block_dot(w_abs[j], _mm256_sign_epi8(x_values, w_values[j]));
        acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(w_scale[j], x_scale_b), _mm256_cvtepi32_ps(dot), acc[i][j]);
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) y(i0 + i, j0 + j) = lane_sum(acc[i][j]);
}

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__)
#define ATTNVIZ_Q8_ZMM 1

// The same products with two rows of W per 512-bit register: lanes 0–7 hold pair (i, j), lanes
// 8–15 pair (i, j+1), each lane summing its block after block exactly as the 256-bit tile does
// (AVX-512 has no vpsignb: x is negated under the mask of w's negative bytes instead).
template <int MR, int NP>
void tile_pairs(const Q8Activations& x, const Q8Rows& w, long i0, long j0, Matrix& y) {
  const long blocks = w.cols / kQ8BlockValues;
  __m512 acc[MR][NP];
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) acc[i][p] = _mm512_setzero_ps();
  const __m512i zero = _mm512_setzero_si512();
  for (long b = 0; b < blocks; ++b) {
    __m512i w_abs[NP];
    __mmask64 w_negative[NP];
    __m512 w_scale[NP];
    for (int p = 0; p < NP; ++p) {
      const std::uint8_t* lo = block_of(w, j0 + 2 * p, b);
      const std::uint8_t* hi = block_of(w, j0 + 2 * p + 1, b);
      const __m512i values = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lo + 2))),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hi + 2)), 1);
      w_abs[p] = _mm512_abs_epi8(values);
      w_negative[p] = _mm512_movepi8_mask(values);
      w_scale[p] = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(block_scale(lo)))),
                                                       _mm256_castps_pd(_mm256_set1_ps(block_scale(hi))), 1));
    }
    for (int i = 0; i < MR; ++i) {
      const __m512i x_values = _mm512_broadcast_i64x4(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.values.data() + (i0 + i) * x.cols + b * kQ8BlockValues)));
      const __m512 x_scale = _mm512_set1_ps(x.scales[static_cast<std::size_t>((i0 + i) * blocks + b)]);
      for (int p = 0; p < NP; ++p) {
        const __m512i signed_x = _mm512_mask_sub_epi8(x_values, w_negative[p], zero, x_values);
        const __m512i dot = _mm512_dpbusd_epi32(zero, w_abs[p], signed_x);
        acc[i][p] = _mm512_fmadd_ps(_mm512_mul_ps(w_scale[p], x_scale), _mm512_cvtepi32_ps(dot), acc[i][p]);
      }
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int p = 0; p < NP; ++p) {
      y(i0 + i, j0 + 2 * p) = lane_sum(_mm512_castps512_ps256(acc[i][p]));
      y(i0 + i, j0 + 2 * p + 1) = lane_sum(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[i][p]), 1)));
    }
}
#endif

#if defined(ATTNVIZ_Q8_ZMM)
#ifndef Q8_MR
#define Q8_MR 4
#define Q8_NP 3
#endif
constexpr int kTileRows = Q8_MR, kTilePairs = Q8_NP, kTileCols = 2 * kTilePairs;
#elif defined(__AVX512VL__)
constexpr int kTileRows = 4, kTileCols = 4;  // 16 accumulators of the 32 ymm registers
#else
constexpr int kTileRows = 2, kTileCols = 4;  // 8 accumulators of the 16
#endif

// X rows [i_begin, i_end) against W rows [j_begin, j_end), full tiles then the edges.
void tiles(const Q8Activations& x, const Q8Rows& w, long i_begin, long i_end, long j_begin, long j_end, Matrix& y) {
  long j = j_begin;
  for (; j + kTileCols <= j_end; j += kTileCols) {
    long i = i_begin;
#if defined(ATTNVIZ_Q8_ZMM)
    for (; i + kTileRows <= i_end; i += kTileRows) tile_pairs<kTileRows, kTilePairs>(x, w, i, j, y);
    for (; i < i_end; ++i) tile_pairs<1, kTilePairs>(x, w, i, j, y);
#else
    for (; i + kTileRows <= i_end; i += kTileRows) tile<kTileRows, kTileCols>(x, w, i, j, y);
    for (; i < i_end; ++i) tile<1, kTileCols>(x, w, i, j, y);
#endif
  }
  for (; j < j_end; ++j)
    for (long i = i_begin; i < i_end; ++i) tile<1, 1>(x, w, i, j, y);
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
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (long b = 0; b < blocks; ++b) {
        const std::uint8_t* block = block_of(w, j, b);
        const auto* w_values = reinterpret_cast<const std::int8_t*>(block + 2);
        const std::int8_t* x_values = x.values.data() + i * x.cols + b * kQ8BlockValues;
        const float scale = block_scale(block) * x.scales[static_cast<std::size_t>(i * blocks + b)];
        for (int k = 0; k < 8; ++k) {
          std::int32_t lane = 0;
          for (int t = 4 * k; t < 4 * k + 4; ++t) lane += static_cast<std::int32_t>(w_values[t]) * x_values[t];
          acc[k] = std::fma(scale, static_cast<float>(lane), acc[k]);
        }
      }
      y(i, j) = lane_sum(acc);
    }
  }
  return y;
}

Matrix q8_matmul(const Matrix& x_float, const Q8Rows& w, int threads) {
#ifdef ATTNVIZ_Q8_SIMD
  check_shapes(x_float, w);
  const Q8Activations x = quantize_q8_0(x_float);
  Matrix y(x.rows, w.rows);
  // Rows of X in chunks whose int8 values stay in L2 (256 KB) while every W tile passes them;
  // each W tile (kTileCols rows) stays in L1 across the chunk's rows.
  const long chunk = std::max<long>(kTileRows, (256L * 1024 / std::max<long>(1, x.cols)) / kTileRows * kTileRows);
  const long col_tiles = (w.rows + kTileCols - 1) / kTileCols;
  threads = static_cast<int>(std::max<long>(1, std::min<long>(threads, col_tiles)));
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    const long t = omp_get_thread_num(), team = omp_get_num_threads();
#else
    const long t = 0, team = 1;
#endif
    // Each thread its own contiguous share of W's rows (in whole tiles): no synchronisation.
    const long first = col_tiles * t / team * kTileCols;
    const long last = std::min(w.rows, col_tiles * (t + 1) / team * kTileCols);
    for (long i = 0; i < x.rows; i += chunk) tiles(x, w, i, std::min(x.rows, i + chunk), first, last, y);
  }
  return y;
#else
  (void)threads;
  return q8_matmul_scalar(x_float, w);
#endif
}

std::string q8_matmul_path() {
#if defined(ATTNVIZ_Q8_ZMM)
  return "avx512-vnni";
#elif defined(ATTNVIZ_Q8_SIMD) && defined(__AVXVNNI__)
  return "avx-vnni";
#elif defined(ATTNVIZ_Q8_SIMD)
  return "avx2";
#else
  return "scalar";
#endif
}

}  // namespace attnviz
