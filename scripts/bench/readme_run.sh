#!/usr/bin/env bash
# The README's model run against the route a user writes today (issue 38): `heatmaps --model
# data/stories260k/stories260K.gguf --text "Once upon a time, …"` (5 layers: 45 PNGs and the
# overview) with the default threads and with --threads 1, against scripts/bench/peer_model_heatmaps.py
# (numpy GGUF reader, torch float32 forward pass keeping every layer's softmax, a matplotlib grid
# and one PNG per head per layer) on the same token ids. hyperfine, interleaved rounds (each round:
# 10 runs of each attnviz command, then 1 of the peer), medians of wall time over all runs.
# Prints the table and FAILS (exit 1) when attnviz is under 50× the peer, or when the default
# threads are not faster than --threads 1 (the regression guard named in docs/performance.md).
#   scripts/bench/readme_run.sh [ROUNDS]   (after building build/attnviz and scripts/install_deps.sh --bench)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"  # root, attnviz and the shared helpers
need_attnviz
command -v hyperfine >/dev/null || { echo "hyperfine is missing: run scripts/install_deps.sh --bench" >&2; exit 1; }
rounds=${1:-3}
py="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3"
bench_work attnviz-readme-bench
model="$root/data/stories260k/stories260K.gguf"
text="Once upon a time, there was a little girl named Lily. She loved to play outside in the park."
ids=$("$attnviz" tokenize --model "$model" --text "$text" --json |
  /usr/bin/python3 -c "import json, sys; print(','.join(map(str, json.load(sys.stdin)['token_ids'])))")

for round in $(seq "$rounds"); do
  hyperfine -N --warmup 1 --runs 10 --export-json "$work/default_$round.json" \
    "$attnviz heatmaps --model $model --token-ids $ids -o $work/default" >/dev/null
  hyperfine -N --warmup 1 --runs 10 --export-json "$work/one_$round.json" \
    "$attnviz heatmaps --model $model --token-ids $ids -o $work/one --threads 1" >/dev/null
  hyperfine -N --runs 1 --export-json "$work/peer_$round.json" "$py $here/peer_model_heatmaps.py $model $ids $work/peer" >/dev/null
done
# Same pictures on both sides: 5 layers of a grid and 8 heads (the peer draws no overview).
pngs=$(find "$work/default" -name '*.png' | wc -l); peer_pngs=$(find "$work/peer" -name '*.png' | wc -l)
[[ $pngs -eq 46 && $peer_pngs -eq 45 ]] || { echo "expected 46 PNGs from attnviz and 45 from the peer, got $pngs and $peer_pngs" >&2; exit 1; }
cmp -s <(cd "$work/default" && find . -name '*.png' -exec sha256sum {} + | sort) \
  <(cd "$work/one" && find . -name '*.png' -exec sha256sum {} + | sort) ||
  { echo "the default threads and --threads 1 wrote different pictures" >&2; exit 1; }

times() {  # times SIDE: median, min and max milliseconds over every round's runs
  /usr/bin/python3 -c "
import glob, json, statistics, sys
t = [x * 1e3 for f in glob.glob(sys.argv[1]) for x in json.load(open(f))['results'][0]['times']]
print(f'{statistics.median(t):.1f} {min(t):.1f} {max(t):.1f} {len(t)}')" "$work/$1_*.json"
}
read -r def def_min def_max def_n <<<"$(times default)"
read -r one one_min one_max one_n <<<"$(times one)"
read -r peer peer_min peer_max peer_n <<<"$(times peer)"
speedup=$(ratio "$peer" "$def"); threads=$(ratio "$def" "$one")
echo "| README model run (stories260K, 32 tokens, 46 PNGs), median wall (hyperfine, $rounds interleaved rounds) | ms (min–max, runs) |"
echo "| --- | --- |"
echo "| attnviz, default threads ($(nproc) cores) | $def ($def_min–$def_max, $def_n) |"
echo "| attnviz, --threads 1 | $one ($one_min–$one_max, $one_n) |"
echo "| numpy + torch + matplotlib peer | $peer ($peer_min–$peer_max, $peer_n) |"
echo "| speed-up over the peer | **${speedup}×** (goal ≥ 55×, guard 50×) |"
echo "| default wall / --threads 1 wall | **$threads** (goal ≤ 0.6, guard < 1) |"
status=0
[[ $(met "$speedup" ">=" 50) == yes ]] || { echo "REGRESSION: the README run is ${speedup}× the peer, under 50×" >&2; status=1; }
[[ $(met "$threads" "<=" 1.0) == yes ]] || { echo "REGRESSION: the default threads take $threads× the time of --threads 1" >&2; status=1; }
exit $status
