#include "model/formats/quant_matmul.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "model/formats/q8_matmul.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__AVX2__)
#include <immintrin.h>
#define ATTNVIZ_QUANT_SIMD 1
#endif

namespace attnviz {

namespace {

// ggml-common.h's kvalues_iq4nl: the 16 levels of iq4_nl and iq4_xs.
constexpr std::int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

float half_at(const std::uint8_t* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return half_bits_to_float(h);
}

// How a block's integer sums become its float contribution (the header's table).
enum class Combine { Q8_0, Q8_1, K, KMins };

struct TypeSpec {
  long block;        // values per block
  long bytes;        // bytes per block
  ActivationBlocks activations;
  Combine combine;
};

bool spec_of(GgmlType type, TypeSpec& spec) {
  switch (type) {
    case GgmlType::Q4_0: spec = {32, 18, ActivationBlocks::Q8_0, Combine::Q8_0}; return true;
    case GgmlType::Q5_0: spec = {32, 22, ActivationBlocks::Q8_0, Combine::Q8_0}; return true;
    case GgmlType::Q8_0: spec = {32, 34, ActivationBlocks::Q8_0, Combine::Q8_0}; return true;
    case GgmlType::IQ4_NL: spec = {32, 18, ActivationBlocks::Q8_0, Combine::Q8_0}; return true;
    case GgmlType::Q4_1: spec = {32, 20, ActivationBlocks::Q8_1, Combine::Q8_1}; return true;
    case GgmlType::Q5_1: spec = {32, 24, ActivationBlocks::Q8_1, Combine::Q8_1}; return true;
    case GgmlType::Q2_K: spec = {256, 84, ActivationBlocks::Q8_K, Combine::KMins}; return true;
    case GgmlType::Q3_K: spec = {256, 110, ActivationBlocks::Q8_K, Combine::K}; return true;
    case GgmlType::Q4_K: spec = {256, 144, ActivationBlocks::Q8_K, Combine::KMins}; return true;
    case GgmlType::Q5_K: spec = {256, 176, ActivationBlocks::Q8_K, Combine::KMins}; return true;
    case GgmlType::Q6_K: spec = {256, 210, ActivationBlocks::Q8_K, Combine::K}; return true;
    case GgmlType::IQ4_XS: spec = {256, 136, ActivationBlocks::Q8_K, Combine::K}; return true;
    default: return false;
  }
}

TypeSpec spec_or_throw(GgmlType type) {
  TypeSpec spec{};
  if (!spec_of(type, spec))
    throw std::invalid_argument("quant_matmul: no product for weight type " + ggml_type_name(static_cast<std::uint32_t>(type)));
  return spec;
}

// ---- unpacking: one block into values q[block], scales s[block/16], mins mn[block/16] ----------
// Each follows the type's ggml_vec_dot_*_generic (ggml-cpu/quants.c) and dequantize_row_*
// (ggml-quants.c); tests/quant_matmul_test.cpp holds d·scale·q − m·min to ggml's decoded values.

void fill_scales(std::int16_t* s, long groups, std::int16_t value) { std::fill(s, s + groups, value); }

void unpack_q4_0(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float&) {
  d = half_at(b);
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<std::int8_t>((b[2 + j] & 0x0F) - 8);
    q[j + 16] = static_cast<std::int8_t>((b[2 + j] >> 4) - 8);
  }
  fill_scales(s, 2, 1);
}

void unpack_q4_1(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float& m) {
  d = half_at(b);
  m = half_at(b + 2);
  for (int j = 0; j < 16; ++j) {
    q[j] = static_cast<std::int8_t>(b[4 + j] & 0x0F);
    q[j + 16] = static_cast<std::int8_t>(b[4 + j] >> 4);
  }
  fill_scales(s, 2, 1);
}

void unpack_q5_0(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float&) {
  d = half_at(b);
  std::uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  for (int j = 0; j < 16; ++j) {
    const int h0 = static_cast<int>(((qh >> j) & 1u) << 4), h1 = static_cast<int>((qh >> (j + 12)) & 0x10u);
    q[j] = static_cast<std::int8_t>(((b[6 + j] & 0x0F) | h0) - 16);
    q[j + 16] = static_cast<std::int8_t>(((b[6 + j] >> 4) | h1) - 16);
  }
  fill_scales(s, 2, 1);
}

void unpack_q5_1(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float& m) {
  d = half_at(b);
  m = half_at(b + 2);
  std::uint32_t qh;
  std::memcpy(&qh, b + 4, 4);
  for (int j = 0; j < 16; ++j) {
    const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10u), h1 = static_cast<int>((qh >> (j + 12)) & 0x10u);
    q[j] = static_cast<std::int8_t>((b[8 + j] & 0x0F) | h0);
    q[j + 16] = static_cast<std::int8_t>((b[8 + j] >> 4) | h1);
  }
  fill_scales(s, 2, 1);
}

