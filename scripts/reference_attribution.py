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

With --ct2, a pre-norm CTranslate2 encoder-decoder (this folder's ct2_reference.py reads it): the
decoder's next token at decoder position p (<s> at 0) of the teacher-forced input <s> + TARGET
TOKENS. dla holds the decoder's self-attention heads, dla_cross its cross-attention heads, with
dla_mlp, dla_embedding, dla_position, dla_attn_bias, dla_cross_bias, dla_mlp_bias,
dla_final_norm_bias and dla_output_bias (b_proj at the target) beside them, the final LayerNorm
centred with its scale from the real residual; ablation, ablation_cross and ablation_encoder zero
z^h of one head at every position and rerun the whole model.

    /usr/bin/python3 scripts/reference_attribution.py --ct2 MODEL_DIR "SOURCE TOKENS" "TARGET TOKENS" POSITION TARGET|- OUT.json
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


def ct2_heads(m, heads, q, k, v, mask, ablate):
    """Per-head outputs z^h [n, d_k] (z^h = 0 for the head `ablate`)."""
    d = q.shape[1] // heads
    zs = []
    for h in range(heads):
        cols = slice(h * d, (h + 1) * d)
        scores = q[:, cols] @ k[:, cols].T / np.sqrt(d)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        a = np.exp(scores - scores.max(axis=1, keepdims=True))
        a /= a.sum(axis=1, keepdims=True)
        zs.append(np.zeros_like(a @ v[:, cols]) if h == ablate else a @ v[:, cols])
    return zs


def ct2_block(m, scope, heads, h_q, h_kv, mask, ablate, fused_qkv):
    """One attention block: (update [n, d], per-head writes at the last row [heads, d], b_O)."""
    d = h_q.shape[1]
    if fused_qkv:
        qkv = m.dense(scope + "/linear_0", h_q)
        q, k, v, out = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], scope + "/linear_1"
    else:
        kv = m.dense(scope + "/linear_1", h_kv)
        q, k, v, out = m.dense(scope + "/linear_0", h_q), kv[:, :d], kv[:, d:], scope + "/linear_2"
    zs = ct2_heads(m, heads, q, k, v, mask, ablate)
    w_o, b_o = m.v[out + "/weight"], m.v[out + "/bias"]  # [d, d] as [out, in]
    d_k = d // heads
    writes = np.array([zs[h][-1] @ w_o[:, h * d_k:(h + 1) * d_k].T for h in range(heads)])
    return np.concatenate(zs, axis=1) @ w_o.T + b_o, writes, b_o


def ct2_run(m, source_ids, ids, ablate=None):
    """The model on ids (decoder input); ablate = (stack, kind, layer, head). Returns (parts, y_last, logits_last)."""
    heads = m.setting("encoder", "num_heads", 16 if m.spec == "TransformerBig" else 8)
    if m.setting("encoder", "pre_norm", 1) == 0:
        raise SystemExit("reference_attribution.py --ct2: post-norm models are not attributed")
    def zeroed(stack, kind, layer):
        return ablate[3] if ablate and ablate[:3] == (stack, kind, layer) else None
    x = m.embed("encoder", source_ids)
    i = 0
    while "encoder/layer_%d/ffn/linear_0/weight" % i in m.v:
        s = "encoder/layer_%d" % i
        h = m.layer_norm(s + "/self_attention/layer_norm", x)
        x = x + ct2_block(m, s + "/self_attention", heads, h, h, None, zeroed("encoder", "self", i), True)[0]
        x = x + m.ffn("encoder", s + "/ffn", m.layer_norm(s + "/ffn/layer_norm", x))
        i += 1
    memory = m.layer_norm("encoder/layer_norm", x) if "encoder/layer_norm/gamma" in m.v else x
    table = m.v["decoder/embeddings_0/weight" if "decoder/embeddings_0/weight" in m.v else "decoder/embeddings/weight"]
    y = m.embed("decoder", ids)
    token = table[ids[-1]] * np.sqrt(table.shape[1])
    parts = {"embedding": token, "position": y[-1] - token, "self": [], "cross": [], "self_bias": [], "cross_bias": [],
             "mlp": [], "mlp_bias": []}
    n = len(ids)
    causal = np.tril(np.ones((n, n), dtype=bool))
    i = 0
    while "decoder/layer_%d/ffn/linear_0/weight" % i in m.v:
        s = "decoder/layer_%d" % i
        h = m.layer_norm(s + "/self_attention/layer_norm", y)
        update, writes, b_o = ct2_block(m, s + "/self_attention", heads, h, h, causal, zeroed("decoder", "self", i), True)
        parts["self"].append(writes)
        parts["self_bias"].append(b_o)
        y = y + update
        h = m.layer_norm(s + "/attention/layer_norm", y)
        update, writes, b_o = ct2_block(m, s + "/attention", heads, h, memory, None, zeroed("decoder", "cross", i), False)
        parts["cross"].append(writes)
        parts["cross_bias"].append(b_o)
        y = y + update
        mlp = m.ffn("decoder", s + "/ffn", m.layer_norm(s + "/ffn/layer_norm", y))
        b2 = m.v[s + "/ffn/linear_1/bias"]
        parts["mlp"].append(mlp[-1] - b2)
        parts["mlp_bias"].append(b2)
        y = y + mlp
        i += 1
    last = y[-1]
    final = m.layer_norm("decoder/layer_norm", last[None, :])[0] if "decoder/layer_norm/gamma" in m.v else last
    logits = m.dense("decoder/projection", final[None, :])[0]
    return parts, last, logits, i


