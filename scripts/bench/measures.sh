#!/usr/bin/env bash
# issue 20 speed: --measure norms (and alti, --flow) against the plain run's compute, from
# --profile's `compute` phase (the forward pass and the measures; the dump's formatting is
# `render`). Best of 5, one thread. Writes nothing outside a temporary folder.
#   bash scripts/bench/measures.sh            (needs build/attnviz and python3-numpy)
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
best() {  # best compute seconds of 5 runs of attnviz "$@"
  for _ in 1 2 3 4 5; do ./build/attnviz "$@" --threads 1 --profile -o "$tmp/out.json" 2>&1 >/dev/null | awk '/compute/ {print $3}'; done |
    sort -g | head -1
}
ids=$(/usr/bin/python3 -c "print(','.join(str(1 + (i * 37) % 500) for i in range(500)))")
model=(dump --model data/stories260k/stories260K.gguf --token-ids "$ids")
echo "stories260K, 500 tokens, 5 layers x 8 heads (d_k 8):"
for measure in weights norms alti; do echo "  --measure $measure: $(best "${model[@]}" --measure "$measure") s"; done
flow_ids=$(/usr/bin/python3 -c "print(','.join(str(1 + (i * 37) % 500) for i in range(64)))")
echo "  --flow, 64 tokens: $(best dump --model data/stories260k/stories260K.gguf --token-ids "$flow_ids" --flow) s" \
     "(plain: $(best dump --model data/stories260k/stories260K.gguf --token-ids "$flow_ids") s)"
/usr/bin/python3 scripts/bench/make_case.py 1024 512 8 20 "$tmp/case" >/dev/null
# The case's layer gets a W_O [512, 512] so that f(x) = v W_O is a real projection.
/usr/bin/python3 - "$tmp/case/weights.json" <<'PY'
import json, sys
import numpy as np
w = json.load(open(sys.argv[1]))
w["W_O"] = (np.random.default_rng(7).standard_normal((512, 512)) / np.sqrt(512)).astype(np.float32).tolist()
json.dump(w, open(sys.argv[1], "w"))
PY
echo "synthetic layer, 1024 tokens, d_model 512, 8 heads (d_k 64):"
for measure in weights norms alti; do
  echo "  --measure $measure: $(best dump "$tmp/case/sentence.json" "$tmp/case/weights.json" --measure "$measure") s"
done
