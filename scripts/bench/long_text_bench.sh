#!/usr/bin/env bash
# Peak memory at 8192 tokens (issue 23, "Long texts"): the synthetic 4-layer model of RESULTS.md's
# "Long texts" section (d_model 256, 8 heads, context 8192), 8192 fixed token ids, each command once
# with --threads 1 and with the default threads, GNU time's user, system, wall and maximum RSS.
# Prints a Markdown table; the load average is printed after it (the machine may be shared).
#   scripts/bench/long_text_bench.sh [N]     (after building build/attnviz; N tokens, default 8192;
#                                             a few minutes a row on 2 cores)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz, models and the shared helpers
n=${1:-8192}
bench_work attnviz-long-bench
need_attnviz
mkdir -p "$models"
model="$models/m8k.gguf"
[[ -f "$model" ]] || env -u OPENBLAS_CORETYPE /usr/bin/python3 "$root/scripts/gguf_writer.py" "$model" \
  --layers 4 --d-model 256 --heads 8 --kv-heads 8 --ff 512 --vocab 512 --context 8192
# BOS, then n-1 ids spread over the vocabulary past its byte tokens (fixed).
ids=$(spread_ids "$n" 512)

run() {  # run LABEL THREADS ARGS...: one table row
  local label=$1 threads=$2
  shift 2
  local thread_args=()
  [[ $threads == default ]] || thread_args=(--threads "$threads")
  rm -rf "$work/out"
  if /usr/bin/time -f '%U %S %e %M' -o "$work/time" "$attnviz" "$@" "${thread_args[@]}" >"$work/stdout" 2>"$work/stderr"; then
    awk -v label="$label" -v threads="$threads" \
      '{ printf "| `%s` | %s | %.0f MiB | %.1f s | %.1f s |\n", label, threads, $4 / 1024, $1 + $2, $3 }' "$work/time"
  else
    printf '| `%s` | %s | failed: %s | | |\n' "$label" "$threads" "$(grep -m1 . "$work/stderr" | cut -c1-160)"
  fi
}

echo "| Command ($n tokens) | Threads | Peak RSS | CPU (user+sys) | Wall |"
echo "| --- | --- | --- | --- | --- |"
for threads in 1 default; do
  run "heatmaps --model m8k.gguf --token-ids …" "$threads" heatmaps --model "$model" --token-ids "$ids" -o "$work/out"
  run "compare --model m8k.gguf --token-ids … --census c.csv" "$threads" compare --model "$model" --token-ids "$ids" --census "$work/c.csv" -o "$work/c.png"
  run "heatmaps --model m8k.gguf --token-ids … --format html" "$threads" heatmaps --model "$model" --token-ids "$ids" --format html -o "$work/out"
done
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
