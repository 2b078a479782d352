// The pieces of a Transformer block outside attention that the model families share: RMSNorm
// sits in decoder_model.hpp; here LayerNorm, the GELUs and their gated forms, logit soft-capping.
// Float32 versions for the decoder families' forward pass (row per position); float64 versions
// for the residual streams the CTranslate2 transformer and the BERT encoder keep in double.
#pragma once

#include <Eigen/Dense>

#include "core/types.hpp"

namespace attnviz {

/// Float64 matrices for residual streams (row-major, like Matrix) and their vectors.
using WideMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using WideVector = Eigen::VectorXd;

/// LayerNorm (Ba et al. 2016) of each row of x [n, d]: (x − μ) / √(σ² + ε) · gain + bias, σ²
/// the biased variance (PyTorch's nn.LayerNorm, ggml_norm). bias empty = none. Mean and
/// variance summed in double. Throws InputError when a row's variance overflows float32.
Matrix layer_norm(const Matrix& x, const Vector& gain, const Vector& bias, double epsilon);

/// LayerNorm in float64, as above (CTranslate2, the BERT encoder). gamma, beta: [d].
WideMatrix layer_norm(const WideMatrix& x, const WideVector& gamma, const WideVector& beta, double epsilon);

/// GELU with the tanh approximation (Hendrycks & Gimpel 2016, Eq. in §2; GPT-2, Gemma's
/// gelu_pytorch_tanh, ggml_gelu): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), elementwise.
/// (ggml looks it up in a float16 table: ≈2e-4 relative from this exact value.)
Matrix gelu_tanh(const Matrix& x);

/// The same tanh GELU of one float64 value ("gelu_new").
double gelu_tanh(double x);

/// GELU (Hendrycks & Gimpel 2016), exact: 0.5·x·(1 + erf(x/√2)) (transformers' "gelu").
double gelu_erf(double x);

/// GeGLU (Shazeer 2020): GELU_tanh(gate) ⊙ up, both [n, d_ff].
Matrix geglu(const Matrix& gate, const Matrix& up);

/// SwiGLU's gate (Shazeer 2020): SiLU(gate) ⊙ up = gate·σ(gate) ⊙ up, both [n, d_ff].
Matrix swiglu(const Matrix& gate, const Matrix& up);

/// Soft-capping (Gemma 2): c·tanh(z/c) elementwise, bounded by ±c. Requires cap > 0.
Matrix soft_cap(const Matrix& z, double cap);

}  // namespace attnviz
