#!/usr/bin/env bash
# Builds scripts/bench/q8_gemm_bench.cpp with src/model/formats/q8_matmul.cpp (attnviz's flags: -O3
# -march=native) and runs it: one-thread GFLOP/s of the Q8_0 kernel against Eigen's float32 GEMM.
# Usage: scripts/bench/q8_gemm_bench.sh [n in out]   (default 512 896 4864)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O3 -DNDEBUG -march=native -std=c++20 -fopenmp -Isrc -I/usr/include/eigen3 \
  scripts/bench/q8_gemm_bench.cpp src/model/formats/q8_matmul.cpp -o "$work/q8_gemm_bench"
OMP_NUM_THREADS=1 "$work/q8_gemm_bench" "$@"
