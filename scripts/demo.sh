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
./build/attnviz heatmaps data/use-lite/layer0.json -o out/use-lite
./build/attnviz heatmaps data/aren-translit/mcdonald/decoder_layer2.json \
  --source data/aren-translit/mcdonald/source.json -o out/aren-translit
./build/attnviz heatmaps data/stories260k/layer0.json --causal -o out/stories260k
echo "heatmaps are in $(pwd)/out/: model/layer_0 … layer_4/ (stories260K, every layer), use-lite/, aren-translit/, stories260k/"
echo "(grid.png and head_<h>.png in each)"
