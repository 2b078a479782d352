#!/usr/bin/env bash
# Builds scripts/bench/overview_bench.cpp against build/'s attnviz_core (with its flags: -march=native
# changes Eigen's alignment, so a mismatch corrupts memory) and runs it:
# the overview of a synthetic 32-layer × 32-head model at 2048 tokens (issue 13).
# Usage: scripts/bench/overview_bench.sh [LAYERS HEADS TOKENS]  (run after building build/)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O3 -DNDEBUG -march=native -std=c++20 -fopenmp -Isrc -I/usr/include/eigen3 scripts/bench/overview_bench.cpp \
  -DATTNVIZ_DEFAULT_FONT='"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"' \
  build/src/libattnviz_core.a -lstb -lsimdjson -lpng -lz -lpcre2-8 -licuuc -licudata -o "$work/overview_bench"
mkdir -p out
"$work/overview_bench" "${1:-32}" "${2:-32}" "${3:-2048}" out/overview_32x32x2048.png
