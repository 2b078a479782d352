// Y = X·Wᵀ for f16 and bf16 weights as llama.cpp's CPU backend sums it, term for term. The
// activations are rounded to the weight's type first (so every product is exact in float32);
// what is left is the order of the float32 additions, and it matters: the next product rounds
// these outputs to float16 (or 8 bits), where a last-bit difference can become a whole step.
//
// Which kernel llama.cpp runs (ggml-cpu's mul_mat; the AVX-512 build it loads on this machine,
// libggml-cpu-zen4, whose tinyBLAS instantiations are <16, fp16, fp16> and <32, bf16, bf16>):
//   * X has 2 rows or more and k is a multiple of 16 (f16) or 32 (bf16): llamafile's tinyBLAS,
//     one accumulator of 16 float lanes per output, lane t adding the terms t, t + 16, … (f16:
//     fused multiply-adds; bf16: VDPBF16PS, each lane taking its pair's odd term, then its even
//     one), then the 16 lanes summed by halving (_mm512_reduce_add_ps);
//   * otherwise ggml_vec_dot_f16 / ggml_vec_dot_bf16: f16: four accumulators of 16 lanes over the
//     first k − k mod 64 terms, reduced as (a0 + a2) + (a1 + a3), then halved, then the remaining
//     terms added one by one in double; bf16: two accumulators of VDPBF16PS over the first
//     k − k mod 64, each halved and added in double, then the rest in double.
// Sources (read, not copied): ggml-cpu/llamafile/sgemm.cpp, ggml-cpu/vec.cpp, simd-mappings.h.
#pragma once

#include "core/types.hpp"
#include "model/formats/quant_matmul.hpp"

namespace attnviz {

/// Y [n, w.rows] = X [n, w.cols]·Wᵀ for W of type f16 or bf16, X rounded to W's type, summed as
/// above, on up to `threads` OpenMP threads over W's rows. Throws std::invalid_argument when
/// x.cols() != w.cols or W is of another type.
Matrix half_matmul(const Matrix& x, const QuantRows& w, int threads = 1);

}  // namespace attnviz
