#!/usr/bin/env bash
# census --corpus benchmarks (issue 22), on stories260K and the bundled corpus: 1000 texts of at
# most 64 tokens against the Python route (scripts/bench/peer_census.py: numpy forward + the same
# statistics), two shards under GNU parallel against one process (both --threads 1), and a short
# text with the default threads against --threads 1, alone and beside two busy jobs. Rewrites the
# "## Census over a corpus" section of scripts/bench/RESULTS.md (before "## Whole models").
#   scripts/bench/census_bench.sh [ROUNDS]   (after building build/attnviz; needs GNU parallel)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz, models and the shared helpers
rounds=${1:-3}
model="$root/data/stories260k/stories260K.gguf"
corpus="$root/data/corpus/stories260k_stories.txt"
out="$here/RESULTS.md"
work=$(mktemp -d /tmp/attnviz-census-bench.XXXXXX)
trap 'rm -rf "$work"; [[ -n "${busy:-}" ]] && kill $busy 2>/dev/null || true' EXIT
need_attnviz

# 1000 texts: the corpus twice over, each cut to 64 tokens, as token ids (both sides run the same ids).
while IFS= read -r line; do
  "$attnviz" tokenize --model "$model" --text "$line" --json |
    /usr/bin/python3 -c "import json, sys; print(json.dumps({'token_ids': json.load(sys.stdin)['token_ids'][:64]}))"
done < "$corpus" > "$work/ids520.jsonl"
cat "$work/ids520.jsonl" "$work/ids520.jsonl" | head -1000 > "$work/ids1000.jsonl"
tokens=$(/usr/bin/python3 -c "import json, sys; print(sum(len(json.loads(l)['token_ids']) for l in open(sys.argv[1])))" "$work/ids1000.jsonl")
# 5000 texts for the shard speed-up: GNU parallel's own start (~0.13 s of perl) and the merge are
# a fixed cost that a 0.9 s run cannot hide; a corpus five times larger shows what the split gives.
for _ in 1 2 3 4 5; do cat "$work/ids1000.jsonl"; done > "$work/ids5000.jsonl"

