// The pieces of a Transformer block outside attention that the model families share: RMSNorm
// sits in decoder_model.hpp; here LayerNorm, the GELUs and their gated forms, logit soft-capping,
// the dense layer and the two-layer MLP, and the residual step around a sublayer. Float32 versions
// for the decoder families' forward pass (row per position); float64 versions for the residual
// streams the CTranslate2 transformer and the BERT encoder keep in double; the templates serve both.
#pragma once

#include <Eigen/Dense>
#include <string>

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

/// The GELU a file's reference engine applies: transformers' "gelu" is the exact (erf) one,
/// "gelu_new" / "gelu_pytorch_tanh" the tanh approximation; llama.cpp's CPU ggml_gelu and
/// ggml_geglu look the tanh approximation up in a float16 table (model/ggml_gelu), for every
/// architecture that uses them.
enum class GeluKind { Erf, Tanh, GgmlTable };

/// "gelu (erf)", "gelu (tanh)" or "gelu (tanh, float16 table)", as dumps record it.
std::string gelu_name(GeluKind kind);

/// GELU of every element of x [n, d] as `kind` computes it (Erf in float64, the others in float32).
Matrix gelu(const Matrix& x, GeluKind kind);

/// GeGLU (Shazeer 2020): GELU(gate) ⊙ up, both [n, d_ff], the GELU as `kind` computes it
/// (ggml_geglu: table(gate) · up in float32).
Matrix geglu(const Matrix& gate, const Matrix& up, GeluKind kind);

/// SwiGLU's gate (Shazeer 2020): SiLU(gate) ⊙ up = gate·σ(gate) ⊙ up, both [n, d_ff].
Matrix swiglu(const Matrix& gate, const Matrix& up);

/// Soft-capping (Gemma 2): c·tanh(z/c) elementwise, bounded by ±c. Requires cap > 0.
Matrix soft_cap(const Matrix& z, double cap);

/// A dense layer on row vectors: x·W + b. x [n, d_in], W [d_in, d_out] (already [in, out]),
/// b [d_out], or of size 0 for none. Float32 (Matrix, Vector) or float64 (WideMatrix, WideVector).
template <typename M, typename V>
M affine(const M& x, const M& w, const V& b) {
  M y = x * w;  // [n, d_out]
  if (b.size() != 0) y.rowwise() += b.transpose();
  return y;
}

/// The position-wise feed-forward network of the Transformer (Vaswani et al. 2017, Eq. 2, with
/// its activation as a parameter; GPT-2's and BERT's MLP): act(x·W1 + b1)·W2 + b2. x [n, d_model],
/// W1 [d_model, d_ff], W2 [d_ff, d_model], biases of size 0 for none; act maps the [n, d_ff]
/// hidden matrix (taken by value) to its activation.
template <typename M, typename V, typename Act>
M mlp(const M& x, const M& w1, const V& b1, Act&& act, const M& w2, const V& b2) {
  return affine(act(affine(x, w1, b1)), w2, b2);
}

/// Where a block's norm N sits around a sublayer f (Xiong et al. 2020, "On Layer Normalization in
/// the Transformer Architecture"): Pre, x ← x + f(N(x)) (GPT-2, LLaMA and the decoder families,
/// CTranslate2's pre-norm models); Post, x ← N(x + f(x)) (Vaswani et al. 2017, BERT, CTranslate2's
/// post-norm models such as Marian's). Gemma's post-norm of the sublayer's output is part of f.
enum class NormPlacement { Pre, Post };

/// One residual step around sublayer f with its norm N, in place on the residual stream x [n, d]:
/// x ← x + f(N(x)) (Pre) or x ← N(x + f(x)) (Post). N and f are callables from M to M.
template <typename M, typename Norm, typename Sublayer>
void residual_sublayer(M& x, NormPlacement placement, Norm&& norm, Sublayer&& f) {
  if (placement == NormPlacement::Pre) {
    x += f(norm(x));
  } else {
    x = norm(x + f(x));
  }
}

}  // namespace attnviz
