#!/usr/bin/env bash
# The README's first command: install what is missing, build in Release, and draw the bundled
# real examples' attention heads into out/.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target attnviz

# A whole model from its own file: stories260K's real forward pass, every layer and head.
./build/attnviz heatmaps --model data/stories260k/stories260K.gguf \
  --text "Once upon a time, there was a little girl named Lily. She loved to play outside in the park." -o out/model
# A translation model from its own files: every encoder, decoder and cross-attention layer while
# it transliterates a name.
./build/attnviz heatmaps --model data/aren-translit/model --text "ماكدونالد" -o out/translit
./build/attnviz heatmaps data/use-lite/layer0.json -o out/use-lite
./build/attnviz heatmaps data/aren-translit/mcdonald/decoder_layer2.json \
  --source data/aren-translit/mcdonald/source.json -o out/aren-translit
./build/attnviz heatmaps data/stories260k/layer0.json -o out/stories260k
# The whole model at a glance (docs/analysis.md: overview, rollout, head census):
# a text that repeats itself, the head census and its two top heads.
text="Lily saw a cat. Lily saw a cat."
model=data/stories260k/stories260K.gguf
./build/attnviz heatmaps --model "$model" --text "$text" --rollout -o out/stories260k-model
./build/attnviz compare --model "$model" --text "$text" --census out/stories260k-model/census.csv \
  -o out/stories260k-model/census.png
./build/attnviz compare --model "$model" --text "$text" --heads L1H6,L0H3 -o out/stories260k-model/top_heads.png
echo "heatmaps are in $(pwd)/out/:"
echo "  model/layer_0 … layer_4/ (stories260K, every layer of its forward pass; overview.png beside them)"
echo "  translit/encoder/layer_<l>/, translit/decoder/layer_<l>/self/ and cross/ (the translation model, ماكدونالد → mcdonald)"
echo "  stories260k-model/: overview.png, rollout.png, census.png (+ census.csv), top_heads.png, layer_<l>/"
echo "  use-lite/, aren-translit/, stories260k/ (single layers from JSON)"
echo "(grid.png and head_<h>.png in each layer folder)"