def attribute_ct2(folder, source_text, target_text, position, target):
    from ct2_reference import Model  # this folder's independent CTranslate2 reader
    m = Model(folder)
    source_ids = [m.source.get(t, m.source["<unk>"]) for t in source_text.split()]
    ids = ([m.target["<s>"]] + [m.target.get(t, m.target["<unk>"]) for t in target_text.split()])[:position + 1]
    parts, last, logits, layers = ct2_run(m, source_ids, ids)
    target = int(np.argmax(logits)) if target is None else target
    clean = log_softmax(logits, target)
    u = m.v["decoder/projection/weight"][target]
    if "decoder/layer_norm/gamma" in m.v:
        centred = last - last.mean()
        scale = 1.0 / np.sqrt((centred * centred).mean() + 1e-5)
        w = scale * m.v["decoder/layer_norm/gamma"] * u
        w = w - w.mean()  # the centring, moved onto the direction
        norm_bias = float(m.v["decoder/layer_norm/beta"] @ u)
    else:
        w, norm_bias = u, 0.0
    heads = len(parts["self"][0])
    enc_layers = 0
    while "encoder/layer_%d/ffn/linear_0/weight" % enc_layers in m.v:
        enc_layers += 1
    def ablated(stack, kind, layers_of):
        return [[float(log_softmax(ct2_run(m, source_ids, ids, (stack, kind, l, h))[2], target) - clean) for h in range(heads)]
                for l in range(layers_of)]
    return {"target_id": target, "position": position, "logit": float(logits[target]), "log_prob": float(clean),
            "dla": [[float(x @ w) for x in layer] for layer in parts["self"]],
            "dla_cross": [[float(x @ w) for x in layer] for layer in parts["cross"]],
            "dla_mlp": [float(x @ w) for x in parts["mlp"]], "dla_embedding": float(parts["embedding"] @ w),
            "dla_position": float(parts["position"] @ w), "dla_attn_bias": [float(b @ w) for b in parts["self_bias"]],
            "dla_cross_bias": [float(b @ w) for b in parts["cross_bias"]],
            "dla_mlp_bias": [float(b @ w) for b in parts["mlp_bias"]], "dla_final_norm_bias": norm_bias,
            "dla_output_bias": float(m.v["decoder/projection/bias"][target]),
            "ablation": ablated("decoder", "self", layers), "ablation_cross": ablated("decoder", "cross", layers),
            "ablation_encoder": ablated("encoder", "self", enc_layers)}


def main():
    if sys.argv[1] == "--ct2":
        folder, source_text, target_text, position, target, out_path = sys.argv[2:8]
        result = attribute_ct2(folder, source_text, target_text, int(position), None if target == "-" else int(target))
        json.dump(result, open(out_path, "w"))
        return
    model, ids_text, position, target, out_path = sys.argv[1:6]
    ids = [int(i) for i in ids_text.split(",")]
    meta, tensors = read_gguf(model)
    result = attribute(meta, tensors, ids, int(position), None if target == "-" else int(target))
    json.dump(result, open(out_path, "w"))


if __name__ == "__main__":
    main()
