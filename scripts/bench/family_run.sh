#!/usr/bin/env bash
# Every family's speed and memory against llama.cpp (issue 25): a synthetic Q8_0 GGUF of each real
# small model's shapes, 512 tokens, one thread each, the same file, ROUNDS interleaved rounds:
#   qwen2   Qwen 2.5 0.5B (24 layers, d_model 896, 14 heads on 2 KV heads, ff 4864, vocab 151936, tied,
#           Q/K/V biases; scripts/gguf_writer.py --arch qwen2)
#   gemma3  Gemma 3 1B (26 layers, d_model 1152, 4 heads on 1 KV head, head size 256, ff 6912, vocab
#           262144, tied, window 512; scripts/bench/family_shapes.py)
#   gpt2    GPT-2 124M (12 layers, d_model 768, 12 heads, ff 3072, vocab 50257, 1024 learned positions;
#           scripts/bench/family_shapes.py)
#   bert    BERT base (12 layers, d_model 768, 12 heads, ff 3072, vocab 30522, 512 positions, post-LN
#           encoder; scripts/bert_gguf_writer.py --type q8_0)
# attnviz: `dump --model … --threads 1`: its compute phase (load + forward + every layer's attention
# captured) for wall, its peak RSS; CPU: the whole process of `dump --layers 0` (which runs every layer).
# llama.cpp: node-llama-cpp's load + context + prompt evaluation (scripts/bench/node/llama_eval.mjs);
# for bert (an encoder, which that script cannot evaluate) the reference capture tool's timing mode
# (scripts/bench/llamacpp_capture_timing.c --timing: load + llama_encode with kq_soft_max captured
# into memory). Rewrites the "## Decoder families" section of scripts/bench/RESULTS.md up to the next
# "## " heading (model_run.sh and run.sh keep it).
#   scripts/bench/family_run.sh [ROUNDS] [FAMILY ...]   (after building build/attnviz and
#   scripts/install_deps.sh --bench)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
attnviz="$root/build/attnviz"
rounds=${1:-3}
shift || true
families=("$@")
[[ ${#families[@]} -gt 0 ]] || families=(qwen2 gemma3 gpt2 bert)
models=${ATTNVIZ_BENCH_MODELS:-/tmp/attnviz-bench-models}
out="$here/RESULTS.md"
work=$(mktemp -d /tmp/attnviz-family-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
[[ -x "$attnviz" ]] || { echo "build attnviz first: cmake --build build" >&2; exit 1; }
[[ -d "$here/node/node_modules/node-llama-cpp" ]] || { echo "run scripts/install_deps.sh --bench first" >&2; exit 1; }
# The capture tool declares llama.cpp 3.21.1's struct offsets (it checks them at start): that
# version's libraries, fetched once as the reference tool's build.sh does (llama32_run.sh too).
cache=${XDG_CACHE_HOME:-$HOME/.cache}/llamacpp-attention/node-llama-cpp-linux-x64-3.21.1
lib=${LLAMACPP_LIB_DIR:-$cache/package/bins/linux-x64}
if [[ ! -f $lib/libllama.v0.4.0.so ]]; then
  mkdir -p "$cache"
  (cd "$cache" && npm pack --silent "@node-llama-cpp/linux-x64@3.21.1" >/dev/null && tar xzf node-llama-cpp-linux-x64-3.21.1.tgz)
  lib=$cache/package/bins/linux-x64
fi
gcc -O2 -std=c11 -Wall -Wextra -DDEFAULT_LIB_DIR="\"$lib\"" -o "$work/capture" "$here/llamacpp_capture_timing.c" -ldl -lm
mkdir -p "$models"

model_of() {
  case $1 in
    qwen2) echo "$models/qwen25-05b-shape-q8_0.gguf" ;;
    gemma3) echo "$models/gemma3-1b-shape-q8_0.gguf" ;;
    gpt2) echo "$models/gpt2-124m-shape-q8_0.gguf" ;;
    bert) echo "$models/bert-base-shape-q8_0.gguf" ;;
  esac
}
vocab_of() { case $1 in qwen2) echo 151936 ;; gemma3) echo 262144 ;; gpt2) echo 50257 ;; bert) echo 30522 ;; esac; }
write_model() {
  case $1 in
    qwen2) /usr/bin/python3 "$root/scripts/gguf_writer.py" "$2" --arch qwen2 --layers 24 --d-model 896 --heads 14 \
             --kv-heads 2 --ff 4864 --vocab 151936 --context 32768 --type q8_0 ;;
    gemma3|gpt2) /usr/bin/python3 "$here/family_shapes.py" "$2" "$1" ;;
    bert) /usr/bin/python3 "$root/scripts/bert_gguf_writer.py" "$2" --layers 12 --d-model 768 --heads 12 --ff 3072 \
            --vocab 30522 --context 512 --type q8_0 ;;
  esac
}