# cpu COMMAND...: "wall user+sys" seconds of one run (GNU time).
cpu() { /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > /dev/null 2>&1; awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"; }

# one_vs_two_shards CORPUS ONE TWO: wall seconds of one process on $work/CORPUS.jsonl (appended to
# $work/ONE) and of two shards under GNU parallel plus their merge (to $work/TWO), all --threads 1.
one_vs_two_shards() {
  local corpus="$work/$1.jsonl"
  rm -rf "$work/one" "$work/s0" "$work/s1" "$work/m"
  /usr/bin/time -f "%e" -o "$work/time" "$attnviz" census --model "$model" --corpus "$corpus" -o "$work/one" --threads 1 --quiet > /dev/null
  cat "$work/time" >> "$work/$2"
  /usr/bin/time -f "%e" -o "$work/time" sh -c "parallel -j 2 '$attnviz' census --model '$model' --corpus '$corpus' \
    --threads 1 --quiet --shard {}/2 -o '$work/s{}' ::: 0 1 && '$attnviz' census --merge '$work/s0' '$work/s1' -o '$work/m'" > /dev/null
  cat "$work/time" >> "$work/$3"
}

: > "$work/ours"; : > "$work/peer"; : > "$work/one"; : > "$work/two"; : > "$work/one.cpu"; : > "$work/shard.cpu"
for ((r = 0; r < rounds; r++)); do
  rm -rf "$work/a"
  cpu "$attnviz" census --model "$model" --corpus "$work/ids1000.jsonl" -o "$work/a" --threads 1 --quiet >> "$work/ours"
  OPENBLAS_NUM_THREADS=1 cpu /usr/bin/python3 "$here/peer_census.py" "$model" "$work/ids1000.jsonl" >> "$work/peer"
  one_vs_two_shards ids1000 one.t two.t
  one_vs_two_shards ids5000 one5.t two5.t
  # CPU time of one process and of each shard alone: what the split costs, and the speed-up two
  # free cores would give (one process's CPU over the larger shard's).
  rm -rf "$work/c" "$work/c0" "$work/c1"
  cpu "$attnviz" census --model "$model" --corpus "$work/ids1000.jsonl" -o "$work/c" --threads 1 --quiet | awk '{print $2}' >> "$work/one.cpu"
  largest=0
  for k in 0 1; do
    shard=$(cpu "$attnviz" census --model "$model" --corpus "$work/ids1000.jsonl" -o "$work/c$k" --threads 1 --quiet --shard $k/2 | awk '{print $2}')
    largest=$(/usr/bin/python3 -c "print(max($largest, $shard))")
  done
  echo "$largest" >> "$work/shard.cpu"
done
one_cpu=$(median < "$work/one.cpu"); shard_cpu=$(median < "$work/shard.cpu")
ours_cpu=$(awk '{print $2}' "$work/ours" | median); ours_wall=$(awk '{print $1}' "$work/ours" | median)
peer_cpu=$(awk '{print $2}' "$work/peer" | median); peer_wall=$(awk '{print $1}' "$work/peer" | median)
one=$(median < "$work/one.t"); two=$(median < "$work/two.t")
one5=$(median < "$work/one5.t"); two5=$(median < "$work/two5.t")

# A short text (16 tokens), default threads against --threads 1: 31 runs each, interleaved, timed
# to the microsecond; then the same beside one busy-looping job per core (every core taken).
# Also the CPU time (user + sys, getrusage of the children) of each side.
threads_runs() {
  /usr/bin/python3 - "$attnviz" "$model" "$work/d.json" <<'PY'
import resource, statistics, subprocess, sys, time
attnviz, model, out = sys.argv[1:4]
base = [attnviz, "dump", "--model", model, "--text", "Once upon a time, there was a little girl named Lily.", "-o", out]
times = {0: [], 1: []}
cpu = {0: [], 1: []}
def used():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for _ in range(31):
    for threads in (0, 1):
        before = used()
        start = time.perf_counter()
        subprocess.run(base + ["--threads", str(threads)], check=True, capture_output=True)
        times[threads].append(time.perf_counter() - start)
        cpu[threads].append(used() - before)
print("%.1f %.1f %.1f %.1f" % tuple(statistics.median(x[t]) * 1e3 for x in (times, cpu) for t in (0, 1)))
PY
}
read -r alone0 alone1 alone_cpu0 alone_cpu1 < <(threads_runs)
busy=""
for ((i = 0; i < $(nproc); i++)); do (while :; do :; done) & busy="$busy $!"; done
read -r busy0 busy1 busy_cpu0 busy_cpu1 < <(threads_runs)
kill $busy; busy=""

# Eigen's GEMM at one text's rows against texts stacked to 512 rows (would batching pay?).
g++ -O3 -march=native -DNDEBUG -std=c++20 -fopenmp -I/usr/include/eigen3 "$here/census_gemm.cpp" -o "$work/census_gemm"
gemm=$("$work/census_gemm")
gemm_one=$(echo "$gemm" | awk '$1 == "rows=56" {printf "%s%s", sep, $3; sep = "/"}')
gemm_stacked=$(echo "$gemm" | awk '$1 == "rows=512" {printf "%s%s", sep, $3; sep = "/"}')

load=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$root" rev-parse --short HEAD)
section=$(cat <<SECTION
## Census over a corpus

\`scripts/bench/census_bench.sh\` on $(date +%F) (commit $commit), $(nproc) cores shared with other jobs (load average
at the end: $load), medians of $rounds rounds; stories260K, 1000 texts of the bundled corpus cut to 64 tokens
($tokens tokens), given as token ids to both sides.

| Target | attnviz | other | Ratio | Goal |
| --- | --- | --- | --- | --- |
| 1000 texts, CPU time (user + sys) vs the numpy route (\`peer_census.py\`: numpy float32 forward, statistics vectorised over rows and heads, one BLAS thread) | $ours_cpu s | $peer_cpu s | **$(/usr/bin/python3 -c "print(f'{$peer_cpu / $ours_cpu:.1f}')")× faster** | ≥ 30× |
| the same, wall time | $ours_wall s | $peer_wall s | $(/usr/bin/python3 -c "print(f'{$peer_wall / $ours_wall:.1f}')")× | |
| two shards \`--threads 1\` under \`parallel -j 2\` + \`--merge\` vs one process \`--threads 1\`, wall | $two s | $one s | **$(/usr/bin/python3 -c "print(f'{$one / $two:.2f}')")×** | ≥ 1.7× |
| the same on 5000 texts (the 1000 five times), wall | $two5 s | $one5 s | **$(/usr/bin/python3 -c "print(f'{$one5 / $two5:.2f}')")×** | ≥ 1.7× |
| the same split (1000 texts), CPU time: one process vs the larger shard alone (the speed-up two free cores give) | $shard_cpu s | $one_cpu s | **$(/usr/bin/python3 -c "print(f'{$one_cpu / $shard_cpu:.2f}')")×** | ≥ 1.7× |
| short text (16 tokens, \`dump\`), default threads vs \`--threads 1\`, median wall of 31 | $alone0 ms | $alone1 ms | $(/usr/bin/python3 -c "print(f'{$alone0 / $alone1:.2f}')") (time ratio) | ≤ 1 |
| the same, median CPU time (user + sys) | $alone_cpu0 ms | $alone_cpu1 ms | $(/usr/bin/python3 -c "print(f'{$alone_cpu0 / max($alone_cpu1, 0.1):.2f}')") | ≤ 1 |
| the same beside $(nproc) busy jobs, wall | $busy0 ms | $busy1 ms | $(/usr/bin/python3 -c "print(f'{$busy0 / $busy1:.2f}')") (time ratio) | ≤ 1 |
| the same beside $(nproc) busy jobs, CPU time | $busy_cpu0 ms | $busy_cpu1 ms | $(/usr/bin/python3 -c "print(f'{$busy_cpu0 / max($busy_cpu1, 0.1):.2f}')") | ≤ 1 |
| Eigen GEMM, one core, stories260K's products X·W, W [64, 64] / [64, 172] / [172, 64], GFLOP/s: one text's 56 rows vs texts stacked to 512 (\`census_gemm.cpp\`) | $gemm_one | $gemm_stacked | | |

Threads. Every parallel region takes threads by its work, one per 100 Mflop (or per MiB of
JSON rows, or per million overview cells): \`threads_for_work\` in \`core/product_threads.hpp\`,
used by the feed-forward, the projections, the heads' loop, ALTI's rows (whose OpenMP region read
all cores whatever \`--threads\` said), the dump parser's rows and the overview's heads. A
16-token stories260K text starts no thread at all with the default threads (\`strace -f -e
trace=clone,clone3\`: none for dump, heatmaps, compare --census, attribute, dump --measure alti
(one before) and census), so the short-text rows run the same instructions as \`--threads 1\`:
the ratios above are the noise of a machine shared with other jobs, not a cost of threads
(wall beside 2 busy jobs, three more runs by hand the same day: 1.02, 1.07, 1.00; \`perf stat
-r 11\` task-clock quiet: 6.35 ms default, 7.30 ms \`--threads 1\`). This machine has no
instruction counters to show the paths equal. Before the first fix
(commit e2166d2) the short text took 120–190 ms with the default threads against 10 ms with
\`--threads 1\`: every feed-forward product of the 64-wide model was split over Eigen's OpenMP
threads, whose regions cost more than the product and stall for a time slice when the other
core is busy.

Shards need free cores: two processes on a machine whose 2 cores already run other jobs (load
average above) share the same CPU time as one, so the wall ratio measures the machine, not the
split; the CPU-time row is the speed-up two free cores give. The shards share nothing but their
inputs (each reads the corpus and the model itself). On 1000 texts the whole run is under a second
and the recipe's fixed costs show: GNU parallel's own start is ~0.13 s of perl, the merge ~0.03 s,
each shard's start ~0.03 s; on 5000 texts they are amortised as on any corpus worth sharding.

Per-text cost. The previous stop left 1.34 s of CPU for the 1000 texts; this stop (measured
on the old and new binaries alternately, same machine) cut it to about 0.85–0.9 s:
- a pass without logits stops at the last selected layer's attention: the last layer's
  feed-forward, V and W_O, and any later layer, fed nothing the census reads (a fifth of the
  products);
- the softmax and the statistics read each row's span of allowed keys only (\`RowSpans\`: a causal
  row's keys 0 … i), in chunks of 16 floats with no scalar remainder (Eigen sent up to 15 keys
  of every short row to scalar \`expf\`); a whole row keeps Eigen's own expression, bit for bit
  as before (a Q8_0 BERT's next layer quantises these outputs, and its match with llama.cpp
  moved from 7e-7 to 3e-3 with the chunked exp);
- the statistics in one pass per row in float lanes added into double every 256 keys (the
  previous pass copied each head to double and made five passes over whole rows), and
  TransformerLens's denominator from that pass's row sums instead of another pass over n²;
- the feed-forward multiplies by the kept decoded weights without copying them, RoPE's cos/sin
  come from a per-thread table, and decoder layers come head by head (one head's weights held).

Where the time goes now (\`perf record\`, share of the run): statistics ~17%, softmax ~14%,
Eigen's GEMM ~25% (packing included), the heads' small Q·Kᵀ and A·V products ~5%, allocation
and copies ~6%, the journal's JSON ~3%, norms and SwiGLU ~3%.

Why ≥ 30× is out of reach on this machine: 30× the numpy route is $(/usr/bin/python3 -c "print(f'{$peer_cpu / 30:.2f}')") s for the 1000
texts. The forward pass the census needs is 24.8 Gflop (per token 4 × 45 312 multiply-adds of
projections and SwiGLU in layers 0–3 plus Q and K of layer 4, and 8 heads' n × n × d_k products
per layer), and one core runs these products at 100–160 GFLOP/s (the GEMM row above): 0.16–0.25 s
before a single weight is normalised, a logarithm taken or a line written. The rest (softmax,
statistics, norms, RoPE, the journal, start-up ~0.03 s) would have to fit in what is left,
at most 0.07 s, a tenth of what it takes now. Batching texts does not change the products' speed
(the GEMM row above: 56 rows run within 5–20% of 512). The peer is not weakened to close the gap:
it is the vectorised numpy a user writes (per text, heads and rows vectorised, one BLAS thread).
SECTION
)
/usr/bin/python3 - "$out" "$section" <<'PY'
import re, sys
path, section = sys.argv[1], sys.argv[2].rstrip("\n") + "\n"
text = open(path).read()
text = re.sub(r"## Census over a corpus\n.*?(?=^## |\Z)", "", text, flags=re.S | re.M)
at = text.find("## Whole models")
text = (text[:at] + section + "\n" + text[at:]) if at >= 0 else text.rstrip("\n") + "\n\n" + section
open(path, "w").write(text)
PY
echo "$section"
