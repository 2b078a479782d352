#include "model/ggml_gelu.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "model/formats/q8_matmul.hpp"

namespace attnviz {

namespace {

// ggml_gelu_f32, in float32 as ggml evaluates it when it fills its table.
float gelu_f32(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kGeluCoefA = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kGeluCoefA * x * x)));
}

const std::array<float, 65536>& table() {
  static const std::unique_ptr<std::array<float, 65536>> t = [] {
    auto values = std::make_unique<std::array<float, 65536>>();
    for (std::uint32_t i = 0; i < 65536; ++i)
      (*values)[i] = half_bits_to_float(float_to_half_bits(gelu_f32(half_bits_to_float(static_cast<std::uint16_t>(i)))));
    return values;
  }();
  return *t;
}

}  // namespace

float gelu_ggml(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return table()[float_to_half_bits(x)];
}

Matrix gelu_ggml(const Matrix& x) {
  Matrix y(x.rows(), x.cols());
  const float* in = x.data();
  float* out = y.data();
  const std::array<float, 65536>& t = table();
  const Eigen::Index n = x.size();
  Eigen::Index i = 0;
#if defined(__F16C__)
  // F16C's conversion rounds to nearest even, as float_to_half_bits (and ggml's FP32_TO_FP16).
  for (; i + 8 <= n; i += 8) {
    alignas(16) std::uint16_t h[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(h), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    for (int k = 0; k < 8; ++k) {
      const float v = in[i + k];
      out[i + k] = v <= -10.0f ? 0.0f : v >= 10.0f ? v : t[h[k]];
    }
  }
#endif
  for (; i < n; ++i) out[i] = gelu_ggml(in[i]);
  return y;
}

}  // namespace attnviz
