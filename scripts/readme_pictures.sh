#!/usr/bin/env bash
# Regenerates the pictures and the table of README.md and docs/ (data/pictures/) from the bundled
# examples. Needs a build: run scripts/demo.sh once first.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p data/pictures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

./build/attnviz heatmaps data/aren-translit/mcdonald/decoder_layer2.json \
  --source data/aren-translit/mcdonald/source.json -o "$tmp/aren"
./build/attnviz heatmaps data/use-lite/layer0.json -o "$tmp/use-lite"
./build/attnviz heatmaps --model data/stories260k/stories260K.gguf \
  --text "Once upon a time, there was a little girl named Lily. She loved to play outside in the park." -o "$tmp/model"
cp "$tmp/model/layer_1/grid.png" data/pictures/stories260k_model_layer1.png
# The same layer under --measure norms (issue 20): what each head writes, ||a f(x)||, beside the weights.
./build/attnviz heatmaps --model data/stories260k/stories260K.gguf --layers 1 --measure norms \
  --text "Once upon a time, there was a little girl named Lily. She loved to play outside in the park." -o "$tmp/model-norms"
cp "$tmp/model-norms/layer_1/grid.png" data/pictures/stories260k_model_layer1_norms.png
cp "$tmp/aren/grid.png" data/pictures/aren_translit_layer2.png
cp "$tmp/use-lite/grid.png" data/pictures/use_lite_layer0.png
# Inside one head (explain): stories260K's previous-token head L1H3 at the last token.
./build/attnviz explain --model data/stories260k/stories260K.gguf --text "Lily saw a cat. Lily saw a" --head L1H3 \
  -o "$tmp/explain"
cp "$tmp/explain/explain.png" data/pictures/stories260k_explain_L1H3.png
cp "$tmp/explain/circuits.png" data/pictures/stories260k_circuits_L1.png
# The previous-token head (L0H3) against the head that looks at the token itself (L0H1).
./build/attnviz compare data/use-lite/layer0.json --heads 3,1 -o data/pictures/compare_use_lite_h3_h1.png \
  | tee data/pictures/compare_use_lite_h3_h1.txt
# stories260K as a whole model, from scripts/demo.sh's out/stories260k-model/ (run it first).
for picture in overview rollout census top_heads; do
  cp "out/stories260k-model/$picture.png" "data/pictures/stories260k_$picture.png"
done
cp out/stories260k-model/census.csv data/pictures/stories260k_census.csv
# Head attribution (docs/analysis.md#head-attribution): which heads push " Lily" after "One day,".
./build/attnviz attribute --model data/stories260k/stories260K.gguf \
  --text "Once upon a time, there was a little girl named Lily. She played with her ball. One day," \
  --target " Lily" -o "$tmp/attribution"
cp "$tmp/attribution/attribution.png" data/pictures/stories260k_attribution.png
# The census over the bundled corpus (docs/corpus.md).
./build/attnviz census --model data/stories260k/stories260K.gguf --corpus data/corpus/stories260k_stories.txt \
  --limit 100 -o "$tmp/corpus-census" --quiet
cp "$tmp/corpus-census/census.png" data/pictures/stories260k_corpus_census.png
