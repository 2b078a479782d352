// One-core float32 GEMM throughput with Eigen at stories260K's shapes (d_model 64, d_ff 172),
// compiled like attnviz (-O3 -march=native): one text's rows (56, the census bench's mean text)
// against texts stacked to 512 rows. Says whether batching texts through the projections and
// the feed-forward could make the products faster (issue 22's per-text cost).
// Prints "rows=<m> <k>x<n> <GFLOP/s>" lines, median of 7 timings of repeated products.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double median_gflops(long m, long k, long n) {
  const Matrix a = Matrix::Random(m, k);
  const Matrix b = Matrix::Random(k, n);
  Matrix c(m, n);
  const long repeats = std::max(1L, 200000000L / (2 * m * k * n));  // ~0.2 Gflop per timing
  std::vector<double> seconds;
  for (int r = 0; r < 7; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < repeats; ++i) c.noalias() = a * b;
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats);
  }
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * m * k * n / seconds[3] / 1e9;
}

int main() {
  Eigen::setNbThreads(1);
  for (long m : {56L, 512L})
    for (const auto& [k, n] : {std::pair{64L, 64L}, std::pair{64L, 172L}, std::pair{172L, 64L}})
      std::printf("rows=%ld %ldx%ld %.1f\n", m, k, n, median_gflops(m, k, n));
  return 0;
}
