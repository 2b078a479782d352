#!/usr/bin/env bash
# Builds scripts/bench/measures_bench.cpp against build/'s attnviz_core (its flags, as
# overview_bench.sh does) and runs it: the CPU time of --measure norms and alti against the plain
# forward pass (issue 20; results in RESULTS.md). Usage: scripts/bench/measures_bench.sh (after building build/)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O3 -DNDEBUG -march=native -std=c++20 -fopenmp -Isrc -I/usr/include/eigen3 scripts/bench/measures_bench.cpp \
  -DATTNVIZ_DEFAULT_FONT='"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"' \
  build/src/libattnviz_core.a -lstb -lsimdjson -lpng -lz -lpcre2-8 -licuuc -licudata -o "$work/measures_bench"
OMP_NUM_THREADS=1 "$work/measures_bench" data/stories260k/stories260K.gguf
