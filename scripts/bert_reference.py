#!/usr/bin/env python3
"""Independent float64 forward pass of a BERT GGUF (llama.cpp's architecture "bert", F32/F16 tensors).

Shares no code with attnviz (its GGUF reader is reference_forward.py's, also independent of src/):
embeddings (word + token type + learned position) and LayerNorm, then per layer post-norm
bidirectional multi-head attention with biases and a GELU feed-forward (Devlin et al. 2019).
GELU: "ggml" (llama.cpp's, the default: the tanh approximation looked up in a float16 table,
ggml_vec_gelu_f32 with GGML_GELU_FP16), "tanh" (the formula itself) or "erf" (transformers' exact one).
Writes {"token_ids", "token_types", "attention": {layer: [head][query][key]}} as JSON.

    /usr/bin/python3 scripts/bert_reference.py MODEL.gguf 2,7,12,3 OUT.json [--types 0,0,1,1] [--gelu erf]
"""
import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_forward import gelu as decoder_gelu, read_gguf  # noqa: E402


def layer_norm(x, gain, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


def gelu(x, kind):
    if kind == "erf":
        return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    return decoder_gelu(x, kind)  # "ggml": llama.cpp's float16 table; otherwise the tanh formula


def forward(meta, t, ids, types, gelu_kind):
    n_layers = meta["bert.block_count"]
    n_heads = meta["bert.attention.head_count"]
    eps = meta["bert.attention.layer_norm_epsilon"]
    n = len(ids)
    x = t["token_embd.weight"][ids] + t["token_types.weight"][types] + t["position_embd.weight"][:n]
    x = layer_norm(x, t["token_embd_norm.weight"], t["token_embd_norm.bias"], eps)
    d = x.shape[1]
    dh = d // n_heads
    attention = {}
    for l in range(n_layers):
        p = "blk.%d." % l

        def linear(name, h):
            return h @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        q, k, v = linear("attn_q", x), linear("attn_k", x), linear("attn_v", x)
        heads, outputs = [], []
        for h in range(n_heads):
            cols = slice(h * dh, (h + 1) * dh)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(dh)  # no mask: every query sees every key
            weights = np.exp(scores - scores.max(axis=1, keepdims=True))
            weights /= weights.sum(axis=1, keepdims=True)
            heads.append(weights.tolist())
            outputs.append(weights @ v[:, cols])
        attention[str(l)] = heads
        x = layer_norm(x + linear("attn_output", np.concatenate(outputs, axis=1)), t[p + "attn_output_norm.weight"],
                       t[p + "attn_output_norm.bias"], eps)
        ffn = linear("ffn_down", gelu(linear("ffn_up", x), gelu_kind))
        x = layer_norm(x + ffn, t[p + "layer_output_norm.weight"], t[p + "layer_output_norm.bias"], eps)
    return attention


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("ids")
    p.add_argument("out")
    p.add_argument("--types", default="")
    p.add_argument("--gelu", choices=["ggml", "tanh", "erf"], default="ggml")
    a = p.parse_args()
    ids = [int(i) for i in a.ids.split(",")]
    types = [int(i) for i in a.types.split(",")] if a.types else [0] * len(ids)
    meta, tensors = read_gguf(a.model)
    attention = forward(meta, tensors, ids, types, a.gelu)
    json.dump({"token_ids": ids, "token_types": types, "attention": attention}, open(a.out, "w"))


if __name__ == "__main__":
    main()
