#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run every test (unit tests,
# real-model references, the PyTorch cross-check and black-box CLI runs) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh --test
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNVIZ_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
