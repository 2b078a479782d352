// Y = X·Wᵀ with W in one of ggml's block types as the file stores it, and X converted to that
// type's vec_dot_type (model/formats/ggml_activations): what llama.cpp's CPU backend computes for
// a quantized weight. One product per weight type, chosen per tensor:
//
//   q4_0, q5_0, iq4_nl (× Q8_0)   q4_1, q5_1 (× Q8_1)   q2_K, q3_K, q4_K, q5_K, q6_K, iq4_xs (× Q8_K)
//   q8_0: q8_matmul (its own packed kernels)
//
// f16 and bf16 weights are not multiplied here: their products are float32 products of values
// rounded to float16 / bfloat16 (round_to_half, round_to_bf16), exact per term.
//
// Each weight row is unpacked once per product into int8 values (ggml's integer quants, offset
// as its vec_dot does: q4_0 − 8, q6_K − 32, iq4 through kvalues_iq4nl …), one int16 scale per 16
// values (the sub-block scales of the K-quants; 1 for the 32-value types) and, for q2_K/q4_K/q5_K,
// one int16 min per 16 values. Per block (32 or 256 values), the integer sum
//   sumi = Σ_g scale_g · Σ_{t ∈ g} w_t·x_t
// is exact (at most 2^28 in magnitude), and the block's float contribution follows ggml's
// formula for the type (ggml-cpu/quants.c, *_generic):
//   ×Q8_0, q3_K, q6_K, iq4_xs:  acc = fma(d_w·d_x, sumi, acc)
//   ×Q8_1:                       acc += fma(d_w·d_x, sumi, m_w·s_x)
//   q2_K, q4_K, q5_K:            acc = fma(d_w·d_x, sumi, acc); acc = fma(−(dmin_w·d_x), Σ_g min_g·bsum_g, acc)
// block after block. ggml's SIMD kernels (and its repacked Q4_K/Q4_0 gemm) add the same terms in
// other groupings (partial lanes, sub-block scales applied in float for iq4_xs), so the two differ
// by float rounding of the sum (relative ~1e-7: tests/quant_matmul_test.cpp measures it against
// ggml's own kernels), never in what is rounded to 8 bits. The SIMD and scalar paths here agree
// bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "model/formats/ggml_activations.hpp"
#include "model/formats/ggml_types.hpp"

namespace attnviz {

/// A [rows, cols] matrix of ggml blocks of `type`, row-major (a Linear weight [out, in] as GGUF
/// stores it): row r starts at blocks + r·row_bytes. cols is a multiple of the type's block. The
/// bytes are borrowed (the mapped file) and must outlive every use.
struct QuantRows {
  GgmlType type = GgmlType::Q8_0;
  const std::uint8_t* blocks = nullptr;
  long rows = 0;
  long cols = 0;
};

/// Bytes of one row of `w` (cols / block values × block bytes).
long quant_row_bytes(const QuantRows& w);

/// Rows [first, first + count) of w, as their own QuantRows (no copy).
QuantRows quant_row_slice(const QuantRows& w, long first, long count);

/// True for the weight types quant_matmul multiplies (the list above, q8_0 included).
bool quant_matmul_supports(GgmlType type);

/// The activation blocks ggml takes for a weight type (its vec_dot_type). Requires
/// quant_matmul_supports(type).
ActivationBlocks activation_blocks_for(GgmlType type);

/// Y [n, w.rows] = X·Wᵀ, X [n, w.cols] quantised to activation_blocks_for(w.type), the SIMD
/// path this build has (quant_matmul_path), on up to `threads` OpenMP threads over W's rows.
/// Throws std::invalid_argument when x.cols() != w.cols, w.cols is not a multiple of the block,
/// or the type is not supported.
Matrix quant_matmul(const Matrix& x, const QuantRows& w, int threads = 1);

/// The same product by plain scalar code, in the same order: equal to quant_matmul bit for bit.
Matrix quant_matmul_scalar(const Matrix& x, const QuantRows& w);

/// Threads worth spending on X [n, w.cols]·Wᵀ: at most `budget`, one per 200 Mflop, at least 1.
int quant_matmul_threads(int budget, long n, const QuantRows& w);

/// The path the integer block sums take in this build: "avx2" or "scalar".
std::string quant_matmul_path();

/// One weight row unpacked as described above, for tests: values [cols], scale per 16 values
/// [cols/16], min per 16 values [cols/16] (0 for types without mins), and per block the fp16
/// scale d and the second one (dmin, or q4_1/q5_1's m; 0 otherwise) read back as floats.
struct UnpackedRow {
  std::vector<std::int8_t> values;
  std::vector<std::int16_t> scales16;
  std::vector<std::int16_t> mins16;
  std::vector<float> d;
  std::vector<float> m;
};
/// Unpacks row `row` of w. Requires quant_matmul_supports(w.type).
UnpackedRow unpack_quant_row(const QuantRows& w, long row);

}  // namespace attnviz