void unpack_q8_0(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float&) {
  d = half_at(b);
  std::memcpy(q, b + 2, 32);
  fill_scales(s, 2, 1);
}

void unpack_iq4_nl(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float&) {
  d = half_at(b);
  for (int j = 0; j < 16; ++j) {
    q[j] = kIq4Levels[b[2 + j] & 0x0F];
    q[j + 16] = kIq4Levels[b[2 + j] >> 4];
  }
  fill_scales(s, 2, 1);
}

void unpack_q2_K(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t* mn, float& d, float& m) {
  const std::uint8_t* sc = b;
  const std::uint8_t* qs = b + 16;
  d = half_at(b + 80);
  m = half_at(b + 82);
  for (int half = 0; half < 2; ++half)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 32; ++l) q[128 * half + 32 * j + l] = static_cast<std::int8_t>((qs[32 * half + l] >> (2 * j)) & 3);
  for (int g = 0; g < 16; ++g) {
    s[g] = static_cast<std::int16_t>(sc[g] & 0x0F);
    mn[g] = static_cast<std::int16_t>(sc[g] >> 4);
  }
}

void unpack_q3_K(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float&) {
  const std::uint8_t* hm = b;
  const std::uint8_t* qs = b + 32;
  d = half_at(b + 108);
  for (int half = 0; half < 2; ++half)
    for (int j = 0; j < 4; ++j) {
      const std::uint8_t bit = static_cast<std::uint8_t>(1u << (4 * half + j));
      for (int l = 0; l < 32; ++l)
        q[128 * half + 32 * j + l] = static_cast<std::int8_t>(((qs[32 * half + l] >> (2 * j)) & 3) - ((hm[l] & bit) ? 0 : 4));
    }
  std::uint32_t aux[4];
  std::memcpy(aux, b + 96, 12);
  const std::uint32_t tmp = aux[2], low4 = 0x0f0f0f0fu, low2 = 0x03030303u;
  aux[2] = ((aux[0] >> 4) & low4) | (((tmp >> 4) & low2) << 4);
  aux[3] = ((aux[1] >> 4) & low4) | (((tmp >> 6) & low2) << 4);
  aux[0] = (aux[0] & low4) | (((tmp >> 0) & low2) << 4);
  aux[1] = (aux[1] & low4) | (((tmp >> 2) & low2) << 4);
  std::int8_t scales[16];
  std::memcpy(scales, aux, 16);
  for (int g = 0; g < 16; ++g) s[g] = static_cast<std::int16_t>(scales[g] - 32);
}

// The 8 six-bit scales and mins of q4_K and q5_K (ggml's get_scale_min_k4).
void k4_scales(const std::uint8_t* packed, std::uint8_t* scale, std::uint8_t* min) {
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      scale[j] = packed[j] & 63;
      min[j] = packed[j + 4] & 63;
    } else {
      scale[j] = static_cast<std::uint8_t>((packed[j + 4] & 0x0F) | ((packed[j - 4] >> 6) << 4));
      min[j] = static_cast<std::uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
    }
  }
}

