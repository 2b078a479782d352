#!/usr/bin/env bash
# census --corpus benchmarks (issue 22), on stories260K and the bundled corpus: 1000 texts of at
# most 64 tokens against the Python route (scripts/bench/peer_census.py: numpy forward + the same
# statistics), two shards under GNU parallel against one process (both --threads 1), and a short
# text with the default threads against --threads 1, alone and beside two busy jobs. Rewrites the
# "## Census over a corpus" section of scripts/bench/RESULTS.md (before "## Whole models").
#   scripts/bench/census_bench.sh [ROUNDS]   (after building build/attnviz; needs GNU parallel)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
attnviz="$root/build/attnviz"
rounds=${1:-3}
model="$root/data/stories260k/stories260K.gguf"
corpus="$root/data/corpus/stories260k_stories.txt"
out="$here/RESULTS.md"
work=$(mktemp -d /tmp/attnviz-census-bench.XXXXXX)
trap 'rm -rf "$work"; [[ -n "${busy:-}" ]] && kill $busy 2>/dev/null || true' EXIT
[[ -x "$attnviz" ]] || { echo "build attnviz first: cmake --build build" >&2; exit 1; }

# 1000 texts: the corpus twice over, each cut to 64 tokens, as token ids (both sides run the same ids).
while IFS= read -r line; do
  "$attnviz" tokenize --model "$model" --text "$line" --json |
    /usr/bin/python3 -c "import json, sys; print(json.dumps({'token_ids': json.load(sys.stdin)['token_ids'][:64]}))"
done < "$corpus" > "$work/ids520.jsonl"
cat "$work/ids520.jsonl" "$work/ids520.jsonl" | head -1000 > "$work/ids1000.jsonl"
tokens=$(/usr/bin/python3 -c "import json, sys; print(sum(len(json.loads(l)['token_ids']) for l in open(sys.argv[1])))" "$work/ids1000.jsonl")

# cpu COMMAND...: "wall user+sys" seconds of one run (GNU time).
cpu() { /usr/bin/time -f "%e %U %S" -o "$work/time" "$@" > /dev/null 2>&1; awk '{printf "%s %.2f\n", $1, $2 + $3}' "$work/time"; }
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

: > "$work/ours"; : > "$work/peer"; : > "$work/one"; : > "$work/two"; : > "$work/one.cpu"; : > "$work/shard.cpu"
for ((r = 0; r < rounds; r++)); do
  rm -rf "$work/a"
  cpu "$attnviz" census --model "$model" --corpus "$work/ids1000.jsonl" -o "$work/a" --threads 1 --quiet >> "$work/ours"
  OPENBLAS_NUM_THREADS=1 cpu /usr/bin/python3 "$here/peer_census.py" "$model" "$work/ids1000.jsonl" >> "$work/peer"
  rm -rf "$work/one" "$work/s0" "$work/s1" "$work/m"
  /usr/bin/time -f "%e" -o "$work/time" "$attnviz" census --model "$model" --corpus "$work/ids1000.jsonl" -o "$work/one" \
    --threads 1 --quiet > /dev/null
  cat "$work/time" >> "$work/one.t"
  /usr/bin/time -f "%e" -o "$work/time" sh -c "parallel -j 2 '$attnviz' census --model '$model' --corpus '$work/ids1000.jsonl' \
    --threads 1 --quiet --shard {}/2 -o '$work/s{}' ::: 0 1 && '$attnviz' census --merge '$work/s0' '$work/s1' -o '$work/m'" > /dev/null
  cat "$work/time" >> "$work/two.t"
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

# A short text (16 tokens), default threads against --threads 1: 31 runs each, interleaved, timed
# to the microsecond; then the same beside one busy-looping job per core (every core taken).
threads_runs() {
  /usr/bin/python3 - "$attnviz" "$model" "$work/d.json" <<'PY'
import statistics, subprocess, sys, time
attnviz, model, out = sys.argv[1:4]
base = [attnviz, "dump", "--model", model, "--text", "Once upon a time, there was a little girl named Lily.", "-o", out]
times = {0: [], 1: []}
for _ in range(31):
    for threads in (0, 1):
        start = time.perf_counter()
        subprocess.run(base + ["--threads", str(threads)], check=True, capture_output=True)
        times[threads].append(time.perf_counter() - start)
print("%.1f %.1f" % (statistics.median(times[0]) * 1e3, statistics.median(times[1]) * 1e3))
PY
}
read -r alone0 alone1 < <(threads_runs)
busy=""
for ((i = 0; i < $(nproc); i++)); do (while :; do :; done) & busy="$busy $!"; done
read -r busy0 busy1 < <(threads_runs)
kill $busy; busy=""

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
| the same split, CPU time: one process vs the larger shard alone (the speed-up two free cores give) | $shard_cpu s | $one_cpu s | **$(/usr/bin/python3 -c "print(f'{$one_cpu / $shard_cpu:.2f}')")×** | ≥ 1.7× |
| short text (16 tokens, \`dump\`), default threads vs \`--threads 1\`, median wall of 31 | $alone0 ms | $alone1 ms | $(/usr/bin/python3 -c "print(f'{$alone0 / $alone1:.2f}')") (time ratio) | ≤ 1 |
| the same beside $(nproc) busy jobs | $busy0 ms | $busy1 ms | $(/usr/bin/python3 -c "print(f'{$busy0 / $busy1:.2f}')") (time ratio) | ≤ 1 |

Before the fix (commit e2166d2, timed by hand the same day): the short text took 120–190 ms with
the default threads against 10 ms with \`--threads 1\`, and a census of the 520 stories 34.5 s
against 3.4 s: every feed-forward product of the 64-wide model was split over Eigen's OpenMP
threads, whose regions cost more than the product and stall for a time slice when the other
core is busy. \`core/product_threads.hpp\` now gives a product a second thread only from 100 Mflop
per thread, the rule attention.cpp's projections already followed. Since then a short text starts
no thread at all with the default threads (\`strace -f -e trace=clone,clone3\`: none, as with
\`--threads 1\`), so the two rows above run the same instructions and differ by the machine's noise.

Shards need free cores: two processes on a machine whose 2 cores already run other jobs (load
average above) share the same CPU time as one, so this ratio measures the machine, not the split;
the shards share nothing but their inputs (each reads the corpus and the model itself).

The numpy route is vectorised over rows and heads, so its Python overhead is a few hundred numpy
calls per text (~8 ms); attnviz spends ~1.6 ms per text, of which the float32 forward pass (the
same ~25 Mflop as numpy's BLAS does) is about a third and the twelve statistics of 40 heads
(entropy's logarithms, the O(n²) detector patterns) most of the rest. The ≥ 30× goal is not met
against this route: the forward pass alone (~0.5 ms) bounds the ratio near 16× on one core, so
meeting it needs batching texts through the forward pass, not tuning the statistics.
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
