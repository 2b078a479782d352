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

namespace {

// ggml's ggml_v_expf (ggml-cpu/vec.h, the AVX-512 version llama.cpp's CPU backend runs here),
// lane by lane: the same fused multiply-adds in the same order, so the same bits for |n| ≤ 192
// (|x| up to ~133); beyond, ggml flushes to +inf or 0, as here.
float ggml_v_expf(float x) {
  const float r = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  if (std::fabs(n) > 192.0f) return n > 0 ? HUGE_VALF : 0.0f;
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
                           std::fma(0x1.ffffecp-1f, b, 1.0f));
  return std::ldexp(j, static_cast<int>(n));  // _mm512_scalef_ps(j, n), n integral
}

}  // namespace

Matrix swiglu(const Matrix& gate, const Matrix& up) {
  // As ggml_vec_swiglu_f32 on AVX-512, to the bit: silu(g) = g / (1 + ggml_v_expf(0 − g)) for
  // each full group of 16 values of a row, the C library's expf for the rest, times up. The
  // products after it round their activations to 8 bits (or float16), where an ulp can move a
  // value across a rounding step, so the ulps matter for llama.cpp's numbers.
  Matrix out(gate.rows(), gate.cols());
  const Eigen::Index vectorised = gate.cols() / 16 * 16;
  for (Eigen::Index r = 0; r < gate.rows(); ++r)
    for (Eigen::Index c = 0; c < gate.cols(); ++c) {
      const float g = gate(r, c);
      const float e = c < vectorised ? ggml_v_expf(0.0f - g) : std::exp(-g);
      out(r, c) = g / (1.0f + e) * up(r, c);
    }
  return out;
}

Matrix soft_cap(const Matrix& z, double cap) {
  const auto c = static_cast<Scalar>(cap);
  return ((z.array() / c).tanh() * c).matrix();
}

}  // namespace attnviz
