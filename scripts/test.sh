#!/usr/bin/env bash
# The README's second command: install what is missing, build, and run every test:
#   1. Release build, all of CTest: unit tests, real-model references, the PyTorch cross-check,
#      black-box CLI runs, size/memory guards and interrupted runs;
#   2. one clang build under AddressSanitizer + UndefinedBehaviorSanitizer with libFuzzer's
#      coverage (build-sanitize/, -O1): the unit tests and the executable's CLI runs (CTest labels
#      unit and cli; the Python scripts time runs and measure memory, which sanitizers distort),
#      then the libFuzzer target: ATTNVIZ_FUZZ_RUNS inputs (default 30000, about a minute here)
#      from a fixed seed, so every run of this script tries the same inputs; at most
#      ATTNVIZ_FUZZ_SECONDS (default 120).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
fuzz_runs=${ATTNVIZ_FUZZ_RUNS:-30000}
fuzz_seconds=${ATTNVIZ_FUZZ_SECONDS:-120}

scripts/install_deps.sh --test

echo "== 1/2 Release build and every test"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DATTNVIZ_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== 2/2 sanitizers: unit tests and CLI runs, then fuzzing the loaders, maths and renderer (${fuzz_runs} inputs, at most ${fuzz_seconds} s)"
cmake -S . -B build-sanitize -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" -DATTNVIZ_FUZZ=ON -DATTNVIZ_PCH=ON >/dev/null
cmake --build build-sanitize -j"$jobs" --target attnviz_tests attnviz fuzz_inputs
lsan="suppressions=$(pwd)/tests/fuzz/lsan_suppressions.txt"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS="$lsan" UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-sanitize --output-on-failure -j"$jobs" -L '^(unit|cli)$'

mkdir -p build-sanitize/corpus build-sanitize/crashes
if ! LSAN_OPTIONS="$lsan" \
    build-sanitize/tests/fuzz/fuzz_inputs build-sanitize/corpus tests/fuzz/regressions tests/fuzz/seeds tests/invalid tests/fixtures \
    data/aren-translit/atzmon -seed=1 -runs="$fuzz_runs" -max_total_time="$fuzz_seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix=build-sanitize/crashes/ -print_final_stats=1 >build-sanitize/fuzz.log 2>&1; then
  tail -n 60 build-sanitize/fuzz.log
  echo "fuzzing found a failure: copy the file named above from build-sanitize/crashes/ into tests/fuzz/regressions/"
  exit 1
fi
grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" build-sanitize/fuzz.log || true
echo "fuzzing: no findings"