for f in "${families[@]}"; do
  model=$(model_of "$f")
  [[ -f "$model" ]] || write_model "$f" "$model" >/dev/null
done

for round in $(seq "$rounds"); do
  for f in "${families[@]}"; do
    model=$(model_of "$f")
    vocab=$(vocab_of "$f")
    # A first id the family reads as a start (1; BERT's [CLS] is 2), then ids spread over the vocabulary.
    ids=$(/usr/bin/python3 -c "print(','.join(['$([[ $f == bert ]] && echo 2 || echo 1)'] + [str(259 + (i * 7919) % ($vocab - 259)) for i in range(1, 512)]))")
    /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$attnviz" dump --model "$model" --token-ids "$ids" --threads 1 \
      --profile -o "$work/dump.json" 2>"$work/profile.txt" >/dev/null
    awk '$1 == "profile:" && $2 == "compute" {print $3}' "$work/profile.txt" >>"$work/$f.av_compute"
    awk '{print $3}' "$work/time.txt" >>"$work/$f.av_rss"
    stat -c %s "$work/dump.json" >"$work/$f.dump_bytes"
    rm -f "$work/dump.json"
    /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$attnviz" dump --model "$model" --token-ids "$ids" --threads 1 \
      --layers 0 -o "$work/dump.json" >/dev/null 2>&1
    awk '{print $1 + $2}' "$work/time.txt" >>"$work/$f.av_cpu"
    rm -f "$work/dump.json"
    if [[ $f == bert ]]; then
      /usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$work/capture" --model "$model" --token-ids "$ids" --threads 1 \
        --timing >"$work/llama.json"
      /usr/bin/python3 - "$work" "$f" <<'PY'
import json, sys
w, f = sys.argv[1:3]
c = json.loads(open(w + "/llama.json").read().strip().splitlines()[-1])
assert c["threads"] == 1, c
t = open(w + "/time.txt").read().split()
open("%s/%s.ll_total" % (w, f), "a").write("%f\n" % (c["load"] + c["context"] + c["eval"]))
open("%s/%s.ll_cpu" % (w, f), "a").write("%f\n" % (float(t[0]) + float(t[1])))
PY
    else
      /usr/bin/time -f "%U %S %M" -o "$work/time.txt" node "$here/node/llama_eval.mjs" "$model" "$ids" 1 >"$work/llama.json"
      /usr/bin/python3 - "$work" "$f" <<'PY'
import json, sys
w, f = sys.argv[1:3]
r = json.loads(open(w + "/llama.json").read().strip().splitlines()[-1])
assert r["threads"] == 1, r
open("%s/%s.ll_total" % (w, f), "a").write("%f\n" % (r["load"] + r["context"] + r["eval"]))
open("%s/%s.ll_cpu" % (w, f), "a").write("%f\n" % r["cpu"])
PY
    fi
    awk '{print $3}' "$work/time.txt" >>"$work/$f.ll_rss"
  done
done

# The memory bound (docs/models.md "Memory and speed"): 1.5 × (the file's tensors, mapped + one layer's
# weights in float32 + one layer's h·n² attention in float32) + the dump's JSON text, which a dump of
# every layer holds until it is written.
for f in "${families[@]}"; do
  /usr/bin/python3 - "$(model_of "$f")" >"$work/$f.sizes" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read(64 << 20)  # the header: metadata (a 262144-piece vocabulary) and tensor infos
pos = 24
def take(fmt):
    global pos
    v = struct.unpack_from(fmt, data, pos); pos += struct.calcsize(fmt); return v[0]
def string():
    global pos
    n = take("<Q"); s = data[pos:pos + n]; pos += n; return s.decode("utf-8", "replace")
sizes = {0: 4, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8, 1: 1, 2: 2, 3: 2}
def skip(kind):
    global pos
    if kind == 8: string()
    elif kind == 9:
        element, count = take("<I"), take("<Q")
        for _ in range(count): skip(element)
    else: pos += sizes[kind]
