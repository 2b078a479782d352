// The activations of a matrix product as ggml-cpu converts them to a weight type's vec_dot_type
// before its integer block products (ggml-cpu.c's type_traits_cpu): Q8_0 for q4_0, q5_0, q8_0 and
// iq4_nl weights; Q8_1 for q4_1 and q5_1; Q8_K for the K-quants and iq4_xs; float16 for f16 and
// bfloat16 for bf16 weights.
//
// Source (read, not copied): ggml-cpu/arch/x86/quants.c's quantize_row_q8_0 and quantize_row_q8_1
// (per block of 32: a = max|x|, d = a/127 stored as fp16, q = round-half-even(x·127/a), and for
// Q8_1 s = fp16(d·Σq) with the unrounded d); ggml-quants.c's quantize_row_q8_K_ref, which x86 uses
// as is (per block of 256: m = the value of largest magnitude, the first one on a tie,
// iscale = −127/m, q = min(127, round-half-even(iscale·x)), d = 1/iscale as float32, and the sums
// of q per 16); GGML_FP32_TO_FP16 and GGML_FP32_TO_BF16 (round to nearest even).
//
// A block holding inf or NaN gets scale NaN (and, Q8_1, sum NaN), so every product with it is NaN
// and ends in the forward pass's non-finite error, never in a finite wrong number.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Which of ggml's activation blocks a product takes.
enum class ActivationBlocks { Q8_0, Q8_1, Q8_K };

/// Values per block of each kind: 32, 32, 256.
long activation_block_values(ActivationBlocks kind);

/// X [rows, cols] in ggml's int8 activation blocks, row-major: row r's block b holds
/// values[r·cols + b·block …] with scale scales[r·(cols/block) + b].
struct QuantizedActivations {
  ActivationBlocks kind = ActivationBlocks::Q8_0;
  long rows = 0;
  long cols = 0;
  long block = 32;
  std::vector<std::int8_t> values;  ///< [rows, cols]
  std::vector<float> scales;        ///< [rows, cols/block]: fp16 d read back (Q8_0, Q8_1), float d (Q8_K)
  std::vector<float> sums;          ///< Q8_1 only, [rows, cols/32]: fp16(d·Σq) read back
  std::vector<std::int32_t> sums16; ///< Q8_K only, [rows, cols/16]: Σq per 16 values (ggml's bsums)
};

/// Quantises every row of x as ggml-cpu does for `kind`. Throws std::invalid_argument when
/// x.cols() is not a multiple of the block.
QuantizedActivations quantize_activations(const Matrix& x, ActivationBlocks kind);

/// float → bfloat16 bits, round to nearest even (GGML_FP32_TO_BF16); NaN stays a quiet NaN.
std::uint16_t float_to_bf16_bits(float f);
/// bfloat16 bits → float, exactly.
float bf16_bits_to_float(std::uint16_t h);

/// x with every value rounded to float16 (and read back), as ggml converts the activations of a
/// product with an f16 weight; overflow becomes ±inf, which the forward pass reports.
Matrix round_to_half(const Matrix& x);
/// x with every value rounded to bfloat16, as ggml converts the activations of a bf16 product.
Matrix round_to_bf16(const Matrix& x);

}  // namespace attnviz
