#!/usr/bin/env python3
"""Synthetic Q8_0 GGUF files of real small decoders' shapes for the family speed rows (issue 25),
with the metadata and tensor names of scripts/family_models.py, random weights (normal / √fan_in,
generated one tensor at a time so a 1B-parameter file needs no more memory than its largest tensor):

    /usr/bin/python3 scripts/bench/family_shapes.py OUT.gguf gemma3|gpt2

gemma3: Gemma 3 1B (26 layers, d_model 1152, 4 heads on 1 key/value head, head size 256,
feed-forward 6912, vocabulary 262144, tied output, window 512; llama.cpp's pattern of 6).
gpt2: GPT-2 124M (12 layers, d_model 768, 12 heads, feed-forward 3072, vocabulary 50257, 1024
learned positions, tied output). Matrices and the token embedding Q8_0; norms, biases and the
position table float32. (BERT base: scripts/bert_gguf_writer.py --type q8_0.)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import family_models  # noqa: E402
from gguf_writer import F32, Q8_0, write_gguf  # noqa: E402

SHAPES = {
    "gemma3": dict(layers=26, d=1152, heads=4, kv=1, dk=256, ff=6912, vocab=262144, theta=1e6, eps=1e-6, window=512,
                   local_theta=1e4, query_pre_attn_scalar=256, context=32768),
    "gpt2": dict(layers=12, d=768, heads=12, kv=12, dk=64, ff=3072, vocab=50257, eps=1e-5, context=1024),
}


def main():
    out, name = sys.argv[1], sys.argv[2]
    s = SHAPES[name]
    family_models.VOCAB = s["vocab"]
    rng = np.random.default_rng(7)
    d, h, kv, dk, ff, vocab = s["d"], s["heads"], s["kv"], s["dk"], s["ff"], s["vocab"]

    def lin(o, i, scale=1.0):
        return (o, i), Q8_0, lambda: rng.standard_normal((o, i), dtype=np.float32) * np.float32(scale / np.sqrt(i))

    def gain(n):
        return (n,), F32, lambda: 1.0 + 0.2 * rng.standard_normal(n, dtype=np.float32)

    def bias(n):
        return (n,), F32, lambda: 0.1 * rng.standard_normal(n, dtype=np.float32)

    t = [("token_embd.weight",) + lin(vocab, d, np.sqrt(d) * (0.2 if name == "gemma3" else 1.0))]
    if name == "gpt2":
        t.append(("position_embd.weight", (s["context"], d), F32, lambda: 0.5 * rng.standard_normal((s["context"], d), dtype=np.float32)))
    t.append(("output_norm.weight",) + gain(d))
    if name == "gpt2":
        t.append(("output_norm.bias",) + bias(d))
    for l in range(s["layers"]):
        b = "blk.%d." % l
        t.append((b + "attn_norm.weight",) + gain(d))
        if name == "gpt2":
            t += [(b + "attn_norm.bias",) + bias(d), (b + "attn_qkv.weight",) + lin(3 * d, d),
                  (b + "attn_qkv.bias",) + bias(3 * d), (b + "attn_output.weight",) + lin(d, d),
                  (b + "attn_output.bias",) + bias(d), (b + "ffn_norm.weight",) + gain(d), (b + "ffn_norm.bias",) + bias(d),
                  (b + "ffn_up.weight",) + lin(ff, d), (b + "ffn_up.bias",) + bias(ff),
                  (b + "ffn_down.weight",) + lin(d, ff, 0.3), (b + "ffn_down.bias",) + bias(d)]
        else:
            t += [(b + "attn_q.weight",) + lin(h * dk, d, 1.5), (b + "attn_k.weight",) + lin(kv * dk, d, 1.5),
                  (b + "attn_v.weight",) + lin(kv * dk, d), (b + "attn_q_norm.weight",) + gain(dk),
                  (b + "attn_k_norm.weight",) + gain(dk), (b + "attn_output.weight",) + lin(d, h * dk),
                  (b + "post_attention_norm.weight",) + gain(d), (b + "ffn_norm.weight",) + gain(d),
                  (b + "ffn_gate.weight",) + lin(ff, d), (b + "ffn_up.weight",) + lin(ff, d),
                  (b + "ffn_down.weight",) + lin(d, ff, 0.3), (b + "post_ffw_norm.weight",) + gain(d)]
    write_gguf(out, family_models.gguf_metadata(name, s), t)


if __name__ == "__main__":
    main()
