// The pieces of a decoder block that families combine beside RMSNorm (decoder_model.hpp):
// LayerNorm, the tanh GELU and its gated form, logit soft-capping. Pure maths on float32
// matrices, row per position.
#pragma once

#include "core/types.hpp"

namespace attnviz {

/// LayerNorm (Ba et al. 2016) of each row of x [n, d]: (x − μ) / √(σ² + ε) · gain + bias, σ²
/// the biased variance (PyTorch's nn.LayerNorm, ggml_norm). bias empty = none. Mean and
/// variance summed in double. Throws InputError when a row's variance overflows float32.
Matrix layer_norm(const Matrix& x, const Vector& gain, const Vector& bias, double epsilon);

/// GELU with the tanh approximation (Hendrycks & Gimpel 2016, Eq. in §2; GPT-2, Gemma's
/// gelu_pytorch_tanh, ggml_gelu): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), elementwise.
/// (ggml looks it up in a float16 table: ≈2e-4 relative from this exact value.)
Matrix gelu_tanh(const Matrix& x);

/// GeGLU (Shazeer 2020): GELU_tanh(gate) ⊙ up, both [n, d_ff].
Matrix geglu(const Matrix& gate, const Matrix& up);

/// SwiGLU's gate (Shazeer 2020): SiLU(gate) ⊙ up = gate·σ(gate) ⊙ up, both [n, d_ff].
Matrix swiglu(const Matrix& gate, const Matrix& up);

/// Soft-capping (Gemma 2): c·tanh(z/c) elementwise, bounded by ±c. Requires cap > 0.
Matrix soft_cap(const Matrix& z, double cap);

}  // namespace attnviz
