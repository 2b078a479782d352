#include "model/formats/ggml_types.hpp"

#include <cassert>
#include <cstring>

namespace attnviz {

namespace {

// IEEE half to float, exactly (ggml_compute_fp16_to_fp32 on hardware with F16C gives the same).
float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  std::uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Block layouts, byte for byte as ggml-common.h declares them (little-endian; fp16 fields are
// IEEE halves kept as raw bits). Every field has 1- or 2-byte alignment and the sizes are even,
// so the structs have no padding; the static_asserts pin each size to ggml's. A decoder copies
// one block into its struct (no aliasing or alignment assumptions about the mapped bytes) and
// writes block_elements floats, with ggml's float operations in ggml's order (the results are
// compared bit for bit with ggml's dequantize_row_*). Where a decoder adds (q·d + m, dl·q - ml),
// the product of an fp16 scale (11 significant bits) and integers of at most 11 bits is exact in
// float, so a fused multiply-add (GCC contracts under -march=native) gives the same bits.

constexpr int kQk = 32;    // QK4_0 = QK4_1 = QK5_0 = QK5_1 = QK8_0: elements per block
constexpr int kQkK = 256;  // QK_K: elements per K-quant super-block

// block_q4_0, 18 bytes: d (fp16) @0 | qs[16] @2. Element j is qs[j] & 0xF, element j + 16 is
// qs[j] >> 4; value (q - 8)·d.
struct BlockQ4_0 {
  static constexpr int kElements = kQk;
  std::uint16_t d;
  std::uint8_t qs[kQk / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// block_q4_1, 20 bytes: d (fp16) @0 | m (fp16) @2 | qs[16] @4. Nibbles as q4_0; value q·d + m.
struct BlockQ4_1 {
  static constexpr int kElements = kQk;
  std::uint16_t d;
  std::uint16_t m;
  std::uint8_t qs[kQk / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

// block_q5_0, 22 bytes: d (fp16) @0 | qh[4] @2 | qs[16] @6. qh, read as a little-endian u32,
// holds bit 4 of element j in its bit j; value (q - 16)·d.
struct BlockQ5_0 {
  static constexpr int kElements = kQk;
  std::uint16_t d;
  std::uint8_t qh[4];
  std::uint8_t qs[kQk / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

// block_q5_1, 24 bytes: d (fp16) @0 | m (fp16) @2 | qh[4] @4 | qs[16] @8. Bits as q5_0;
// value q·d + m.
struct BlockQ5_1 {
  static constexpr int kElements = kQk;
  std::uint16_t d;
  std::uint16_t m;
  std::uint8_t qh[4];
  std::uint8_t qs[kQk / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

// block_q8_0, 34 bytes: d (fp16) @0 | qs[32] (int8) @2; value q·d.
struct BlockQ8_0 {
  static constexpr int kElements = kQk;
  std::uint16_t d;
  std::int8_t qs[kQk];
};
static_assert(sizeof(BlockQ8_0) == 34);

// block_q2_K, 84 bytes: scales[16] @0 | qs[64] @16 | d (fp16) @80 | dmin (fp16) @82.
// 16 sub-blocks of 16; scales[s] holds the sub-block's scale (low nibble) and min (high nibble).
// Each 128-element half reads 32 bytes of qs, 2-bit plane j (bits 2j, 2j+1) giving elements
// [32j, 32j + 32) of that half. Value (d·scale)·q - dmin·min.
struct BlockQ2_K {
  static constexpr int kElements = kQkK;
  std::uint8_t scales[kQkK / 16];
  std::uint8_t qs[kQkK / 4];
  std::uint16_t d;
  std::uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// block_q3_K, 110 bytes: hmask[32] @0 | qs[64] @32 | scales[12] @96 | d (fp16) @108.
// Low 2 bits as q2_K; hmask bit b of byte l is the high bit of element 32b + l (clear means
// subtract 4). 16 six-bit scales packed in 12 bytes (q3_k_scale), stored offset by 32.
// Value (d·(scale - 32))·q with q in [-4, 3].
struct BlockQ3_K {
  static constexpr int kElements = kQkK;
  std::uint8_t hmask[kQkK / 8];
  std::uint8_t qs[kQkK / 4];
  std::uint8_t scales[12];
  std::uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// block_q4_K, 144 bytes: d (fp16) @0 | dmin (fp16) @2 | scales[12] @4 | qs[128] @16.
// 8 sub-blocks of 32, each with a 6-bit scale and min (k4_scale_min). Each 64-element chunk
// reads 32 bytes of qs: low nibbles are its first 32 elements, high nibbles the next 32.
// Value (d·scale)·q - dmin·min.
struct BlockQ4_K {
  static constexpr int kElements = kQkK;
  std::uint16_t d;
  std::uint16_t dmin;
  std::uint8_t scales[12];
  std::uint8_t qs[kQkK / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

// block_q5_K, 176 bytes: d (fp16) @0 | dmin (fp16) @2 | scales[12] @4 | qh[32] @16 |
// qs[128] @48. As q4_K, plus bit 4 of element 64c + 32h + l in bit 2c + h of qh[l].
struct BlockQ5_K {
  static constexpr int kElements = kQkK;
  std::uint16_t d;
  std::uint16_t dmin;
  std::uint8_t scales[12];
  std::uint8_t qh[kQkK / 8];
  std::uint8_t qs[kQkK / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

// block_q6_K, 210 bytes: ql[128] @0 | qh[64] @128 | scales[16] (int8) @192 | d (fp16) @208.
// Per 128-element half (64 bytes of ql, 32 of qh): element 32k + l takes the low (k = 0, 1) or
// high (k = 2, 3) nibble of ql[l + 32·(k % 2)] and bits 2k, 2k+1 of qh[l] as its top 2 bits.
// 16 sub-blocks of 16 with signed 8-bit scales. Value (d·scale)·(q - 32).
struct BlockQ6_K {
  static constexpr int kElements = kQkK;
  std::uint8_t ql[kQkK / 2];
  std::uint8_t qh[kQkK / 4];
  std::int8_t scales[kQkK / 16];
  std::uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// block_iq4_nl, 18 bytes: d (fp16) @0 | qs[16] @2. Each nibble indexes kvalues_iq4nl; element j
// is the low nibble of qs[j], element j+16 the high one; value d·kvalues[nibble].
struct BlockIq4Nl {
  static constexpr int kElements = kQk;
  std::uint16_t d;
  std::uint8_t qs[kQk / 2];
};
static_assert(sizeof(BlockIq4Nl) == 18);

// block_iq4_xs, 136 bytes: d (fp16) @0 | scales_h (u16) @2 | scales_l[4] @4 | qs[128] @8. Sub-block
// ib of 32 has the 6-bit scale ls = low nibble ib of scales_l | 2 bits ib of scales_h << 4; its
// values d·(ls − 32)·kvalues[nibble], nibbles laid out as iq4_nl's per 16 bytes.
struct BlockIq4Xs {
  static constexpr int kElements = kQkK;
  std::uint16_t d;
  std::uint16_t scales_h;
  std::uint8_t scales_l[kQkK / 64];
  std::uint8_t qs[kQkK / 2];
};
static_assert(sizeof(BlockIq4Xs) == 136);

// ggml-common.h's kvalues_iq4nl.
constexpr std::int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// ---------------------------------------------------------------------------------------------
// One decoder per block type (ggml-quants.c, dequantize_row_<type>).

void decode_q4_0(const BlockQ4_0& x, float* y) {
  const float d = half_to_float(x.d);
  for (int j = 0; j < kQk / 2; ++j) {
    const int x0 = (x.qs[j] & 0x0F) - 8;
    const int x1 = (x.qs[j] >> 4) - 8;
    y[j] = x0 * d;
    y[j + kQk / 2] = x1 * d;
  }
}

void decode_q4_1(const BlockQ4_1& x, float* y) {
  const float d = half_to_float(x.d);
  const float m = half_to_float(x.m);
  for (int j = 0; j < kQk / 2; ++j) {
    const int x0 = x.qs[j] & 0x0F;
    const int x1 = x.qs[j] >> 4;
    y[j] = x0 * d + m;
    y[j + kQk / 2] = x1 * d + m;
  }
}

// Bit 4 of element j of a q5_0/q5_1 block, in place (0 or 0x10).
int q5_high_bit(std::uint32_t qh, int j) { return static_cast<int>((qh >> j) & 1u) << 4; }

std::uint32_t load_u32(const std::uint8_t bytes[4]) {
  return static_cast<std::uint32_t>(bytes[0]) | static_cast<std::uint32_t>(bytes[1]) << 8 |
         static_cast<std::uint32_t>(bytes[2]) << 16 | static_cast<std::uint32_t>(bytes[3]) << 24;
}

void decode_q5_0(const BlockQ5_0& x, float* y) {
  const float d = half_to_float(x.d);
  const std::uint32_t qh = load_u32(x.qh);
  for (int j = 0; j < kQk / 2; ++j) {
    const int x0 = ((x.qs[j] & 0x0F) | q5_high_bit(qh, j)) - 16;
    const int x1 = ((x.qs[j] >> 4) | q5_high_bit(qh, j + kQk / 2)) - 16;
    y[j] = x0 * d;
    y[j + kQk / 2] = x1 * d;
  }
}

void decode_q5_1(const BlockQ5_1& x, float* y) {
  const float d = half_to_float(x.d);
  const float m = half_to_float(x.m);
  const std::uint32_t qh = load_u32(x.qh);
  for (int j = 0; j < kQk / 2; ++j) {
    const int x0 = (x.qs[j] & 0x0F) | q5_high_bit(qh, j);
    const int x1 = (x.qs[j] >> 4) | q5_high_bit(qh, j + kQk / 2);
    y[j] = x0 * d + m;
    y[j + kQk / 2] = x1 * d + m;
  }
}

void decode_q8_0(const BlockQ8_0& x, float* y) {
  const float d = half_to_float(x.d);
  for (int j = 0; j < kQk; ++j) y[j] = x.qs[j] * d;
}

void decode_q2_K(const BlockQ2_K& x, float* y) {
  const float d = half_to_float(x.d);
  const float dmin = half_to_float(x.dmin);
  int sub = 0;  // sub-block of 16, 0…15
  for (int half = 0; half < 2; ++half) {
    const std::uint8_t* q = x.qs + 32 * half;
    for (int plane = 0; plane < 4; ++plane) {
      const int shift = 2 * plane;
      for (int l0 = 0; l0 < 32; l0 += 16, ++sub) {
        const float dl = d * (x.scales[sub] & 0xF);
        const float ml = dmin * (x.scales[sub] >> 4);
        for (int l = l0; l < l0 + 16; ++l) *y++ = dl * ((q[l] >> shift) & 3) - ml;
      }
    }
  }
}

// Sub-block s's 6-bit scale of a q3_K block: low 4 bits from the nibbles of scales[0…7] (low
// nibbles for s < 8, high for s ≥ 8), high 2 bits from scales[8 + s % 4], bits 2·(s / 4).
// Returned minus its offset 32. (ggml unpacks the same bits four at a time with kmask1/kmask2.)
int q3_k_scale(const std::uint8_t scales[12], int s) {
  const int low = s < 8 ? scales[s] & 0xF : scales[s - 8] >> 4;
  const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
  return (low | high << 4) - 32;
}

void decode_q3_K(const BlockQ3_K& x, float* y) {
  const float d_all = half_to_float(x.d);
  int sub = 0;  // sub-block of 16, 0…15
  for (int half = 0; half < 2; ++half) {
    const std::uint8_t* q = x.qs + 32 * half;
    for (int plane = 0; plane < 4; ++plane) {
      const int shift = 2 * plane;
      const int high_mask = 1 << (4 * half + plane);
      for (int l0 = 0; l0 < 32; l0 += 16, ++sub) {
        const float dl = d_all * q3_k_scale(x.scales, sub);
        for (int l = l0; l < l0 + 16; ++l) {
          const int value = ((q[l] >> shift) & 3) - ((x.hmask[l] & high_mask) ? 0 : 4);
          *y++ = dl * value;
        }
      }
    }
  }
}

// Sub-block j's 6-bit scale and min of a q4_K/q5_K block (ggml's get_scale_min_k4): for j < 4
// the low 6 bits of scales[j] and scales[j + 4]; for j ≥ 4 the nibbles of scales[j + 4] with
// the top 2 bits of scales[j - 4] (scale) and scales[j] (min) as bits 4–5.
struct ScaleMin {
  int scale;
  int min;
};

ScaleMin k4_scale_min(const std::uint8_t scales[12], int j) {
  if (j < 4) return {scales[j] & 63, scales[j + 4] & 63};
  return {(scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4),
          (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4)};
}

void decode_q4_K(const BlockQ4_K& x, float* y) {
  const float d = half_to_float(x.d);
  const float dmin = half_to_float(x.dmin);
  const std::uint8_t* q = x.qs;
  for (int sub = 0; sub < 8; sub += 2, q += 32) {  // 64 elements: two sub-blocks of 32
    const ScaleMin lo = k4_scale_min(x.scales, sub);
    const ScaleMin hi = k4_scale_min(x.scales, sub + 1);
    const float d1 = d * lo.scale, m1 = dmin * lo.min;
    const float d2 = d * hi.scale, m2 = dmin * hi.min;
    for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
  }
}

void decode_q5_K(const BlockQ5_K& x, float* y) {
  const float d = half_to_float(x.d);
  const float dmin = half_to_float(x.dmin);
  const std::uint8_t* ql = x.qs;
  int u1 = 1, u2 = 2;  // the qh bits of this chunk's two sub-blocks
  for (int sub = 0; sub < 8; sub += 2, ql += 32, u1 <<= 2, u2 <<= 2) {
    const ScaleMin lo = k4_scale_min(x.scales, sub);
    const ScaleMin hi = k4_scale_min(x.scales, sub + 1);
    const float d1 = d * lo.scale, m1 = dmin * lo.min;
    const float d2 = d * hi.scale, m2 = dmin * hi.min;
    for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + ((x.qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + ((x.qh[l] & u2) ? 16 : 0)) - m2;
  }
}

void decode_q6_K(const BlockQ6_K& x, float* y) {
  const float d = half_to_float(x.d);
  const std::uint8_t* ql = x.ql;
  const std::uint8_t* qh = x.qh;
  const std::int8_t* sc = x.scales;
  for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * sc[is] * q1;
      y[l + 32] = d * sc[is + 2] * q2;
      y[l + 64] = d * sc[is + 4] * q3;
      y[l + 96] = d * sc[is + 6] * q4;
    }
  }
}

void decode_iq4_nl(const BlockIq4Nl& x, float* y) {
  const float d = half_to_float(x.d);
  for (int j = 0; j < kQk / 2; ++j) {
    y[j] = d * kIq4nlValues[x.qs[j] & 0xF];
    y[j + kQk / 2] = d * kIq4nlValues[x.qs[j] >> 4];
  }
}

void decode_iq4_xs(const BlockIq4Xs& x, float* y) {
  const float d = half_to_float(x.d);
  const std::uint8_t* qs = x.qs;
  for (int ib = 0; ib < kQkK / 32; ++ib, y += 32, qs += 16) {
    const int ls = ((x.scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((x.scales_h >> 2 * ib) & 3) << 4);
    const float dl = d * (ls - 32);
    for (int j = 0; j < 16; ++j) {
      y[j] = dl * kIq4nlValues[qs[j] & 0xf];
      y[j + 16] = dl * kIq4nlValues[qs[j] >> 4];
    }
  }
}

// Decodes n / Block::kElements consecutive blocks with `decode_block`.
template <typename Block>
void decode_blocks(const std::uint8_t* src, float* dst, std::int64_t n,
                   void (*decode_block)(const Block&, float*)) {
  const std::int64_t n_blocks = n / Block::kElements;
  for (std::int64_t b = 0; b < n_blocks; ++b) {
    Block block;
    std::memcpy(&block, src + b * static_cast<std::int64_t>(sizeof(Block)), sizeof(Block));
    decode_block(block, dst + b * Block::kElements);
  }
}

struct TypeTraits {
  const char* name;
  std::int64_t block_elements;  // 0: known id, no decoder here
  std::size_t block_bytes;
};

template <typename Block>
constexpr TypeTraits block_traits(const char* name) {
  return {name, Block::kElements, sizeof(Block)};
}

// ggml.c's type_traits table: names, block sizes and block bytes.
TypeTraits traits(std::uint32_t id) {
  switch (static_cast<GgmlType>(id)) {
    case GgmlType::F32: return {"f32", 1, 4};
    case GgmlType::F16: return {"f16", 1, 2};
    case GgmlType::BF16: return {"bf16", 1, 2};
    case GgmlType::Q4_0: return block_traits<BlockQ4_0>("q4_0");
    case GgmlType::Q4_1: return block_traits<BlockQ4_1>("q4_1");
    case GgmlType::Q5_0: return block_traits<BlockQ5_0>("q5_0");
    case GgmlType::Q5_1: return block_traits<BlockQ5_1>("q5_1");
    case GgmlType::Q8_0: return block_traits<BlockQ8_0>("q8_0");
    case GgmlType::Q8_1: return {"q8_1", 0, 0};
    case GgmlType::Q2_K: return block_traits<BlockQ2_K>("q2_K");
    case GgmlType::Q3_K: return block_traits<BlockQ3_K>("q3_K");
    case GgmlType::Q4_K: return block_traits<BlockQ4_K>("q4_K");
    case GgmlType::Q5_K: return block_traits<BlockQ5_K>("q5_K");
    case GgmlType::Q6_K: return block_traits<BlockQ6_K>("q6_K");
    case GgmlType::Q8_K: return {"q8_K", 0, 0};
    case GgmlType::IQ2_XXS: return {"iq2_xxs", 0, 0};
    case GgmlType::IQ2_XS: return {"iq2_xs", 0, 0};
    case GgmlType::IQ3_XXS: return {"iq3_xxs", 0, 0};
    case GgmlType::IQ1_S: return {"iq1_s", 0, 0};
    case GgmlType::IQ4_NL: return block_traits<BlockIq4Nl>("iq4_nl");
    case GgmlType::IQ3_S: return {"iq3_s", 0, 0};
    case GgmlType::IQ2_S: return {"iq2_s", 0, 0};
    case GgmlType::IQ4_XS: return block_traits<BlockIq4Xs>("iq4_xs");
    case GgmlType::I8: return {"i8", 0, 0};
    case GgmlType::I16: return {"i16", 0, 0};
    case GgmlType::I32: return {"i32", 0, 0};
    case GgmlType::I64: return {"i64", 0, 0};
    case GgmlType::F64: return {"f64", 0, 0};
    case GgmlType::IQ1_M: return {"iq1_m", 0, 0};
    case GgmlType::TQ1_0: return {"tq1_0", 0, 0};
    case GgmlType::TQ2_0: return {"tq2_0", 0, 0};
  }
  return {nullptr, 0, 0};
}

}  // namespace

std::string ggml_type_name(std::uint32_t type_id) {
  const TypeTraits t = traits(type_id);
  return t.name ? t.name : "type " + std::to_string(type_id);
}

bool ggml_type_supported(std::uint32_t type_id) { return traits(type_id).block_elements > 0; }

std::int64_t ggml_block_elements(std::uint32_t type_id) { return traits(type_id).block_elements; }

std::size_t ggml_block_bytes(std::uint32_t type_id) { return traits(type_id).block_bytes; }

void dequantize_row(GgmlType type, const std::uint8_t* src, float* dst, std::int64_t n) {
  switch (type) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<std::size_t>(n) * 4);
      return;
    case GgmlType::F16:
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = half_to_float(h);
      }
      return;
    case GgmlType::BF16:
      for (std::int64_t i = 0; i < n; ++i) {
        std::uint16_t b;
        std::memcpy(&b, src + 2 * i, 2);
        const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
        std::memcpy(dst + i, &bits, 4);
      }
      return;
    case GgmlType::Q4_0: return decode_blocks(src, dst, n, decode_q4_0);
    case GgmlType::Q4_1: return decode_blocks(src, dst, n, decode_q4_1);
    case GgmlType::Q5_0: return decode_blocks(src, dst, n, decode_q5_0);
    case GgmlType::Q5_1: return decode_blocks(src, dst, n, decode_q5_1);
    case GgmlType::Q8_0: return decode_blocks(src, dst, n, decode_q8_0);
    case GgmlType::Q2_K: return decode_blocks(src, dst, n, decode_q2_K);
    case GgmlType::Q3_K: return decode_blocks(src, dst, n, decode_q3_K);
    case GgmlType::Q4_K: return decode_blocks(src, dst, n, decode_q4_K);
    case GgmlType::Q5_K: return decode_blocks(src, dst, n, decode_q5_K);
    case GgmlType::Q6_K: return decode_blocks(src, dst, n, decode_q6_K);
    case GgmlType::IQ4_NL: return decode_blocks(src, dst, n, decode_iq4_nl);
    case GgmlType::IQ4_XS: return decode_blocks(src, dst, n, decode_iq4_xs);
    default:
      assert(false && "dequantize_row: unsupported type (the GGUF reader refuses it)");
      return;
  }
}

}  // namespace attnviz
