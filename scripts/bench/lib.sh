# shellcheck shell=bash disable=SC2154,SC2034  # here and work are the sourcing script's; root, attnviz, models, work are for it
# Shared helpers of the benchmark scripts, sourced by them (`. "$here/lib.sh"`, here: this folder).
# Sourcing sets root (the repository), attnviz ($root/build/attnviz) and models (the synthetic
# models' folder: $ATTNVIZ_BENCH_MODELS, default /tmp/attnviz-bench-models). Numbers are appended
# one a line to files named STEM_<field> (STEM is a path prefix such as "$work/qwen2.av"), for a
# later median; $work is the script's temporary folder.
#   bench_work PREFIX             sets work to a new folder /tmp/PREFIX.XXXXXX, removed on exit
#   need_attnviz                  exits (message on stderr) unless $attnviz is executable
#   need_bench_node               exits unless node-llama-cpp is installed in $here/node
#   median                        prints the median of the numbers on stdin, one a line
#   ratio A B                     prints A / B with two decimals
#   met VALUE OP GOAL             prints "yes" or "**no**" (OP is >= or <=)
#   phase PHASE FILE              prints the seconds of a `profile: PHASE` line of FILE (--profile's stderr)
#   spread_ids N VOCAB [FIRST]    prints N fixed comma-separated token ids: FIRST (default 1), then
#                                 ids spread over the vocabulary past its byte and control tokens
#   gguf_sizes MODEL TOKENS       prints "TENSORS LAYER ATTENTION PARAMS": bytes of the GGUF file's
#                                 tensors, of layer 0's weights in float32, of one layer's h·n² float32
#                                 attention at TOKENS tokens, and the parameter count
#   gguf_shape MODEL              prints "ARCHITECTURE LAYERS VOCAB": the GGUF file's general.architecture,
#                                 its ARCHITECTURE.block_count and its output's rows (output.weight's,
#                                 else the tied token_embd.weight's)
#   dump_check DUMP LAYERS COUNT VOCAB
#                                 exits (message on stderr) unless the model dump DUMP holds exactly
#                                 the layers LAYERS ("all": 0 … COUNT-1; or one number), says
#                                 model.num_layers COUNT, and holds last_logits of VOCAB finite
#                                 numbers (VOCAB 0: holds no last_logits); reads the dump's head and
#                                 scans the rest, so a dump of GBs costs seconds, not its size in RAM
#   attnviz_runs STEM MODEL IDS   one timing round of attnviz on one thread (prints nothing):
#                                 `dump --model --profile` (every layer's attention dumped) ->
#                                 STEM_{load,compute,write,format,total,wall,cpu,rss} (STEM_bytes: the
#                                 dump's size), then the whole model's pass, as llama.cpp's prompt
#                                 evaluation does it: `dump --layers LAST --logits --profile` (LAST
#                                 the last layer; an encoder, bert, has no logits: `--layers LAST`)
#                                 -> STEM_whole_{compute,cpu}; each dump checked by dump_check
#   llamacpp_eval STEM MODEL IDS  one round of llama.cpp's load + prompt evaluation on one thread
#                                 (node-llama-cpp, node/llama_eval.mjs; prints nothing) ->
#                                 STEM_{load,context,eval,total,backend,cpu,rss}
#   llamacpp_capture_build DEST   compiles llamacpp_capture_timing.c to DEST over llama.cpp 3.21.1's
#                                 libraries ($LLAMACPP_LIB_DIR, or npm's @node-llama-cpp/linux-x64
#                                 fetched once into the cache folder); prints nothing
#   llamacpp_capture TOOL STEM MODEL IDS [LAYERS]
#                                 one round of that tool's --timing mode (load + evaluation with every
#                                 layer's kq_soft_max captured), one thread, checking LAYERS layers
#                                 were captured where given; prints nothing -> STEM_{total,cpu,rss}
# Times are seconds, RSS KiB, all from GNU time and the tools' own reports.

root=$(cd "$here/../.." && pwd)
attnviz="$root/build/attnviz"
models=${ATTNVIZ_BENCH_MODELS:-/tmp/attnviz-bench-models}

