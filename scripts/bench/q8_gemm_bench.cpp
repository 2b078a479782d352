// One-thread throughput of attnviz's Q8_0 × Q8_0 product (src/model/formats/q8_matmul.cpp) against
// Eigen's float32 GEMM on the same shape, compiled like attnviz (-O3 -march=native): Y [n, out] =
// X [n, in] · Wᵀ with W [out, in] in Q8_0 blocks (q8) or as float32 [in, out] (Eigen, the weight
// already decoded; the decode itself is timed apart). Default shape: Qwen 2.5 0.5B's feed-forward
// up projection at 512 tokens (512 × 896 × 4864). Prints "<name> <GFLOP/s> <ms>", median of the runs.
// Build and run: scripts/bench/q8_gemm_bench.sh [n in out].
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "model/formats/q8_matmul.hpp"

using attnviz::Matrix;

double median_seconds(const std::function<void()>& run, int runs) {
  std::vector<double> seconds;
  for (int r = 0; r <= runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) seconds.push_back(s);  // run 0 warms up
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 512;
  const long in = argc > 2 ? std::atol(argv[2]) : 896;
  const long out = argc > 3 ? std::atol(argv[3]) : 4864;
  const int runs = 7;
  Eigen::setNbThreads(1);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> value(-127, 127);
  Matrix x(n, in);
  for (long i = 0; i < x.size(); ++i) x.data()[i] = normal(rng);
  std::vector<std::uint8_t> blocks(static_cast<std::size_t>(out * in / 32 * 34));
  for (std::size_t b = 0; b < blocks.size(); b += 34) {
    const std::uint16_t d = attnviz::float_to_half_bits(0.01f);
    std::memcpy(&blocks[b], &d, 2);
    for (int j = 0; j < 32; ++j) blocks[b + 2 + static_cast<std::size_t>(j)] = static_cast<std::uint8_t>(value(rng));
  }
  const attnviz::Q8Rows w{blocks.data(), out, in};
  Matrix w_float(in, out);  // [in, out], as attnviz's float path multiplies (Wᵀ decoded)
  const auto decode = [&] {
    for (long r = 0; r < out; ++r)
      for (long c = 0; c < in; ++c) {
        const std::uint8_t* block = blocks.data() + (r * in / 32 + c / 32) * 34;
        std::uint16_t d;
        std::memcpy(&d, block, 2);
        w_float(c, r) = attnviz::half_bits_to_float(d) * static_cast<float>(static_cast<std::int8_t>(block[2 + c % 32]));
      }
  };
  Matrix y;
  const double flops = 2.0 * n * in * out;
  const double eigen = median_seconds([&] { y.noalias() = x * w_float; }, runs);
  const double decoding = median_seconds(decode, runs);
  const double q8 = median_seconds([&] { y = attnviz::q8_matmul(x, w, 1); }, runs);
  std::printf("shape %ld x %ld x %ld, q8 path %s\n", n, in, out, attnviz::q8_matmul_path().c_str());
  std::printf("eigen_f32 %.1f %.2f\n", flops / eigen / 1e9, eigen * 1e3);
  std::printf("decode_q8_to_f32 - %.2f\n", decoding * 1e3);
  std::printf("q8_0 %.1f %.2f\n", flops / q8 / 1e9, q8 * 1e3);
  return 0;
}
