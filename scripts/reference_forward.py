#!/usr/bin/env python3
"""Independent float64 forward pass of a LLaMA-architecture GGUF (F32/F16/BF16 tensors).

Shares no code with attnviz: its own GGUF reader, its own RMSNorm, RoPE (adjacent pairs, as
llama.cpp applies it to GGUF LLaMA files), grouped-query attention with a causal mask, SwiGLU.
Writes {"token_ids", "attention": {layer: [head][query][key]}, "last_logits"} as JSON.

    /usr/bin/python3 scripts/reference_forward.py MODEL.gguf 1,403,407 OUT.json
"""
import json
import struct
import sys

import numpy as np

GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def read_gguf(path):
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        value = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return value

    def string():
        nonlocal pos
        length = take("<Q")
        text = data[pos:pos + length].decode("utf-8", errors="surrogateescape")
        pos += length
        return text

    def value(kind):
        if kind == 8:
            return string()
        if kind == 9:
            element, count = take("<I"), take("<Q")
            return [value(element) for _ in range(count)]
        return take(GGUF_SCALARS[kind])

    assert data[:4] == b"GGUF", "not a GGUF file"
    pos = 4
    take("<I")
    n_tensors, n_kv = take("<Q"), take("<Q")
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, dims, take("<I"), take("<Q")))
    alignment = meta.get("general.alignment", 32)
    start = (pos + alignment - 1) // alignment * alignment
    tensors = {}
    for name, dims, kind, offset in infos:
        count = int(np.prod(dims))
        at = start + offset
        if kind == 0:
            values = np.frombuffer(data, np.float32, count, at).astype(np.float64)
        elif kind == 1:
            values = np.frombuffer(data, np.float16, count, at).astype(np.float64)
        elif kind == 30:
            raw = np.frombuffer(data, np.uint16, count, at).astype(np.uint32) << 16
            values = raw.view(np.float32).astype(np.float64)
        else:
            continue  # not needed by this reference
        tensors[name] = values.reshape(list(reversed(dims)))
    return meta, tensors


def rms_norm(x, gain, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gain


def rope(x, n_heads, d_head, rope_dim, theta):
    """Adjacent pairs (2i, 2i+1) of each head turn by pos * theta^(-2i/rope_dim)."""
    n = x.shape[0]
    out = x.reshape(n, n_heads, d_head).copy()
    pos = np.arange(n, dtype=np.float64)[:, None]
    freq = theta ** (-np.arange(0, rope_dim, 2, dtype=np.float64) / rope_dim)
    angle = pos * freq[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = out[:, :, 0:rope_dim:2].copy(), out[:, :, 1:rope_dim:2].copy()
    out[:, :, 0:rope_dim:2] = a * cos - b * sin
    out[:, :, 1:rope_dim:2] = a * sin + b * cos
    return out.reshape(n, n_heads * d_head)


def forward(meta, t, ids):
    arch = meta["general.architecture"]
    n_layers = meta[arch + ".block_count"]
    n_heads = meta[arch + ".attention.head_count"]
    n_kv = meta.get(arch + ".attention.head_count_kv", n_heads)
    d_model = meta[arch + ".embedding_length"]
    d_head = d_model // n_heads
    eps = meta.get(arch + ".attention.layer_norm_rms_epsilon", 1e-5)
    theta = meta.get(arch + ".rope.freq_base", 10000.0)
    rope_dim = meta.get(arch + ".rope.dimension_count", d_head)
    n = len(ids)
    x = t["token_embd.weight"][ids]
    causal = np.tril(np.ones((n, n), dtype=bool))
    attention = {}
    for l in range(n_layers):
        p = "blk.%d." % l
        h = rms_norm(x, t[p + "attn_norm.weight"], eps)
        q = rope(h @ t[p + "attn_q.weight"].T, n_heads, d_head, rope_dim, theta)
        k = rope(h @ t[p + "attn_k.weight"].T, n_kv, d_head, rope_dim, theta)
        v = h @ t[p + "attn_v.weight"].T
        heads, outs = [], []
        for head in range(n_heads):
            g = head // (n_heads // n_kv)
            qh, kh, vh = (m[:, c * d_head:(c + 1) * d_head] for m, c in ((q, head), (k, g), (v, g)))
            scores = np.where(causal, qh @ kh.T / np.sqrt(d_head), -np.inf)
            w = np.exp(scores - scores.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            heads.append(w)
            outs.append(w @ vh)
        attention[str(l)] = np.array(heads).tolist()
        x = x + np.concatenate(outs, axis=1) @ t[p + "attn_output.weight"].T
        h = rms_norm(x, t[p + "ffn_norm.weight"], eps)
        gate, up = h @ t[p + "ffn_gate.weight"].T, h @ t[p + "ffn_up.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ t[p + "ffn_down.weight"].T
    last = rms_norm(x[-1], t["output_norm.weight"], eps)
    output = t.get("output.weight", t["token_embd.weight"])
    return attention, (output @ last).tolist()


def main():
    model, ids_text, out_path = sys.argv[1:4]
    ids = [int(i) for i in ids_text.split(",")]
    meta, tensors = read_gguf(model)
    attention, logits = forward(meta, tensors, ids)
    json.dump({"token_ids": ids, "attention": attention, "last_logits": logits}, open(out_path, "w"))


if __name__ == "__main__":
    main()
