#include "model/ggml_types.hpp"

#include <cstring>

namespace attnviz {

namespace {

struct TypeTraits {
  const char* name;
  std::int64_t block_elements;  // 0: known id, no decoder here
  std::size_t block_bytes;
};

// ggml.c's type_traits table: names, block sizes and block bytes.
TypeTraits traits(std::uint32_t id) {
  switch (static_cast<GgmlType>(id)) {
    case GgmlType::F32: return {"f32", 1, 4};
    case GgmlType::F16: return {"f16", 1, 2};
    case GgmlType::BF16: return {"bf16", 1, 2};
    case GgmlType::Q4_0: return {"q4_0", 0, 0};
    case GgmlType::Q4_1: return {"q4_1", 0, 0};
    case GgmlType::Q5_0: return {"q5_0", 0, 0};
    case GgmlType::Q5_1: return {"q5_1", 0, 0};
    case GgmlType::Q8_0: return {"q8_0", 0, 0};
    case GgmlType::Q8_1: return {"q8_1", 0, 0};
    case GgmlType::Q2_K: return {"q2_K", 0, 0};
    case GgmlType::Q3_K: return {"q3_K", 0, 0};
    case GgmlType::Q4_K: return {"q4_K", 0, 0};
    case GgmlType::Q5_K: return {"q5_K", 0, 0};
    case GgmlType::Q6_K: return {"q6_K", 0, 0};
    case GgmlType::Q8_K: return {"q8_K", 0, 0};
    case GgmlType::IQ2_XXS: return {"iq2_xxs", 0, 0};
    case GgmlType::IQ2_XS: return {"iq2_xs", 0, 0};
    case GgmlType::IQ3_XXS: return {"iq3_xxs", 0, 0};
    case GgmlType::IQ1_S: return {"iq1_s", 0, 0};
    case GgmlType::IQ4_NL: return {"iq4_nl", 0, 0};
    case GgmlType::IQ3_S: return {"iq3_s", 0, 0};
    case GgmlType::IQ2_S: return {"iq2_s", 0, 0};
    case GgmlType::IQ4_XS: return {"iq4_xs", 0, 0};
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
    default:
      break;
  }
}

}  // namespace attnviz
