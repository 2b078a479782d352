// ggml's tensor element types as GGUF files name them (ggml.h, enum ggml_type), and the
// decoding of each to float32 exactly as ggml's reference dequantizers do (ggml-quants.c,
// dequantize_row_*): bit-identical results, so a quantized model gives the same floats here as
// in llama.cpp before any arithmetic. One decoder per type; nothing here knows about files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnviz {

/// ggml_type ids (ggml.h). Ids not listed are read but refused when a tensor of them is used.
enum class GgmlType : std::uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35,
};

/// ggml's name of a type id ("f32", "q4_K", "iq2_xxs"…), or "type <id>" for an unknown id.
std::string ggml_type_name(std::uint32_t type_id);

/// True when dequantize_row can decode this type.
bool ggml_type_supported(std::uint32_t type_id);

/// Elements per block (1 for f32/f16/bf16, 32 for q4_0…q8_0, 256 for the K-quants);
/// 0 for an unknown or unsupported id.
std::int64_t ggml_block_elements(std::uint32_t type_id);

/// Bytes per block (4 for f32, 18 for q4_0, 144 for q4_K…); 0 for an unknown or unsupported id.
std::size_t ggml_block_bytes(std::uint32_t type_id);

/// Decodes `n` elements (a multiple of ggml_block_elements) of `type` starting at `src` into
/// `dst` (n float32), as ggml's to_float for that type. Precondition: the type is supported and
/// src holds n / block_elements × block_bytes bytes (the GGUF reader checks both).
void dequantize_row(GgmlType type, const std::uint8_t* src, float* dst, std::int64_t n);

}  // namespace attnviz