void unpack_q4_K(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t* mn, float& d, float& m) {
  d = half_at(b);
  m = half_at(b + 2);
  std::uint8_t scale[8], min[8];
  k4_scales(b + 4, scale, min);
  const std::uint8_t* qs = b + 16;
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < 32; ++l) {
      q[64 * j + l] = static_cast<std::int8_t>(qs[32 * j + l] & 0x0F);
      q[64 * j + 32 + l] = static_cast<std::int8_t>(qs[32 * j + l] >> 4);
    }
  for (int g = 0; g < 16; ++g) {
    s[g] = scale[g / 2];
    mn[g] = min[g / 2];
  }
}

void unpack_q5_K(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t* mn, float& d, float& m) {
  d = half_at(b);
  m = half_at(b + 2);
  std::uint8_t scale[8], min[8];
  k4_scales(b + 4, scale, min);
  const std::uint8_t* qh = b + 16;
  const std::uint8_t* qs = b + 48;
  for (int j = 0; j < 4; ++j)
    for (int l = 0; l < 32; ++l) {
      q[64 * j + l] = static_cast<std::int8_t>((qs[32 * j + l] & 0x0F) + ((qh[l] >> (2 * j)) & 1) * 16);
      q[64 * j + 32 + l] = static_cast<std::int8_t>((qs[32 * j + l] >> 4) + ((qh[l] >> (2 * j + 1)) & 1) * 16);
    }
  for (int g = 0; g < 16; ++g) {
    s[g] = scale[g / 2];
    mn[g] = min[g / 2];
  }
}

void unpack_q6_K(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float&) {
  const std::uint8_t* ql = b;
  const std::uint8_t* qh = b + 128;
  d = half_at(b + 208);
  for (int half = 0; half < 2; ++half) {
    const std::uint8_t* l4 = ql + 64 * half;
    const std::uint8_t* h = qh + 32 * half;
    std::int8_t* a = q + 128 * half;
    for (int l = 0; l < 32; ++l) {
      a[l] = static_cast<std::int8_t>(((l4[l] & 0x0F) | (((h[l] >> 0) & 3) << 4)) - 32);
      a[l + 32] = static_cast<std::int8_t>(((l4[l + 32] & 0x0F) | (((h[l] >> 2) & 3) << 4)) - 32);
      a[l + 64] = static_cast<std::int8_t>(((l4[l] >> 4) | (((h[l] >> 4) & 3) << 4)) - 32);
      a[l + 96] = static_cast<std::int8_t>(((l4[l + 32] >> 4) | (((h[l] >> 6) & 3) << 4)) - 32);
    }
  }
  for (int g = 0; g < 16; ++g) s[g] = static_cast<std::int8_t>(b[192 + g]);
}

void unpack_iq4_xs(const std::uint8_t* b, std::int8_t* q, std::int16_t* s, std::int16_t*, float& d, float&) {
  d = half_at(b);
  std::uint16_t high;
  std::memcpy(&high, b + 2, 2);
  const std::uint8_t* low = b + 4;
  const std::uint8_t* qs = b + 8;
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = ((low[ib / 2] >> (4 * (ib % 2))) & 0x0F) | (((high >> (2 * ib)) & 3) << 4);
    s[2 * ib] = s[2 * ib + 1] = static_cast<std::int16_t>(ls - 32);
    for (int j = 0; j < 16; ++j) {
      q[32 * ib + j] = kIq4Levels[qs[16 * ib + j] & 0x0F];
      q[32 * ib + 16 + j] = kIq4Levels[qs[16 * ib + j] >> 4];
    }
  }
}

using Unpack = void (*)(const std::uint8_t*, std::int8_t*, std::int16_t*, std::int16_t*, float&, float&);

