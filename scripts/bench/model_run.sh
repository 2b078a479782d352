#!/usr/bin/env bash
# Whole-model benchmarks (attnviz --model): speed against llama.cpp (node-llama-cpp's prebuilt CPU
# libraries, one thread each, same file), a Q8_0 copy, peak memory on a ~0.8B-parameter model and
# heatmaps end to end against a numpy + torch + matplotlib peer. Rewrites the "## Whole models"
# section at the end of scripts/bench/RESULTS.md (run.sh keeps it when it rewrites the rest).
#   scripts/bench/model_run.sh [ROUNDS]     (after building build/attnviz and
#                                            scripts/install_deps.sh --bench; ~30 minutes)
# Synthetic models are written once into $ATTNVIZ_BENCH_MODELS (default /tmp/attnviz-bench-models,
# ~4 GB) by scripts/gguf_writer.py with fixed seeds and reused by later runs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz, models and the shared helpers
rounds=${1:-5}
py="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3"
work=$(mktemp -d /tmp/attnviz-model-bench.XXXXXX)
[[ -n "${ATTNVIZ_BENCH_KEEP:-}" ]] || trap 'rm -rf "$work"' EXIT  # ATTNVIZ_BENCH_KEEP=1 keeps the raw timings
out="$here/RESULTS.md"
need_attnviz
need_bench_node
mkdir -p "$models"

stories="$root/data/stories260k/stories260K.gguf"
syn_args=(--layers 12 --d-model 768 --heads 12 --kv-heads 12 --ff 2048 --vocab 32000)
big_args=(--layers 16 --d-model 2048 --heads 32 --kv-heads 8 --ff 5632 --vocab 32000)
[[ -f "$models/syn12-f32.gguf" ]] || $py "$root/scripts/gguf_writer.py" "$models/syn12-f32.gguf" "${syn_args[@]}"
[[ -f "$models/syn12-q8_0.gguf" ]] || $py "$root/scripts/gguf_writer.py" "$models/syn12-q8_0.gguf" "${syn_args[@]}" --type q8_0
[[ -f "$models/syn16-2048-f32.gguf" ]] || $py "$root/scripts/gguf_writer.py" "$models/syn16-2048-f32.gguf" "${big_args[@]}"

# BOS then ids spread over the vocabulary (spread_ids, lib.sh), fixed.
ids512_stories=$(spread_ids 512 512)
ids512=$(spread_ids 512 32000)
ids32_stories=$(spread_ids 32 512)

stats() {  # stats FILE: median min max count of the numbers in FILE
  /usr/bin/python3 -c "
import statistics, sys
v = [float(l) for l in open(sys.argv[1]) if l.strip()]
print(f'{statistics.median(v):.6f} {min(v):.6f} {max(v):.6f} {len(v)}')" "$1"
}
ms() { /usr/bin/python3 -c "import sys; print(f'{float(sys.argv[1]) * 1e3:.0f}')" "$1"; }

# speed NAME MODEL IDS: ROUNDS interleaved pairs of runs, attnviz dump (--threads 1, --profile)
# then llama.cpp's load + prompt evaluation (one thread). Writes $work/NAME.{av,ll}_<field>.
speed() {
  local name=$1 model=$2 list=$3
  for _ in $(seq "$rounds"); do
    attnviz_runs "$work/$name.av" "$model" "$list"
    llamacpp_eval "$work/$name.ll" "$model" "$list"
  done
}

echo "1: stories260K, 512 tokens"
speed stories "$stories" "$ids512_stories"
echo "1: synthetic 12 x 768, f32, 512 tokens"
speed syn_f32 "$models/syn12-f32.gguf" "$ids512"
echo "2: synthetic 12 x 768, Q8_0, 512 tokens"
speed syn_q8 "$models/syn12-q8_0.gguf" "$ids512"

echo "3: memory, synthetic 16 x 2048, 512 tokens"
rss_kib() { /usr/bin/time -f "%M" -o "$work/rss.txt" "$@" >/dev/null 2>"$work/rss_err.txt"; cat "$work/rss.txt"; }
big="$models/syn16-2048-f32.gguf"
dump_rss=$(rss_kib "$attnviz" dump --model "$big" --token-ids "$ids512" -o "$work/big.json" --profile)
read -r _ big_layers _ <<<"$(gguf_shape "$big")"
dump_check "$work/big.json" all "$big_layers" 0  # the row's premise: every layer's attention dumped
cp "$work/rss_err.txt" "$work/big_dump_profile.txt"; rm -f "$work/big.json"
heat_rss=$(rss_kib "$attnviz" heatmaps --model "$big" --token-ids "$ids512" -o "$work/big_heat" --profile)
cp "$work/rss_err.txt" "$work/big_heat_profile.txt"
for l in $(seq 0 $((big_layers - 1))); do  # every layer drawn
  [[ -f "$work/big_heat/layer_$l/grid.png" ]] || { echo "premise check failed: heatmaps drew no layer_$l/grid.png" >&2; exit 1; }
