#include "model/formats/half_matmul.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "model/formats/ggml_activations.hpp"
#include "model/formats/ggml_types.hpp"

namespace attnviz {
namespace {

constexpr int kLanes = 16;

// _mm512_reduce_add_ps: the two 256-bit halves added, then the 128-bit halves, then pairs.
float reduce_halving(std::array<float, kLanes> v) {
  for (int width = kLanes / 2; width >= 1; width /= 2)
    for (int t = 0; t < width; ++t) v[static_cast<std::size_t>(t)] += v[static_cast<std::size_t>(t + width)];
  return v[0];
}

// One lane of VDPBF16PS: the odd term of the pair first, each a fused multiply-add.
inline float bf16_pair(float acc, const float* w, const float* x) {
  acc = std::fma(w[1], x[1], acc);
  return std::fma(w[0], x[0], acc);
}

float tinyblas_f16(const float* w, const float* x, long k) {
  std::array<float, kLanes> acc{};
  for (long l = 0; l < k; l += kLanes)
    for (int t = 0; t < kLanes; ++t) acc[static_cast<std::size_t>(t)] = std::fma(w[l + t], x[l + t], acc[static_cast<std::size_t>(t)]);
  return reduce_halving(acc);
}

float tinyblas_bf16(const float* w, const float* x, long k) {
  std::array<float, kLanes> acc{};
  for (long l = 0; l < k; l += 2 * kLanes)
    for (int t = 0; t < kLanes; ++t)
      acc[static_cast<std::size_t>(t)] = bf16_pair(acc[static_cast<std::size_t>(t)], w + l + 2 * t, x + l + 2 * t);
  return reduce_halving(acc);
}

float vec_dot_f16(const float* w, const float* x, long k) {
  constexpr long kStep = 4 * kLanes;
  const long whole = k / kStep * kStep;
  std::array<std::array<float, kLanes>, 4> acc{};
  for (long i = 0; i < whole; i += kStep)
    for (int j = 0; j < 4; ++j)
      for (int t = 0; t < kLanes; ++t) {
        const long at = i + j * kLanes + t;
        acc[static_cast<std::size_t>(j)][static_cast<std::size_t>(t)] =
            std::fma(w[at], x[at], acc[static_cast<std::size_t>(j)][static_cast<std::size_t>(t)]);
      }
  for (int t = 0; t < kLanes; ++t) {
    acc[0][static_cast<std::size_t>(t)] += acc[2][static_cast<std::size_t>(t)];
    acc[1][static_cast<std::size_t>(t)] += acc[3][static_cast<std::size_t>(t)];
  }
  for (int t = 0; t < kLanes; ++t) acc[0][static_cast<std::size_t>(t)] += acc[1][static_cast<std::size_t>(t)];
  double sum = reduce_halving(acc[0]);
  for (long i = whole; i < k; ++i) sum += static_cast<double>(w[i] * x[i]);
  return static_cast<float>(sum);
}

float vec_dot_bf16(const float* w, const float* x, long k) {
  constexpr long kStep = 4 * kLanes;
  const long whole = k / kStep * kStep;
  std::array<float, kLanes> first{}, second{};
  for (long i = 0; i < whole; i += kStep)
    for (int t = 0; t < kLanes; ++t) {
      first[static_cast<std::size_t>(t)] = bf16_pair(first[static_cast<std::size_t>(t)], w + i + 2 * t, x + i + 2 * t);
      second[static_cast<std::size_t>(t)] =
          bf16_pair(second[static_cast<std::size_t>(t)], w + i + 2 * kLanes + 2 * t, x + i + 2 * kLanes + 2 * t);
    }
  double sum = 0.0;
  sum += static_cast<double>(reduce_halving(first));
  sum += static_cast<double>(reduce_halving(second));
  for (long i = whole; i < k; ++i) sum += static_cast<double>(w[i] * x[i]);
  return static_cast<float>(sum);
}

}  // namespace

Matrix half_matmul(const Matrix& x, const QuantRows& w, int threads) {
  if (w.type != GgmlType::F16 && w.type != GgmlType::BF16) throw std::invalid_argument("half_matmul: the weight is not f16 or bf16");
  if (x.cols() != w.cols) {
    throw std::invalid_argument("half_matmul: X has " + std::to_string(x.cols()) + " columns, W " + std::to_string(w.cols));
  }
  const bool f16 = w.type == GgmlType::F16;
  const Matrix xr = f16 ? round_to_half(x) : round_to_bf16(x);
  const long n = xr.rows(), k = w.cols;
  const bool tinyblas = n >= 2 && k % (f16 ? 16 : 32) == 0;
  Matrix y(n, w.rows);
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
  {
    std::vector<float> row(static_cast<std::size_t>(k));
#pragma omp for schedule(static)
    for (long r = 0; r < w.rows; ++r) {
      dequantize_row(w.type, w.blocks + r * w.cols * 2, row.data(), k);  // exact for both types
      for (long i = 0; i < n; ++i) {
        const float* xi = xr.data() + i * k;
        y(i, r) = tinyblas ? (f16 ? tinyblas_f16(row.data(), xi, k) : tinyblas_bf16(row.data(), xi, k))
                           : (f16 ? vec_dot_f16(row.data(), xi, k) : vec_dot_bf16(row.data(), xi, k));
      }
    }
  }
  return y;
}

}  // namespace attnviz
