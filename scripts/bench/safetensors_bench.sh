#!/usr/bin/env bash
# The safetensors dump at 8192 tokens (issue 36, "Speed and memory"): one layer of 8 heads of the
# synthetic model of RESULTS.md's "Long texts" (d_model 256, 8 heads, context 8192), 8192 fixed
# token ids. For `dump --layers 0 -o x.safetensors` and, beside it, `heatmaps --layers 0` (the
# memory bound): --profile's phases (render + write are the dump's cost beyond the load and the
# forward pass; for the dump, the tensors' writes), GNU time's wall, CPU and maximum RSS, and whether the file is exactly its header plus
# 4·h·n² bytes. Prints a Markdown table; the load average after it (the machine may be shared).
#   scripts/bench/safetensors_bench.sh [N]     (after building build/attnviz; N tokens, default 8192)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz, models and the shared helpers
n=${1:-8192}
bench_work attnviz-safetensors-bench
need_attnviz
mkdir -p "$models"
model="$models/m8k.gguf"
[[ -f "$model" ]] || env -u OPENBLAS_CORETYPE /usr/bin/python3 "$root/scripts/gguf_writer.py" "$model" \
  --layers 4 --d-model 256 --heads 8 --kv-heads 8 --ff 512 --vocab 512 --context 8192
ids=$(spread_ids "$n" 512)

phase() { grep -o "profile: $1 [0-9.]*" "$work/stderr" | awk '{ print $3 }'; }

run() {  # run LABEL ARGS...: one table row
  local label=$1
  shift
  rm -rf "$work/out" "$work/x.safetensors"
  if /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$attnviz" "$@" --profile >"$work/stdout" 2>"$work/stderr"; then
    read -r wall rss user sys <"$work/time"
    printf '| `%s` | %.2f s | %.2f s | %.2f s | %.1f s | %.1f s | %d MiB |\n' "$label" "$(phase compute)" "$(phase render)" \
      "$(phase write)" "$wall" "$(echo "$user + $sys" | bc)" "$((rss / 1024))"
  else
    printf '| `%s` | failed: %s | | | | | |\n' "$label" "$(grep -m1 . "$work/stderr" | cut -c1-160)"
  fi
}

echo "| Command ($n tokens, layer 0, 8 heads) | compute (load + forward) | render | write | Wall | CPU | Peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
run "dump --model m8k.gguf --token-ids … --layers 0 -o x.safetensors" dump --model "$model" --token-ids "$ids" --layers 0 -o "$work/x.safetensors"
size=$(stat -c %s "$work/x.safetensors")
header=$(( $(od -An -t u8 -N 8 "$work/x.safetensors") + 8 ))
run "heatmaps --model m8k.gguf --token-ids … --layers 0" heatmaps --model "$model" --token-ids "$ids" --layers 0 -o "$work/out"
echo
echo "x.safetensors: $size bytes = header $header + 4·8·$n² ($((4 * 8 * n * n))): $([[ $size -eq $((header + 4 * 8 * n * n)) ]] && echo exact || echo NOT exact)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
