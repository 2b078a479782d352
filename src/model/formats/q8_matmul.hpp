// Y = X·Wᵀ with W in ggml's Q8_0 blocks as the file stores them (never widened to float32) and X
// quantised to Q8_0 on the fly: what llama.cpp computes for a Q8_0 weight on the CPU.
//
// Source (read, not copied): ggml-cpu's quantize_row_q8_0 (x86: per block of 32, a = max|x|,
// d = fp16(a/127), q = round-half-even(x·127/a)) and ggml_vec_dot_q8_0_q8_0 / llamafile's
// tinyBLAS_Q0_AVX (the int8·int8 dot of each block pair, scaled by d_w·d_x, summed in float).
// Order of the float sum: here each block's integer dot is whole (exact) before its one
// fma(d_w·d_x, dot, acc), block after block; ggml's AVX kernels keep 8 partial lanes of 4 bytes
// each and add them at the end, so the two differ by float rounding of the sum (relative ~1e-7),
// never in what is rounded to 8 bits. The SIMD and scalar paths here agree bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Bytes of one Q8_0 block: an fp16 scale d and 32 int8 values (value q·d).
inline constexpr long kQ8BlockBytes = 34;
/// Values per Q8_0 block.
inline constexpr long kQ8BlockValues = 32;

/// A [rows, cols] matrix of Q8_0 blocks, row-major (a Linear weight [out, in] as GGUF stores
/// it): row r's cols/32 blocks start at blocks + r·(cols/32)·34. cols is a multiple of 32. The
/// bytes are borrowed (the mapped file) and must outlive every use.
struct Q8Rows {
  const std::uint8_t* blocks = nullptr;
  long rows = 0;
  long cols = 0;
};

/// X [n, cols] quantised as ggml's quantize_row_q8_0 (x86 path): per block of 32 values,
/// scale = fp16(max|x|/127) read back as float, q = round-half-even(x·127/max|x|) (0 when the
/// block is all zero). A block holding inf or NaN gets scale NaN, so every product with it is NaN.
struct Q8Activations {
  std::vector<float> scales;        ///< [n, cols/32]
  std::vector<std::int8_t> values;  ///< [n, cols]
  long rows = 0;
  long cols = 0;
};

/// Quantises every row of x [n, cols] (cols a multiple of 32; else std::invalid_argument).
Q8Activations quantize_q8_0(const Matrix& x);

/// Y [n, w.rows] = X·Wᵀ, X [n, w.cols] quantised by quantize_q8_0, the widest SIMD path this
/// build has (q8_matmul_path), in panels of W rows against tiles of X rows, on up to `threads` OpenMP threads over W's rows.
/// Throws std::invalid_argument when x.cols() != w.cols or w.cols is not a multiple of 32.
Matrix q8_matmul(const Matrix& x, const Q8Rows& w, int threads = 1);

/// The same product by plain scalar code, in the same order: equal to q8_matmul bit for bit
/// (tests/q8_matmul_test.cpp holds them to it).
Matrix q8_matmul_scalar(const Matrix& x, const Q8Rows& w);

/// Threads worth spending on X [n, w.cols]·Wᵀ: at most `budget`, one per 400 Mflop (the float
/// GEMM's threshold, 100 Mflop, times this product's speed-up over it; q8_gemm_bench.sh), at least 1.
int q8_matmul_threads(int budget, long n, const Q8Rows& w);

/// The path q8_matmul takes in this build: "avx512-vnni", "avx2" or "scalar".
std::string q8_matmul_path();

/// float → IEEE half bits, round to nearest even (F16C's _cvtss_sh, ggml's FP32_TO_FP16).
std::uint16_t float_to_half_bits(float f);
/// IEEE half bits → float, exactly.
float half_bits_to_float(std::uint16_t h);

}  // namespace attnviz
