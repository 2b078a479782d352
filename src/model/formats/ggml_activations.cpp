#include "model/formats/ggml_activations.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "model/formats/q8_matmul.hpp"

namespace attnviz {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool all_finite(const float* v, long n) {
  for (long j = 0; j < n; ++j)
    if (!std::isfinite(v[j])) return false;
  return true;
}

// One block of 32 as quantize_row_q8_0 / q8_1 (x86): returns the unrounded d = a/127.
float quantize_block_32(const float* v, std::int8_t* out, float& scale) {
  float amax = 0.0f;
  for (long j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(v[j]));
  const float d = amax / 127.0f;
  scale = half_bits_to_float(float_to_half_bits(d));
  const float inverse = amax != 0.0f ? 127.0f / amax : 0.0f;
  // |x·(127/a)| ≤ 127; nearbyint rounds half to even, as _mm256_round_ps(_MM_ROUND_NEAREST).
  for (long j = 0; j < 32; ++j) out[j] = static_cast<std::int8_t>(std::nearbyint(v[j] * inverse));
  return d;
}

// One block of 256 as quantize_row_q8_K_ref.
void quantize_block_256(const float* v, std::int8_t* out, float& scale, std::int32_t* sums16) {
  float max = 0.0f, amax = 0.0f;
  for (long j = 0; j < 256; ++j) {
    const float ax = std::fabs(v[j]);
    if (ax > amax) {
      amax = ax;
      max = v[j];
    }
  }
  if (amax == 0.0f) {
    scale = 0.0f;
    std::fill(out, out + 256, std::int8_t{0});
    std::fill(sums16, sums16 + 16, 0);
    return;
  }
  const float iscale = -127.0f / max;
  for (long j = 0; j < 256; ++j) {
    // ggml's nearest_int (add 1.5·2^23) rounds half to even, as nearbyint does.
    const int q = static_cast<int>(std::nearbyint(iscale * v[j]));
    out[j] = static_cast<std::int8_t>(std::min(127, q));
  }
  for (long g = 0; g < 16; ++g) {
    std::int32_t sum = 0;
    for (long t = 0; t < 16; ++t) sum += out[g * 16 + t];
    sums16[g] = sum;
  }
  scale = 1.0f / iscale;
}

}  // namespace

long activation_block_values(ActivationBlocks kind) { return kind == ActivationBlocks::Q8_K ? 256 : 32; }

QuantizedActivations quantize_activations(const Matrix& x, ActivationBlocks kind) {
  QuantizedActivations q;
  q.kind = kind;
  q.rows = x.rows();
  q.cols = x.cols();
  q.block = activation_block_values(kind);
  if (q.cols % q.block != 0)
    throw std::invalid_argument("quantize_activations: " + std::to_string(q.cols) + " columns are not a multiple of " +
                                std::to_string(q.block));
  const long blocks = q.cols / q.block;
  q.values.resize(static_cast<std::size_t>(q.rows * q.cols));
  q.scales.resize(static_cast<std::size_t>(q.rows * blocks));
  if (kind == ActivationBlocks::Q8_1) q.sums.resize(q.scales.size());
  if (kind == ActivationBlocks::Q8_K) q.sums16.resize(static_cast<std::size_t>(q.rows * (q.cols / 16)));
  for (long r = 0; r < q.rows; ++r) {
    for (long b = 0; b < blocks; ++b) {
      const float* v = x.data() + r * q.cols + b * q.block;
      std::int8_t* out = q.values.data() + r * q.cols + b * q.block;
      const auto at = static_cast<std::size_t>(r * blocks + b);
      if (!all_finite(v, q.block)) {
        q.scales[at] = kNaN;
        if (kind == ActivationBlocks::Q8_1) q.sums[at] = kNaN;
        std::fill(out, out + q.block, std::int8_t{0});
        continue;
      }
      if (kind == ActivationBlocks::Q8_K) {
        quantize_block_256(v, out, q.scales[at], q.sums16.data() + r * (q.cols / 16) + b * 16);
      } else {
        const float d = quantize_block_32(v, out, q.scales[at]);
        if (kind == ActivationBlocks::Q8_1) {
          std::int32_t sum = 0;
          for (long j = 0; j < 32; ++j) sum += out[j];
          q.sums[at] = half_bits_to_float(float_to_half_bits(d * static_cast<float>(sum)));
        }
      }
    }
  }
  return q;
}

std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 64u);  // NaN, kept quiet
  return static_cast<std::uint16_t>((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

float bf16_bits_to_float(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

Matrix round_to_half(const Matrix& x) {
  Matrix y(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.size(); ++i) y.data()[i] = half_bits_to_float(float_to_half_bits(x.data()[i]));
  return y;
}

Matrix round_to_bf16(const Matrix& x) {
  Matrix y(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.size(); ++i) y.data()[i] = bf16_bits_to_float(float_to_bf16_bits(x.data()[i]));
  return y;
}

}  // namespace attnviz