Unpack unpacker(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0: return unpack_q4_0;
    case GgmlType::Q4_1: return unpack_q4_1;
    case GgmlType::Q5_0: return unpack_q5_0;
    case GgmlType::Q5_1: return unpack_q5_1;
    case GgmlType::Q8_0: return unpack_q8_0;
    case GgmlType::IQ4_NL: return unpack_iq4_nl;
    case GgmlType::Q2_K: return unpack_q2_K;
    case GgmlType::Q3_K: return unpack_q3_K;
    case GgmlType::Q4_K: return unpack_q4_K;
    case GgmlType::Q5_K: return unpack_q5_K;
    case GgmlType::Q6_K: return unpack_q6_K;
    case GgmlType::IQ4_XS: return unpack_iq4_xs;
    default: return nullptr;
  }
}

// A weight row unpacked, with each 16-value group's scale repeated over the 8 int16 lanes of a
// pairwise product (lanes[t/2] scales values t and t+1): the layout the SIMD sum reads.
struct RowBuffer {
  UnpackedRow row;
  std::vector<std::int16_t> lanes;
};

void unpack_into(const QuantRows& w, const TypeSpec& spec, long r, RowBuffer& out) {
  const long blocks = w.cols / spec.block, groups = w.cols / 16;
  UnpackedRow& u = out.row;
  u.values.resize(static_cast<std::size_t>(w.cols));
  u.scales16.assign(static_cast<std::size_t>(groups), 0);
  u.mins16.assign(static_cast<std::size_t>(groups), 0);
  u.d.assign(static_cast<std::size_t>(blocks), 0.0f);
  u.m.assign(static_cast<std::size_t>(blocks), 0.0f);
  const Unpack unpack = unpacker(w.type);
  const std::uint8_t* row = w.blocks + r * blocks * spec.bytes;
  for (long b = 0; b < blocks; ++b)
    unpack(row + b * spec.bytes, u.values.data() + b * spec.block, u.scales16.data() + b * spec.block / 16,
           u.mins16.data() + b * spec.block / 16, u.d[static_cast<std::size_t>(b)], u.m[static_cast<std::size_t>(b)]);
  out.lanes.resize(static_cast<std::size_t>(w.cols / 2));
  for (long t = 0; t < w.cols / 2; ++t) out.lanes[static_cast<std::size_t>(t)] = u.scales16[static_cast<std::size_t>(t / 8)];
}

// Σ_t lanes[t/2]·w_t·x_t over n values (a multiple of 32): exact in int32.
std::int32_t block_sum_scalar(const std::int8_t* w, const std::int8_t* x, const std::int16_t* lanes, long n) {
  std::int32_t sum = 0;
  for (long t = 0; t < n; t += 2)
    sum += lanes[t / 2] * (static_cast<std::int32_t>(w[t]) * x[t] + static_cast<std::int32_t>(w[t + 1]) * x[t + 1]);
  return sum;
}

#ifdef ATTNVIZ_QUANT_SIMD
std::int32_t block_sum_simd(const std::int8_t* w, const std::int8_t* x, const std::int16_t* lanes, long n) {
  __m256i acc = _mm256_setzero_si256();
  for (long t = 0; t < n; t += 32) {
    const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + t));
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + t));
    // |w|·sign(x, w) in int16 pairs: at most 2·128·127, no saturation; times the lane's scale
    // (|scale| ≤ 128) in int32 pairs.
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes + t / 2))));
  }
  const __m128i half = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  const __m128i quarter = _mm_add_epi32(half, _mm_shuffle_epi32(half, 0x4e));
  return _mm_cvtsi128_si32(_mm_add_epi32(quarter, _mm_shuffle_epi32(quarter, 0xb1)));
}
#endif

using BlockSum = std::int32_t (*)(const std::int8_t*, const std::int8_t*, const std::int16_t*, long);

