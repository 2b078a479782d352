#!/usr/bin/env bash
# Issue 23's Llama 3.2 1B shape: a synthetic llama GGUF (16 layers, d_model 2048, 32 heads on 8
# key/value heads, feed-forward 8192, vocabulary 128256, tied output; Q8_0, written once by
# scripts/gguf_writer.py) at N tokens, one thread each, ROUNDS interleaved rounds of three runs:
#   attnviz   `dump --model … --threads 1 --profile`: its compute phase (load + forward + every
#             layer's attention captured); CPU: the whole process of `dump --layers 15 --logits`
#             (every layer and the logits, as llama.cpp's evaluation; a pass without --logits stops
#             at the last selected layer's attention), each dump checked by lib.sh's dump_check
#   capture   llama.cpp (3.21.1) capturing every layer's kq_soft_max through the eval callback into memory
#             (scripts/bench/llamacpp_capture_timing.c --timing: the reference tool, writing no JSON)
#   plain     llama.cpp's prompt evaluation through node-llama-cpp (3.22.1) (scripts/bench/node/llama_eval.mjs)
# Prints a Markdown section for scripts/bench/RESULTS.md.
#   scripts/bench/llama32_run.sh [TOKENS] [ROUNDS]   (default 512 2; after building build/attnviz
#   and scripts/install_deps.sh --bench; LLAMACPP_LIB_DIR: another folder of llama.cpp's libraries)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz, models and the shared helpers
tokens=${1:-512}
rounds=${2:-2}
bench_work attnviz-llama32-bench
need_attnviz
need_bench_node
mkdir -p "$models"
model="$models/llama32-1b-shape-q8_0.gguf"
[[ -f "$model" ]] || /usr/bin/python3 "$root/scripts/gguf_writer.py" "$model" --arch llama --layers 16 --d-model 2048 \
  --heads 32 --kv-heads 8 --ff 8192 --vocab 128256 --context 8192 --type q8_0
llamacpp_capture_build "$work/capture"
ids=$(/usr/bin/python3 -c "print(','.join(['1'] + [str(259 + (i * 7919) % (128256 - 259)) for i in range($tokens - 1)]))")

for round in $(seq "$rounds"); do
  attnviz_runs "$work/av" "$model" "$ids"
  llamacpp_capture "$work/capture" "$work/cap" "$model" "$ids" 16
  llamacpp_eval "$work/ll" "$model" "$ids"
done

/usr/bin/python3 - "$work" "$(git -C "$root" rev-parse --short HEAD)" "$(date -u +%Y-%m-%d)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$tokens" <<'PY'
import statistics, sys
w, commit, day, load, tokens = sys.argv[1:6]
v = lambda name: [float(x) for x in open(w + "/" + name) if x.strip()]
med = lambda name: statistics.median(v(name))
span = lambda name, k=1e3: "%.0f–%.0f" % (min(v(name)) * k, max(v(name)) * k)
print("### %s tokens\n" % tokens)
print("`scripts/bench/llama32_run.sh %s %d` on %s (commit %s); %d interleaved rounds, medians (min–max); load average %s on 2 shared cores.\n" % (tokens, len(v("av_compute")), day, commit, len(v("av_compute")), load))
print("| | attnviz | llama.cpp capture | ratio | llama.cpp plain | ratio |")
print("| --- | --- | --- | --- | --- | --- |")
print("| wall | %.0f ms (%s) | %.0f ms (%s) | **%.2f** | %.0f ms (%s) | **%.2f** |" % (med("av_compute") * 1e3, span("av_compute"), med("cap_total") * 1e3, span("cap_total"), med("av_compute") / med("cap_total"), med("ll_total") * 1e3, span("ll_total"), med("av_compute") / med("ll_total")))
print("| CPU | %.0f ms (%s) | %.0f ms (%s) | **%.2f** | %.0f ms (%s) | **%.2f** |" % (med("av_whole_cpu") * 1e3, span("av_whole_cpu"), med("cap_cpu") * 1e3, span("cap_cpu"), med("av_whole_cpu") / med("cap_cpu"), med("ll_cpu") * 1e3, span("ll_cpu"), med("av_whole_cpu") / med("ll_cpu")))
print("| peak RSS | %.0f MB | %.0f MB | %.2f | %.0f MB (node included) | %.2f |" % (med("av_rss") / 1024, med("cap_rss") / 1024, med("av_rss") / med("cap_rss"), med("ll_rss") / 1024, med("av_rss") / med("ll_rss")))
PY