done
read -r tensors_b layer_b weights_b big_params <<<"$(gguf_sizes "$big" 512)"
# Pictures being encoded: attnviz encodes one layer's PNGs on as many workers as cores (--threads
# default), the grid first, so at most that many RGB rasters at once: the largest ones (IHDR sizes).
pictures_b=$(/usr/bin/python3 - "$work/big_heat" <<'PY'
import glob, os, struct, sys
sizes = sorted((w * hh * 3 for w, hh in (struct.unpack(">II", open(p, "rb").read()[16:24])
                for p in glob.glob(os.path.join(sys.argv[1], "layer_0", "*.png")))), reverse=True)
print(sum(sizes[:os.cpu_count()]))
PY
)
bound_dump_b=$(/usr/bin/python3 -c "print(int(1.5 * ($tensors_b + $layer_b + $weights_b)))")
bound_b=$(/usr/bin/python3 -c "print(int(1.5 * ($tensors_b + $layer_b + $weights_b + $pictures_b)))")
png_mib=$(du -sm "$work/big_heat" | cut -f1); png_count=$(find "$work/big_heat" -name '*.png' | wc -l)
rm -rf "$work/big_heat"

echo "4: heatmaps end to end, stories260K, 32 tokens"
for round in $(seq 3); do
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$attnviz" heatmaps --model "$stories" --token-ids "$ids32_stories" \
      -o "$work/e2e_av" >/dev/null 2>&1
    awk '{print $1}' "$work/time.txt" >>"$work/e2e.av_wall"; awk '{print $2 + $3}' "$work/time.txt" >>"$work/e2e.av_cpu"
    /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$attnviz" heatmaps --model "$stories" --token-ids "$ids32_stories" \
      -o "$work/e2e_av1" --threads 1 >/dev/null 2>&1
    awk '{print $1}' "$work/time.txt" >>"$work/e2e.av1_wall"; awk '{print $2 + $3}' "$work/time.txt" >>"$work/e2e.av1_cpu"
  done
  /usr/bin/time -f "%e %U %S" -o "$work/time.txt" $py "$here/peer_model_heatmaps.py" "$stories" "$ids32_stories" \
    "$work/e2e_py" >/dev/null 2>&1
  awk '{print $1}' "$work/time.txt" >>"$work/e2e.py_wall"; awk '{print $2 + $3}' "$work/time.txt" >>"$work/e2e.py_cpu"
done
e2e_av_pngs=$(find "$work/e2e_av" -name '*.png' | wc -l); e2e_py_pngs=$(find "$work/e2e_py" -name '*.png' | wc -l)

