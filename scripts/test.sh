#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run every test:
#   1. Release build, all of CTest: unit tests, real-model references, the PyTorch cross-check,
#      black-box CLI runs, size/memory guards and interrupted runs;
#   2. the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/);
#   3. the libFuzzer target (build-fuzz/): ATTNVIZ_FUZZ_RUNS inputs (default 30000, about a minute
#      here) from a fixed seed, so every run of this script tries the same inputs; at most
#      ATTNVIZ_FUZZ_SECONDS (default 120).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
fuzz_runs=${ATTNVIZ_FUZZ_RUNS:-30000}
fuzz_seconds=${ATTNVIZ_FUZZ_SECONDS:-120}

scripts/install_deps.sh --test

echo "== 1/3 Release build and every test"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNVIZ_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== 2/3 unit tests under AddressSanitizer and UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_SANITIZE=address,undefined >/dev/null
cmake --build build-asan -j"$jobs" --target attnviz_tests attnviz
# The Python black-box tests time runs and measure memory, which sanitizers distort.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -E '^(torch_crosscheck|limits|interrupt)$'

echo "== 3/3 fuzzing the loaders, maths and renderer: ${fuzz_runs} inputs (at most ${fuzz_seconds} s)"
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNVIZ_FUZZ=ON \
  -DATTNVIZ_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_inputs
mkdir -p build-fuzz/corpus build-fuzz/crashes
if ! LSAN_OPTIONS=suppressions="$(pwd)/tests/fuzz/lsan_suppressions.txt" \
    build-fuzz/tests/fuzz/fuzz_inputs build-fuzz/corpus tests/fuzz/regressions tests/fuzz/seeds tests/invalid tests/fixtures \
    data/aren-translit/atzmon -seed=1 -runs="$fuzz_runs" -max_total_time="$fuzz_seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1 >build-fuzz/fuzz.log 2>&1; then
  tail -n 60 build-fuzz/fuzz.log
  echo "fuzzing found a failure: copy the file named above from build-fuzz/crashes/ into tests/fuzz/regressions/"
  exit 1
fi
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" build-fuzz/fuzz.log || true
echo "fuzzing: no findings"
