#!/usr/bin/python3
"""The Python route a user writes today for a head census over a corpus (issue 22, census
benchmark): a numpy float32 forward pass of the LLaMA architecture (the GGUF read by
scripts/reference_forward.py's reader, then cast to float32), every layer's softmax weights kept
per text, and the same 12 statistics per head vectorised in numpy over rows and heads, summed
over texts (mean and sample std at the end). Token ids are given (JSONL {"token_ids": [...]}), so
the peer pays for no tokenizer. Prints the number of texts and the wall time of the loop.

  peer_census.py MODEL.gguf IDS.jsonl [SINK_EPSILON]
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from reference_forward import read_gguf  # noqa: E402

F = np.float32


def rms_norm(x, gain, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gain


def rope(x, n_heads, d_head, rope_dim, theta):
    n = x.shape[0]
    out = x.reshape(n, n_heads, d_head).copy()
    angle = np.arange(n, dtype=F)[:, None] * (theta ** (-np.arange(0, rope_dim, 2, dtype=F) / rope_dim))[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    a, b = out[:, :, 0:rope_dim:2].copy(), out[:, :, 1:rope_dim:2].copy()
    out[:, :, 0:rope_dim:2] = a * cos - b * sin
    out[:, :, 1:rope_dim:2] = a * sin + b * cos
    return out.reshape(n, n_heads * d_head)


def forward(cfg, t, ids):
    """Every layer's weights [h, n, n], float32."""
    n_layers, n_heads, n_kv, d_head, eps, theta, rope_dim = cfg
    n = len(ids)
    x = t["token_embd.weight"][ids]
    mask = np.triu(np.full((n, n), -np.inf, dtype=F), 1)
    layers = []
    for l in range(n_layers):
        p = "blk.%d." % l
        h = rms_norm(x, t[p + "attn_norm.weight"], eps)
        q = rope(h @ t[p + "attn_q.weight"].T, n_heads, d_head, rope_dim, theta).reshape(n, n_heads, d_head).transpose(1, 0, 2)
        k = rope(h @ t[p + "attn_k.weight"].T, n_kv, d_head, rope_dim, theta).reshape(n, n_kv, d_head).transpose(1, 0, 2)
        v = (h @ t[p + "attn_v.weight"].T).reshape(n, n_kv, d_head).transpose(1, 0, 2)
        rep = n_heads // n_kv
        k, v = np.repeat(k, rep, axis=0), np.repeat(v, rep, axis=0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(F(d_head)) + mask
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        layers.append(w)
        x = x + (w @ v).transpose(1, 0, 2).reshape(n, n_heads * d_head) @ t[p + "attn_output.weight"].T
        h = rms_norm(x, t[p + "ffn_norm.weight"], eps)
        gate, up = h @ t[p + "ffn_gate.weight"].T, h @ t[p + "ffn_up.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ t[p + "ffn_down.weight"].T
    return layers


def statistics(w, ids, epsilon):
    """[12, h] values of one layer's heads w [h, n, n] on one text (nan where undefined)."""
    h, n, _ = w.shape
    ids = np.asarray(ids)
    i = np.arange(n)
    logs = np.where(w > 0, np.log(np.where(w > 0, w, 1)), 0)
    ent = -(w * logs).sum(-1)                                        # [h, n]
    keys = i + 1
    norm = (ent[:, 1:] / np.log(keys[1:])).mean(-1) if n > 1 else np.full(h, np.nan)
    dist = (w * np.abs(i[:, None] - i[None, :])).sum(-1).mean(-1)
    diag = w[:, i, i].mean(-1)
    prev = w[:, i[1:], i[1:] - 1].mean(-1) if n > 1 else np.full(h, np.nan)
    first = w[:, :, 0].mean(-1)
    same = ids[:, None] == ids[None, :]
    olsson = np.zeros((n, n), bool)                                   # keys j+1 < i with t_j = t_i
    olsson[:, 1:] = same[:, :-1] & (i[None, 1:] < i[:, None])
    rows = olsson.any(-1)
    induction = (w * olsson).sum(-1)[:, rows].mean(-1) if rows.any() else np.full(h, np.nan)
    sink = (first > epsilon).astype(np.float64)
    total = w.sum((1, 2))
    previous_p = np.zeros((n, n), bool)
    previous_p[i[1:], i[1:] - 1] = True
    duplicate_p = same & (i[None, :] < i[:, None])
    induction_p = np.zeros((n, n), bool)
    induction_p[:, 1:] = same[:, :-1] & (i[None, 1:] <= i[:, None])
    tl = [(w * p).sum((1, 2)) / total if n > 1 else np.full(h, np.nan) for p in (previous_p, duplicate_p, induction_p)]
    return np.stack([ent.mean(-1), norm, w.max(-1).mean(-1), dist, diag, prev, first, induction, sink, *tl])


def main():
    model, corpus = sys.argv[1:3]
    epsilon = float(sys.argv[3]) if len(sys.argv) > 3 else 0.3
    meta, tensors = read_gguf(model)
    t = {k: v.astype(F) for k, v in tensors.items()}
    arch = meta["general.architecture"]
    n_heads = meta[arch + ".attention.head_count"]
    d_head = meta[arch + ".embedding_length"] // n_heads
    cfg = (meta[arch + ".block_count"], n_heads, meta.get(arch + ".attention.head_count_kv", n_heads), d_head,
           F(meta.get(arch + ".attention.layer_norm_rms_epsilon", 1e-5)), F(meta.get(arch + ".rope.freq_base", 10000.0)),
           meta.get(arch + ".rope.dimension_count", d_head))
    texts = [json.loads(line)["token_ids"] for line in open(corpus) if line.strip()]
    start = time.perf_counter()
    count = total = total_sq = None
    for ids in texts:
        values = np.stack([statistics(w, ids, epsilon) for w in forward(cfg, t, ids)])  # [layers, 12, h]
        defined = ~np.isnan(values)
        v = np.where(defined, values, 0.0)
        count = defined.astype(np.int64) if count is None else count + defined
        total = v if total is None else total + v
        total_sq = v * v if total_sq is None else total_sq + v * v
    mean = total / np.maximum(count, 1)
    std = np.sqrt(np.maximum(total_sq - count * mean * mean, 0) / np.maximum(count - 1, 1))
    seconds = time.perf_counter() - start
    print("%d texts in %.3f s (peer); mean previous_token_mass L1H6 %.4f, std %.4f" % (len(texts), seconds, mean[1, 5, 6], std[1, 5, 6]))


if __name__ == "__main__":
    main()