echo "writing $out"
get() { stats "$work/$1" | awk -v f="$2" '{print $f}'; }  # get FILE FIELD(1 median, 2 min, 3 max, 4 count)
spread() { echo "$(ms "$(get "$1" 2)")–$(ms "$(get "$1" 3)")"; }
row() {  # row NAME LABEL
  local n=$1 label=$2 av ll avc llc avw
  av=$(get "$n.av_total" 1); ll=$(get "$n.ll_total" 1); avc=$(get "$n.av_whole_cpu" 1); llc=$(get "$n.ll_cpu" 1); avw=$(get "$n.av_wall" 1)
  echo "| $label | $(ms "$av") ms ($(spread "$n.av_total")) | $(ms "$ll") ms (load $(ms "$(get "$n.ll_load" 1)") + context $(ms "$(get "$n.ll_context" 1)") + eval $(ms "$(get "$n.ll_eval" 1)"); $(spread "$n.ll_total")) | **$(ratio "$av" "$ll")** | $(met "$(ratio "$av" "$ll")" "<=" 1.0) | $(ms "$avc") ms ($(spread "$n.av_whole_cpu")) | $(ms "$llc") ms ($(spread "$n.ll_cpu")) | **$(ratio "$avc" "$llc")** | $(met "$(ratio "$avc" "$llc")" "<=" 1.0) | $(ms "$avw") ms ($(spread "$n.av_wall")): $(ratio "$avw" "$ll") |"
}
section=$(
  echo "## Whole models"
  echo
  echo "Generated by \`scripts/bench/model_run.sh\` on $(date -u +%Y-%m-%d) (commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" status --porcelain src | grep -q . && echo ", plus uncommitted changes in src/" || true)), which rewrites this section. Reproduce:"
  echo
  echo '```'
  echo 'bash scripts/install_deps.sh --bench && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2 --target attnviz && scripts/bench/model_run.sh'
  echo '```'
  echo
  echo "llama.cpp: node-llama-cpp $(node -p "require('$here/node/node_modules/node-llama-cpp/package.json').version") with its prebuilt CPU libraries"
  echo "(@node-llama-cpp/linux-x64, llama.cpp release $(node -p "require('$here/node/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/_nlcBuildMetadata.json').buildOptions.llamaCpp.release" 2>/dev/null || echo unknown)), driven by scripts/bench/node/llama_eval.mjs: loadModel"
  echo "(gpuLayers 0, mmap), createContext (threads 1, context and batch size 512, one sequence, its default"
  echo "flash-attention setting), then evaluateWithoutGeneratingNewTokens on the ids: one batch, no sampling."
  echo "attnviz: \`attnviz dump --model M --token-ids … --threads 1 --profile\`, its compute phase: the model's load"
  echo "and the forward pass with every layer's h·n·n attention weights captured. Turning those weights into JSON"
  echo "text, done as each layer finishes, is timed apart (its \`render\` phase); the last column is the whole \`dump\` process,"
  echo "the JSON file written, against the same llama.cpp time (which keeps no weights and writes nothing). Both read the same file."
  echo "Load average during the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores — the machine is shared, so"
  echo "$rounds interleaved pairs per row (attnviz run, then llama.cpp run); medians, with min–max."
  echo
  echo "Speed goal: attnviz / llama.cpp ≤ 1.0. Wall: attnviz \`dump\`'s compute phase (load + forward + capture)"
  echo "vs llama.cpp's load + context + prompt evaluation. CPU: user + system CPU seconds of the whole"
  echo "attnviz process for \`dump --layers LAST --logits\` (LAST the model's last layer: the whole model's forward pass,"
  echo "every layer and the logits, one layer formatted as JSON; a pass without \`--logits\` stops at the last selected"
  echo "layer's attention, so \`--layers 0\` would time one layer) vs node's CPU seconds over llama.cpp's load + context +"
  echo "evaluation. Each timed dump is checked to hold the layers (and \`last_logits\`) it claims (lib.sh's dump_check). On this loaded"
  echo "machine wall times are several times the CPU times and swing from run to run; CPU times are the steadier comparison."
  echo
  echo "| Target | attnviz wall, median (min–max) | llama.cpp wall, median (min–max) | Ratio wall | Met | attnviz CPU | llama.cpp CPU | Ratio CPU | Met | whole \`dump\` process wall (JSON written): ratio |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  row stories "1. stories260K (f32, 5 layers, d_model 64), 512 tokens, one thread"
  row syn_f32 "1. synthetic LLaMA 12 layers, d_model 768, ff 2048, vocab 32000 (f32, $(( $(stat -c %s "$models/syn12-f32.gguf") / 1000000 )) MB), 512 tokens, one thread"
  row syn_q8 "2. the same model in Q8_0 ($(( $(stat -c %s "$models/syn12-q8_0.gguf") / 1000000 )) MB), 512 tokens, one thread"
  echo
  echo "| Target | attnviz | Peer or bound | Ratio | Goal | Met |"
  echo "| --- | --- | --- | --- | --- | --- |"
  echo "| 3. peak RSS, synthetic 16 layers, d_model 2048, ff 5632, 32 heads / 8 kv heads, vocab 32000 ($(/usr/bin/python3 -c "print(f'{$big_params / 1e9:.2f}')")B parameters, f32, $(( $(stat -c %s "$big") / 1000000 )) MB), 512 tokens: \`dump --model\` | $((dump_rss / 1024)) MiB | bound $((bound_dump_b / 1048576)) MiB (no pictures) | **$(/usr/bin/python3 -c "print(f'{$dump_rss * 1024 / $bound_dump_b:.2f}')")** of the bound | ≤ 1.0 | $(met "$(/usr/bin/python3 -c "print($dump_rss * 1024 / $bound_dump_b)")" "<=" 1.0) |"
  echo "| 3. the same with \`heatmaps --model\` | $((heat_rss / 1024)) MiB | bound $((bound_b / 1048576)) MiB | **$(/usr/bin/python3 -c "print(f'{$heat_rss * 1024 / $bound_b:.2f}')")** of the bound | ≤ 1.0 | $(met "$(/usr/bin/python3 -c "print($heat_rss * 1024 / $bound_b)")" "<=" 1.0) |"
  echo "| 4. \`heatmaps --model\` stories260K, 32 tokens ($e2e_av_pngs PNGs: 5 layers × grid + 8 heads) vs numpy GGUF reader + torch forward + matplotlib ($e2e_py_pngs PNGs), wall | $(ms "$(get e2e.av_wall 1)") ms ($(spread e2e.av_wall)) | $(ms "$(get e2e.py_wall 1)") ms ($(spread e2e.py_wall)) | **$(ratio "$(get e2e.py_wall 1)" "$(get e2e.av_wall 1)")× faster** | ≥ 50× | $(met "$(ratio "$(get e2e.py_wall 1)" "$(get e2e.av_wall 1)")" ">=" 50) |"
  echo
  echo "- Other columns of the speed rows, medians: attnviz's render phase (the layers' JSON text)"
  echo "  stories260K $(ms "$(get stories.av_format 1)") ms, f32 $(ms "$(get syn_f32.av_format 1)") ms, Q8_0 $(ms "$(get syn_q8.av_format 1)") ms; write phase $(ms "$(get stories.av_write 1)"), $(ms "$(get syn_f32.av_write 1)"), $(ms "$(get syn_q8.av_write 1)") ms;"
  echo "  attnviz process CPU time (user + sys) of the full dump: $(ms "$(get stories.av_cpu 1)"), $(ms "$(get syn_f32.av_cpu 1)"), $(ms "$(get syn_q8.av_cpu 1)") ms;"
  echo "  compute phase of \`--layers LAST --logits\`: $(ms "$(get stories.av_whole_compute 1)"), $(ms "$(get syn_f32.av_whole_compute 1)"), $(ms "$(get syn_q8.av_whole_compute 1)") ms wall."
  echo "  node-llama-cpp's loading of its shared libraries (getLlama, not counted above): $(ms "$(get stories.ll_backend 1)") ms."
  echo "- 3: bound = 1.5 × (tensors mapped and used: $((tensors_b / 1048576)) MiB, the whole file's tensors, all of which a"
  echo "  forward pass reads + one layer in float32: $((layer_b / 1048576)) MiB + one layer's h·n·n weights: $((weights_b / 1048576)) MiB +"
  echo "  the pictures being encoded, for heatmaps: the $(nproc) largest RGB rasters of a layer (one per PNG worker, the grid"
  echo "  first): $((pictures_b / 1048576)) MiB) = $((bound_b / 1048576)) MiB for heatmaps, $((bound_dump_b / 1048576)) MiB for dump. heatmaps wrote $png_count PNGs, $png_mib MiB,"
  echo "  which it holds until the end (all files are committed together). Phases of those runs (default threads):"
  echo "  dump $(grep '^profile' "$work/big_dump_profile.txt" | tr '\n' ' ' | sed 's/profile: //g')"
  echo "  heatmaps $(grep '^profile' "$work/big_heat_profile.txt" | tr '\n' ' ' | sed 's/profile: //g')(render happens inside compute, layer by layer)"
  echo "- 4: 15 attnviz runs (default threads, $(nproc)) and 3 Python runs interleaved (5 + 1 per round); CPU time (user + sys), medians: attnviz"
  echo "  $(ms "$(get e2e.av_cpu 1)") ms, Python $(ms "$(get e2e.py_cpu 1)") ms (**$(ratio "$(get e2e.py_cpu 1)" "$(get e2e.av_cpu 1)")×**). With \`--threads 1\` (15 more runs in the same rounds):"
  echo "  wall $(ms "$(get e2e.av1_wall 1)") ms ($(spread e2e.av1_wall)), CPU $(ms "$(get e2e.av1_cpu 1)") ms: **$(ratio "$(get e2e.py_wall 1)" "$(get e2e.av1_wall 1)")×** faster than the peer by wall, **$(ratio "$(get e2e.py_cpu 1)" "$(get e2e.av1_cpu 1)")×** by CPU. The peer (scripts/bench/peer_model_heatmaps.py) maps the file with numpy,"
  echo "  runs the forward pass in torch float32 keeping each layer's softmax, and draws each layer's grid and"
  echo "  per-head PNGs with the same matplotlib code as the single-layer peer."
  if [[ -f "$here/model_notes.md" ]]; then echo; cat "$here/model_notes.md"; fi
)
families=$(sed -n '/^## Decoder families/,$p' "$out" 2>/dev/null || true)  # family_run.sh's section, kept last
if [[ -f "$out" ]] && grep -q '^## Whole models' "$out"; then
  sed -i '/^## Whole models/,$d' "$out"
fi
{ cat "$out" 2>/dev/null | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; echo; echo "$section"; [[ -z "$families" ]] || { echo; echo "$families"; }; } >"$out.new"
mv "$out.new" "$out"
echo "$section"
