// The pieces outside attention that Transformer blocks share, computed in float64 (the residual
// stream of the CTranslate2 transformer and of the BERT encoder): LayerNorm and the two GELUs.
#pragma once

#include <Eigen/Dense>

namespace attnviz {

/// Float64 matrices for residual streams (row-major, like Matrix) and their vectors.
using WideMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using WideVector = Eigen::VectorXd;

/// LayerNorm (Ba et al. 2016) of each row of x [n, d]: (x − mean) / sqrt(var + ε) · gamma + beta,
/// with the biased variance (PyTorch's nn.LayerNorm, ggml_norm, CTranslate2). gamma, beta: [d].
WideMatrix layer_norm(const WideMatrix& x, const WideVector& gamma, const WideVector& beta, double epsilon);

/// GELU (Hendrycks & Gimpel 2016), exact: 0.5·x·(1 + erf(x/√2)) (transformers' "gelu").
double gelu_erf(double x);

/// GELU's tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (ggml_gelu, "gelu_new").
double gelu_tanh(double x);

}  // namespace attnviz
