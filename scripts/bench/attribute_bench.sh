#!/usr/bin/env bash
# `attnviz attribute` on the bundled stories260K (5 layers × 8 heads: every head ablated, 40
# reruns) at 32, 128 and 512 tokens (512 is its context length): wall time of the whole command
# (load, DLA, ablation, JSON, PNG) and its CPU time (user + sys: wall time on a shared machine
# is mostly waiting for a core), medians of ROUNDS runs, and the --profile compute phase.
# Prints a Markdown table for scripts/bench/RESULTS.md ("Head attribution"), written there by hand.
#   scripts/bench/attribute_bench.sh [ROUNDS]      (after building build/attnviz)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz, models and the shared helpers
rounds=${1:-9}
model="$root/data/stories260k/stories260K.gguf"
bench_work attnviz-attribute-bench
need_attnviz

# BOS then n-1 ids spread over the vocabulary (no byte or control tokens), fixed.
ids() { /usr/bin/python3 -c "import sys; n = int(sys.argv[1]); print(','.join(['1'] + [str(259 + (i * 37) % 253) for i in range(1, n)]))" "$1"; }

echo "| tokens | reruns (layer × head) | wall ms, median (min–max) of $rounds | CPU ms (user + sys), median | compute ms (--profile), median | peak RSS MiB |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in 32 128 512; do
  token_ids=$(ids "$n")
  : >"$work/times" ; : >"$work/compute"
  for _ in $(seq "$rounds"); do
    /usr/bin/time -o "$work/time" -f "%e %U %S %M" \
      "$attnviz" attribute --model "$model" --token-ids "$token_ids" -o "$work/out" --profile 2>"$work/err" >/dev/null
    cat "$work/time" >>"$work/times"
    awk '/profile: compute/ {printf "%.1f\n", $3 * 1000}' "$work/err" >>"$work/compute"
  done
  /usr/bin/python3 - "$n" "$work/times" "$work/compute" <<'PY'
import statistics, sys
n = sys.argv[1]
rows = [[float(x) for x in line.split()] for line in open(sys.argv[2])]
wall = [r[0] * 1000 for r in rows]
cpu = [(r[1] + r[2]) * 1000 for r in rows]
compute = [float(x) for x in open(sys.argv[3])]
print("| %s | 40 | %.0f (%.0f–%.0f) | %.0f | %.0f | %.0f |" % (n, statistics.median(wall), min(wall), max(wall), statistics.median(cpu),
                                                       statistics.median(compute), max(r[3] for r in rows) / 1024))
PY
done
