#!/bin/sh
# Writes tests/data/families: the synthetic model of every decoder family (scripts/family_models.py)
# as GGUF and as a Hugging Face folder, and llama.cpp's own attention and last logits for each GGUF
# on 26 token ids, captured with the llamacpp-attention tool (see the shared folder's
# tools/llamacpp-attention; built once, outside the repository).
#
#   sh scripts/family_references.sh PATH/TO/llamacpp_attention
set -eu
tool=$1
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/tests/data/families
ids=1,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29
/usr/bin/python3 "$root/scripts/family_models.py" "$out"
for gguf in "$out"/*.gguf; do  # the families and their GGUF-only variants (family_models.py's VARIANTS)
  "$tool" --model "$gguf" --token-ids "$ids" -o "${gguf%.gguf}.llamacpp.json"
done
