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
