// One-core float32 GEMM throughput with Eigen, compiled like attnviz (-O3 -march=native):
// the square 1024^3 product (the machine's practical peak) and the projection attnviz runs
// for P2, X [n, d_model] · W [d_model, d_model] (Matrix y = x * w in attention.cpp), row-major.
// Prints "<name> <GFLOP/s>" lines, median of the runs.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double median_gflops(long m, long k, long n, int runs) {
  const Matrix a = Matrix::Random(m, k);
  const Matrix b = Matrix::Random(k, n);
  Matrix c(m, n);
  std::vector<double> seconds;
  for (int r = 0; r <= runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r > 0) seconds.push_back(s);  // run 0 warms up
  }
  std::sort(seconds.begin(), seconds.end());
  return 2.0 * m * k * n / seconds[seconds.size() / 2] / 1e9;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 512;
  const long d_model = argc > 2 ? std::atol(argv[2]) : 768;
  Eigen::setNbThreads(1);
  std::printf("eigen_sgemm_gflops_1024x1024x1024 %.1f\n", median_gflops(1024, 1024, 1024, 9));
  std::printf("eigen_projection_gflops_%ldx%ldx%ld %.1f\n", n, d_model, d_model, median_gflops(n, d_model, d_model, 15));
  return 0;
}
