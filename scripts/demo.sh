#!/usr/bin/env bash
# The README's first command: install what is missing, build in Release, and draw the bundled
# real examples' attention heads into out/.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target attnviz

./build/attnviz heatmaps data/use-lite/layer0.json -o out/use-lite
./build/attnviz heatmaps data/aren-translit/mcdonald/decoder_layer2.json \
  --source data/aren-translit/mcdonald/source.json -o out/aren-translit
./build/attnviz heatmaps data/stories260k/layer0.json --causal -o out/stories260k
echo "heatmaps are in $(pwd)/out/: use-lite/, aren-translit/, stories260k/ (grid.png and head_<h>.png each)"
# The whole model at a glance (README "Whole-model overview", "Attention rollout", "Head census"):
# every layer's heatmaps, overview.png, rollout.png, the head census and its two top heads.
text="Lily saw a cat. Lily saw a cat."
model=data/stories260k/stories260K.gguf
./build/attnviz heatmaps --model "$model" --text "$text" --rollout -o out/stories260k-model
./build/attnviz compare --model "$model" --text "$text" --census out/stories260k-model/census.csv \
  -o out/stories260k-model/census.png
./build/attnviz compare --model "$model" --text "$text" --heads L1H6,L0H3 -o out/stories260k-model/top_heads.png
echo "whole-model pictures are in $(pwd)/out/stories260k-model/: overview.png, rollout.png, census.png (+ census.csv), top_heads.png, layer_<l>/"
