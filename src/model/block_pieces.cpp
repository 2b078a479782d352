#include "model/block_pieces.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "model/ggml_gelu.hpp"

namespace attnviz {

Matrix layer_norm(const Matrix& x, const Vector& gain, const Vector& bias, double epsilon) {
  Matrix out(x.rows(), x.cols());
  const double d = static_cast<double>(x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const Eigen::RowVectorXd row = x.row(r).cast<double>();
    const double mean = row.sum() / d;
    const double variance = (row.array() - mean).square().sum() / d;
    if (!std::isfinite(static_cast<Scalar>(variance))) {
      char value[32];
      std::snprintf(value, sizeof value, "%.3g", variance);
      throw InputError("LayerNorm: the variance of row " + std::to_string(r) + " (" + value + ") overflows float32");
    }
    const double inv = 1.0 / std::sqrt(variance + epsilon);
    out.row(r) = ((row.array() - mean) * inv).matrix().cast<Scalar>().cwiseProduct(gain.transpose());
    if (bias.size() != 0) out.row(r) += bias.transpose();
  }
  return out;
}

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

Matrix gelu_tanh(const Matrix& x) {
  const Scalar k = static_cast<Scalar>(std::sqrt(2.0 / M_PI));  // √(2/π)
  return (0.5f * x.array() * (1.0f + (k * (x.array() + 0.044715f * x.array().cube())).tanh())).matrix();
}

std::string gelu_name(GeluKind kind) {
  switch (kind) {
    case GeluKind::Erf: return "gelu (erf)";
    case GeluKind::Tanh: return "gelu (tanh)";
    case GeluKind::GgmlTable: return "gelu (tanh, float16 table)";
  }
  return "";
}

Matrix gelu(const Matrix& x, GeluKind kind) {
  // The tanh GELU in float32 by Eigen's vectorised tanh (in float64 by libm it took a quarter of
  // a BERT base forward pass, perf); the erf GELU in float64.
  switch (kind) {
    case GeluKind::GgmlTable: return gelu_ggml(x);
    case GeluKind::Tanh: return gelu_tanh(x);
    case GeluKind::Erf: break;
  }
  return x.cast<double>().unaryExpr([](double v) { return gelu_erf(v); }).cast<Scalar>();
}

Matrix geglu(const Matrix& gate, const Matrix& up, GeluKind kind) { return gelu(gate, kind).cwiseProduct(up); }

Matrix swiglu(const Matrix& gate, const Matrix& up) {
  // Eigen's vectorised exp (within an ulp or two of expf, as ggml's own vectorised silu is):
  // one scalar expf per cell was a tenth of a small model's forward pass. Below g ≈ −88 it
  // clamps, giving ~1e-38·g·up instead of −0: float32 noise either way.
  return (gate.array() / (1.0f + (-gate.array()).exp()) * up.array()).matrix();
}

Matrix soft_cap(const Matrix& z, double cap) {
  const auto c = static_cast<Scalar>(cap);
  return ((z.array() / c).tanh() * c).matrix();
}

}  // namespace attnviz
