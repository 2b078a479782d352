#!/usr/bin/python3
"""Writes one benchmark case for attnviz and the Python peers, from a fixed seed.

  make_case.py N D_MODEL HEADS SEED OUT_DIR   ->  OUT_DIR/sentence.json, OUT_DIR/weights.json

The weights file holds W_Q, W_K, W_V [d_model, d_model] and their biases, written the way a
user's export script writes them: json.dump of float32 values (tensor.tolist()), 17 significant
digits, so the file size matches what users feed attnviz (d_model 512: about 17.5 MB).
"""
import json
import os
import sys

import numpy as np


def main():
    n, d_model, heads, seed = (int(a) for a in sys.argv[1:5])
    out = sys.argv[5]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(d_model)
    x = rng.standard_normal((n, d_model)).astype(np.float32)
    w = {name: (rng.standard_normal((d_model, d_model)) * scale).astype(np.float32)
         for name in ("W_Q", "W_K", "W_V")}
    b = {name: (rng.standard_normal(d_model) * 0.02).astype(np.float32) for name in ("b_Q", "b_K", "b_V")}
    words = ["the", "cat", "sat", "on", "mat", "and", "looked", "at", "a", "bird", "in", "tree"]
    tokens = [words[i % len(words)] + (str(i // len(words)) if i >= len(words) else "") for i in range(n)]
    with open(os.path.join(out, "sentence.json"), "w") as f:
        json.dump({"tokens": tokens, "embeddings": x.tolist()}, f)
    weights = {"num_heads": heads}
    weights.update({k: v.tolist() for k, v in w.items()})
    weights.update({k: v.tolist() for k, v in b.items()})
    with open(os.path.join(out, "weights.json"), "w") as f:
        json.dump(weights, f)


if __name__ == "__main__":
    main()
