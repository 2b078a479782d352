#!/usr/bin/env python3
"""Independent float64 head attribution of a LLaMA-architecture GGUF (F32/F16/BF16 tensors).

Shares no code with attnviz (it reuses only this folder's reference_forward.py: its GGUF reader,
RMSNorm and RoPE). At one position p of the input it writes:
  dla [layer][head]: head h's output at p, (Σ_j α_pj v_j) W_O^h, through the final RMSNorm with
      the scale 1/sqrt(mean(x_p²) + ε) of the real residual, dotted with the target's row of the
      output matrix (TransformerLens's logit_attrs with cached scale); dla_mlp [layer] and
      dla_embedding the same for the MLPs' updates and the token embedding;
  ablation [layer][head]: log p(target) with head h's output set to 0 before W_O at every
      position, the whole model rerun, minus the clean log p(target).
The target defaults to the argmax at p. Output JSON: target_id, position, logit, log_prob, dla,
dla_mlp, dla_embedding, ablation.

    /usr/bin/python3 scripts/reference_attribution.py MODEL.gguf 1,403,407 POSITION TARGET|- OUT.json
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_forward import read_gguf, rms_norm, rope  # noqa: E402


def settings(meta):
    arch = meta["general.architecture"]
    n_heads = meta[arch + ".attention.head_count"]
    d_model = meta[arch + ".embedding_length"]
    return {
        "layers": meta[arch + ".block_count"],
        "heads": n_heads,
        "kv": meta.get(arch + ".attention.head_count_kv", n_heads),
        "d_head": d_model // n_heads,
        "eps": meta.get(arch + ".attention.layer_norm_rms_epsilon", 1e-5),
        "theta": meta.get(arch + ".rope.freq_base", 10000.0),
        "rope_dim": meta.get(arch + ".rope.dimension_count", d_model // n_heads),
    }


def run(s, t, ids, ablate=None):
    """Forward over ids; returns (parts of the last residual, last residual). ablate = (layer, head)."""
    n, d_head = len(ids), s["d_head"]
    x = t["token_embd.weight"][ids]
    parts = {"embedding": x[-1].copy(), "heads": [], "mlp": []}
    causal = np.tril(np.ones((n, n), dtype=bool))
    for l in range(s["layers"]):
        p = "blk.%d." % l
        h = rms_norm(x, t[p + "attn_norm.weight"], s["eps"])
        q = rope(h @ t[p + "attn_q.weight"].T, s["heads"], d_head, s["rope_dim"], s["theta"])
        k = rope(h @ t[p + "attn_k.weight"].T, s["kv"], d_head, s["rope_dim"], s["theta"])
        v = h @ t[p + "attn_v.weight"].T
        w_o = t[p + "attn_output.weight"]  # [d_model, heads * d_head]
        update, writes = np.zeros_like(x), []
        for head in range(s["heads"]):
            g = head // (s["heads"] // s["kv"])
            qh, kh, vh = q[:, head * d_head:(head + 1) * d_head], k[:, g * d_head:(g + 1) * d_head], v[:, g * d_head:(g + 1) * d_head]
            scores = np.where(causal, qh @ kh.T / np.sqrt(d_head), -np.inf)
            a = np.exp(scores - scores.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            z = a @ vh
            if ablate == (l, head):
                z = np.zeros_like(z)
            write = z @ w_o[:, head * d_head:(head + 1) * d_head].T
            writes.append(write[-1])
            update += write
        parts["heads"].append(writes)
        x = x + update
        h = rms_norm(x, t[p + "ffn_norm.weight"], s["eps"])
        gate, up = h @ t[p + "ffn_gate.weight"].T, h @ t[p + "ffn_up.weight"].T
        mlp = (gate / (1 + np.exp(-gate)) * up) @ t[p + "ffn_down.weight"].T
        parts["mlp"].append(mlp[-1])
        x = x + mlp
    return parts, x[-1]


def logits_of(s, t, last):
    output = t.get("output.weight", t["token_embd.weight"])
    return output @ rms_norm(last, t["output_norm.weight"], s["eps"])


def log_softmax(z, i):
    m = z.max()
    return z[i] - m - np.log(np.exp(z - m).sum())


def attribute(meta, t, ids, position, target):
    s = settings(meta)
    ids = ids[:position + 1]
    parts, last = run(s, t, ids)
    logits = logits_of(s, t, last)
    target = int(np.argmax(logits)) if target is None else target
    clean = log_softmax(logits, target)
    output = t.get("output.weight", t["token_embd.weight"])
    scale = 1.0 / np.sqrt((last * last).mean() + s["eps"])
    w = scale * t["output_norm.weight"] * output[target]
    ablation = [[log_softmax(logits_of(s, t, run(s, t, ids, (l, h))[1]), target) - clean for h in range(s["heads"])]
                for l in range(s["layers"])]
    return {"target_id": target, "position": position, "logit": float(logits[target]), "log_prob": float(clean),
            "dla": [[float(write @ w) for write in layer] for layer in parts["heads"]],
            "dla_mlp": [float(m @ w) for m in parts["mlp"]], "dla_embedding": float(parts["embedding"] @ w),
            "ablation": [[float(d) for d in layer] for layer in ablation]}


def main():
    model, ids_text, position, target, out_path = sys.argv[1:6]
    ids = [int(i) for i in ids_text.split(",")]
    meta, tensors = read_gguf(model)
    result = attribute(meta, tensors, ids, int(position), None if target == "-" else int(target))
    json.dump(result, open(out_path, "w"))


if __name__ == "__main__":
    main()