// One output: activation row i against the unpacked weight row, block after block.
float row_dot(const QuantizedActivations& x, long i, const RowBuffer& w, const TypeSpec& spec, BlockSum block_sum) {
  const long blocks = x.cols / spec.block;
  const std::int8_t* xv = x.values.data() + i * x.cols;
  float acc = 0.0f;
  for (long b = 0; b < blocks; ++b) {
    const long first = b * spec.block;
    const auto at = static_cast<std::size_t>(i * blocks + b), bb = static_cast<std::size_t>(b);
    const std::int32_t sumi = block_sum(w.row.values.data() + first, xv + first, w.lanes.data() + first / 2, spec.block);
    const float scale = w.row.d[bb] * x.scales[at];
    switch (spec.combine) {
      case Combine::Q8_0:
      case Combine::K: acc = std::fma(scale, static_cast<float>(sumi), acc); break;
      case Combine::Q8_1: acc += std::fma(scale, static_cast<float>(sumi), w.row.m[bb] * x.sums[at]); break;
      case Combine::KMins: {
        const std::int32_t* bsums = x.sums16.data() + i * (x.cols / 16) + first / 16;
        const std::int16_t* mins = w.row.mins16.data() + first / 16;
        std::int32_t summ = 0;
        for (long g = 0; g < spec.block / 16; ++g) summ += bsums[g] * mins[g];
        acc = std::fma(scale, static_cast<float>(sumi), acc);
        acc = std::fma(-(w.row.m[bb] * x.scales[at]), static_cast<float>(summ), acc);
        break;
      }
    }
  }
  return acc;
}

Matrix product(const Matrix& x_float, const QuantRows& w, int threads, BlockSum block_sum) {
  const TypeSpec spec = spec_or_throw(w.type);
  if (w.cols % spec.block != 0)
    throw std::invalid_argument("quant_matmul: W has " + std::to_string(w.cols) + " columns, not a multiple of " +
                                std::to_string(spec.block));
  if (x_float.cols() != w.cols)
    throw std::invalid_argument("quant_matmul: X has " + std::to_string(x_float.cols()) + " columns, W " + std::to_string(w.cols));
  const QuantizedActivations x = quantize_activations(x_float, spec.activations);
  Matrix y(x.rows, w.rows);
  threads = static_cast<int>(std::max<long>(1, std::min<long>(threads, w.rows)));
#pragma omp parallel num_threads(threads)
  {
    RowBuffer buffer;
#pragma omp for schedule(static)
    for (long j = 0; j < w.rows; ++j) {
      unpack_into(w, spec, j, buffer);
      for (long i = 0; i < x.rows; ++i) y(i, j) = row_dot(x, i, buffer, spec, block_sum);
    }
  }
  return y;
}

}  // namespace

long quant_row_bytes(const QuantRows& w) {
  const TypeSpec spec = spec_or_throw(w.type);
  return w.cols / spec.block * spec.bytes;
}

QuantRows quant_row_slice(const QuantRows& w, long first, long count) {
  return QuantRows{w.type, w.blocks + first * quant_row_bytes(w), count, w.cols};
}

bool quant_matmul_supports(GgmlType type) {
  TypeSpec spec{};
  return spec_of(type, spec);
}

ActivationBlocks activation_blocks_for(GgmlType type) { return spec_or_throw(type).activations; }

UnpackedRow unpack_quant_row(const QuantRows& w, long row) {
  RowBuffer buffer;
  unpack_into(w, spec_or_throw(w.type), row, buffer);
  return buffer.row;
}

Matrix quant_matmul_scalar(const Matrix& x, const QuantRows& w) { return product(x, w, 1, block_sum_scalar); }

Matrix quant_matmul(const Matrix& x, const QuantRows& w, int threads) {
  if (w.type == GgmlType::Q8_0) {
    const Q8Rows q8{w.blocks, w.rows, w.cols};
    return q8_matmul(x, q8, threads);
  }
#ifdef ATTNVIZ_QUANT_SIMD
  return product(x, w, threads, block_sum_simd);
#else
  return product(x, w, threads, block_sum_scalar);
#endif
}

int quant_matmul_threads(int budget, long n, const QuantRows& w) {
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(w.rows) * static_cast<double>(w.cols);
  return static_cast<int>(std::max(1.0, std::min(static_cast<double>(budget), flops / 200e6)));
}

std::string quant_matmul_path() {
#ifdef ATTNVIZ_QUANT_SIMD
  return "avx2";
#else
  return "scalar";
#endif
}

}  // namespace attnviz