n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
heads = 0
for _ in range(n_kv):
    key = string(); kind = take("<I")
    if kind in (4, 5) and key.endswith(".attention.head_count"): heads = take("<I")
    else: skip(kind)
total = layer = 0
for _ in range(n_tensors):
    name = string(); dims = [take("<Q") for _ in range(take("<I"))]; kind = take("<I"); take("<Q")
    count = 1
    for d in dims: count *= d
    total += count * 4 if kind == 0 else count * 2 if kind == 1 else count // 32 * 34
    if name.startswith("blk.0."): layer += count * 4
n = 512
print(total, layer, heads * n * n * 4)
PY
done

section=$(/usr/bin/python3 - "$work" "$(git -C "$root" rev-parse --short HEAD)" "$(date -u +%Y-%m-%d)" "$(cut -d' ' -f1-3 /proc/loadavg)" "${families[@]}" <<'PY'
import statistics, sys
w, commit, day, load = sys.argv[1:5]
families = sys.argv[5:]
names = {"qwen2": "Qwen 2.5 0.5B", "gemma3": "Gemma 3 1B", "gpt2": "GPT-2 124M", "bert": "BERT base"}
v = lambda f, name: [float(x) for x in open("%s/%s.%s" % (w, f, name)) if x.strip()]
med = lambda f, name: statistics.median(v(f, name))
rounds = len(v(families[0], "av_compute"))
print("## Decoder families\n")
print("Generated by `scripts/bench/family_run.sh` on %s (commit %s), which rewrites this section; %d interleaved round%s, medians; load average %s on 2 shared cores (wall times are noisy on this shared machine; CPU times are the comparison)." % (day, commit, rounds, "" if rounds == 1 else "s", load))
print("Models: synthetic Q8_0 GGUF files of each real model's shapes (random weights; the script's header lists the shapes), 512 tokens, one thread each, the same file.")
print("attnviz: `dump --model … --threads 1`, its compute phase (load + forward + every layer's attention captured) for wall and its peak RSS; CPU: the whole process of `dump --layers 0` (every layer runs). llama.cpp: node-llama-cpp's load + context + prompt evaluation (scripts/bench/node/llama_eval.mjs); BERT: the capture tool's timing mode (load + encode, scripts/bench/llamacpp_capture_timing.c), CPU of the process.")
print("Memory bound: 1.5 × (the file's tensors + one layer's weights in float32 + one layer's h·n² attention in float32) + the dump's JSON text (docs/models.md \"Memory and speed\").\n")
print("| family | attnviz CPU | llama.cpp CPU | CPU ratio | attnviz wall | llama.cpp wall | wall ratio | attnviz peak RSS | bound | llama.cpp peak RSS |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for f in families:
    total, layer, attention = [int(x) for x in open("%s/%s.sizes" % (w, f)).read().split()]
    dump = int(open("%s/%s.dump_bytes" % (w, f)).read())
    bound = 1.5 * (total + layer + attention) + dump
    rss = med(f, "av_rss") * 1024
    cpu, wall = med(f, "av_cpu") / med(f, "ll_cpu"), med(f, "av_compute") / med(f, "ll_total")
    print("| %s | %.0f ms | %.0f ms | **%.2f** | %.0f ms | %.0f ms | %.2f | %.0f MB (%.2f of the bound) | %.0f MB | %.0f MB |" % (
        names[f], med(f, "av_cpu") * 1e3, med(f, "ll_cpu") * 1e3, cpu, med(f, "av_compute") * 1e3, med(f, "ll_total") * 1e3, wall,
        rss / 1e6, rss / bound, bound / 1e6, med(f, "ll_rss") * 1024 / 1e6))
PY
)
printf '%s\n' "$section" >"$work/section.md"
if [[ -f "$out" ]] && grep -q '^## Decoder families' "$out"; then
  # Only this section, up to the next "## " heading: the sections after it stay.
  awk -v f="$work/section.md" '/^## Decoder families/ { while ((getline l < f) > 0) print l; print ""; skip = 1; next }
    skip && /^## / { skip = 0 } !skip' "$out" >"$out.new"
else
  { cat "$out" 2>/dev/null | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'; echo; echo "$section"; } >"$out.new"
fi
mv "$out.new" "$out"
echo "$section"