bench_work() { work=$(mktemp -d "/tmp/$1.XXXXXX"); trap 'rm -rf "$work"' EXIT; }
need_attnviz() { [[ -x "$attnviz" ]] || { echo "build attnviz first: cmake --build build" >&2; exit 1; }; }
need_bench_node() {
  [[ -d "$here/node/node_modules/node-llama-cpp" ]] || { echo "run scripts/install_deps.sh --bench first" >&2; exit 1; }
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
ratio() { /usr/bin/python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }
met() { /usr/bin/python3 -c "import sys; v, g = float(sys.argv[1]), float(sys.argv[3]); print('yes' if (v >= g if sys.argv[2] == '>=' else v <= g) else '**no**')" "$1" "$2" "$3"; }
phase() { awk -v p="$1" '$1 == "profile:" && $2 == p {print $3}' "$2"; }

spread_ids() {
  /usr/bin/python3 -c "import sys; n, v, first = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]; print(','.join([first] + [str(259 + (i * 7919) % (v - 259)) if v > 300 else str(3 + (i * 37) % (v - 3)) for i in range(1, n)]))" "$1" "$2" "${3:-1}"
}

gguf_sizes() { /usr/bin/python3 "$here/gguf_header.py" sizes "$1" "$2"; }
gguf_shape() { /usr/bin/python3 "$here/gguf_header.py" shape "$1"; }

dump_check() {
  /usr/bin/python3 - "$@" <<'PY' || { echo "premise check failed: $1 is not the dump the timed run claims to have made" >&2; exit 1; }
import json, math, re, sys
path, layers, count, vocab = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
want = list(range(count)) if layers == "all" else [int(layers)]
marker, found, tail, head = b'"layers": [', [], b"", None
with open(path, "rb") as f:
    text = b""
    while head is None:  # the dump's head: everything before its "layers" member
        chunk = f.read(16 << 20)
        if not chunk: sys.exit(f"{path}: no \"layers\" member")
        text += chunk
        if (i := text.find(marker)) >= 0: head, tail = text[:i], text[i + len(marker):]
    while True:  # each layer record's own "layer": N (its nested members hold no such key)
        chunk = f.read(16 << 20)
        tail += chunk
        safe = len(tail) if not chunk else len(tail) - 32  # a key cut by the read is taken whole next time
        found += [int(m[1]) for m in re.finditer(rb'"layer": (-?\d+)', tail) if m.start() < safe]
        if not chunk: break
        tail = tail[safe:]
head = json.loads(head.rstrip().rstrip(b",") + b"}")
problems = []
if head.get("model", {}).get("num_layers") != count: problems.append(f"model.num_layers {head.get('model', {}).get('num_layers')}, not {count}")
if found != want: problems.append(f"layers {found[:8]}{'…' if len(found) > 8 else ''} ({len(found)}), not {want[:8]}{'…' if len(want) > 8 else ''} ({len(want)})")
logits = head.get("last_logits")
if vocab == 0 and logits is not None: problems.append("last_logits present, not asked for")
if vocab > 0 and not (isinstance(logits, list) and len(logits) == vocab and all(math.isfinite(x) for x in logits)):
    problems.append(f"last_logits: {'absent' if logits is None else f'{len(logits)} values'}, not {vocab} finite values")
if problems: sys.exit(f"{path}: " + "; ".join(problems))
PY
}

attnviz_runs() {
  local stem=$1 model=$2 list=$3 load compute arch layers vocab logits=()
  read -r arch layers vocab <<<"$(gguf_shape "$model")"
  # llama.cpp's side runs every layer and the logits. A pass without --logits stops at the last
  # selected layer's attention (src/model/decoder_model.cpp), so the whole model is the last layer
  # selected and the logits asked for; an encoder (bert) has no logits and runs every layer.
  [[ $arch == bert ]] && vocab=0 || logits=(--logits)
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$attnviz" dump --model "$model" --token-ids "$list" \
    --threads 1 --profile -o "$work/dump.json" 2>"$work/profile.txt" >/dev/null
  dump_check "$work/dump.json" all "$layers" 0  # every layer's attention, as the wall column says
  load=$(phase load "$work/profile.txt"); load=${load:-0}  # --model runs time the load inside compute
  compute=$(phase compute "$work/profile.txt")
  echo "$load" >>"${stem}_load"; echo "$compute" >>"${stem}_compute"
  phase write "$work/profile.txt" >>"${stem}_write"
  phase render "$work/profile.txt" >>"${stem}_format"  # a model dump's render: the layers' JSON text
  /usr/bin/python3 -c "import sys; print(float(sys.argv[1]) + float(sys.argv[2]))" "$load" "$compute" >>"${stem}_total"
  awk '{print $1}' "$work/time.txt" >>"${stem}_wall"
  awk '{print $2 + $3}' "$work/time.txt" >>"${stem}_cpu"
  awk '{print $4}' "$work/time.txt" >>"${stem}_rss"
  stat -c %s "$work/dump.json" >"${stem}_bytes"
  rm -f "$work/dump.json"
  # The whole model's forward pass (every layer, and the logits for a decoder) with one layer's
  # weights formatted as JSON instead of all of them: llama.cpp's work plus one layer's capture,
  # without most of the dump's number formatting.
  /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$attnviz" dump --model "$model" --token-ids "$list" \
    --threads 1 --layers "$((layers - 1))" "${logits[@]}" --profile -o "$work/dump.json" 2>"$work/profile.txt" >/dev/null
  dump_check "$work/dump.json" "$((layers - 1))" "$layers" "$vocab"
  phase compute "$work/profile.txt" >>"${stem}_whole_compute"
  awk '{print $2 + $3}' "$work/time.txt" >>"${stem}_whole_cpu"
  rm -f "$work/dump.json"
}

llamacpp_eval() {
  local stem=$1 model=$2 list=$3
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" node "$here/node/llama_eval.mjs" "$model" "$list" 1 >"$work/llama.json"
  awk '{print $3}' "$work/time.txt" >>"${stem}_rss"
  /usr/bin/python3 - "$work/llama.json" "$stem" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert r["threads"] == 1, r
for key, value in (("load", r["load"]), ("context", r["context"]), ("eval", r["eval"]),
                   ("total", r["load"] + r["context"] + r["eval"]), ("backend", r["backend"]), ("cpu", r["cpu"])):
    open(f"{sys.argv[2]}_{key}", "a").write(f"{value}\n")
PY
}

llamacpp_capture_build() {
  # The capture tool declares llama.cpp 3.21.1's struct offsets (it checks them at start): that
  # version's libraries, fetched once as the reference tool's build.sh does.
  local cache=${XDG_CACHE_HOME:-$HOME/.cache}/llamacpp-attention/node-llama-cpp-linux-x64-3.21.1
  local lib=${LLAMACPP_LIB_DIR:-$cache/package/bins/linux-x64}
  if [[ ! -f $lib/libllama.v0.4.0.so ]]; then
    mkdir -p "$cache"
    (cd "$cache" && npm pack --silent "@node-llama-cpp/linux-x64@3.21.1" >/dev/null && tar xzf node-llama-cpp-linux-x64-3.21.1.tgz)
    lib=$cache/package/bins/linux-x64
  fi
  gcc -O2 -std=c11 -Wall -Wextra -DDEFAULT_LIB_DIR="\"$lib\"" -o "$1" "$here/llamacpp_capture_timing.c" -ldl -lm
}

llamacpp_capture() {
  local tool=$1 stem=$2 model=$3 list=$4 layers=${5:-}
  /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$tool" --model "$model" --token-ids "$list" --threads 1 --timing \
    >"$work/capture.json"
  awk '{print $1 + $2}' "$work/time.txt" >>"${stem}_cpu"
  awk '{print $3}' "$work/time.txt" >>"${stem}_rss"
  /usr/bin/python3 - "$work/capture.json" "$stem" "$layers" <<'PY'
import json, sys
c = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert c["threads"] == 1 and (not sys.argv[3] or c["layers_captured"] == int(sys.argv[3])), c
open(sys.argv[2] + "_total", "a").write("%f\n" % (c["load"] + c["context"] + c["eval"]))
PY
}
