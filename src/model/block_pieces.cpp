#include "model/block_pieces.hpp"

#include <cmath>

namespace attnviz {

WideMatrix layer_norm(const WideMatrix& x, const WideVector& gamma, const WideVector& beta, double epsilon) {
  WideMatrix y(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double mean = x.row(r).mean();
    const double variance = (x.row(r).array() - mean).square().mean();
    const double inv = 1.0 / std::sqrt(variance + epsilon);
    y.row(r) = ((x.row(r).array() - mean) * inv) * gamma.transpose().array() + beta.transpose().array();
  }
  return y;
}

double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double gelu_tanh(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/π)
  constexpr double kGeluCubic = 0.044715;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
}

}  // namespace attnviz
