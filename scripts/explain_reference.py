#!/usr/bin/python3
"""Independent float64 NumPy reference for `attnviz explain` (issue 21). Shares no code with src/.

For one head h at one query i of a single attention layer (sentence + weights JSON, optional
--source sentence for cross-attention), in float64:
  q = x_q[i] W_Q^h + b_Q^h, k_j = x_kv[j] W_K^g + b_K^g   (g = h // (h_q / h_kv), RoPE when the
  file has a rope block: adjacent pairs (2m, 2m+1) turn by pos * theta^(-2m/dim))
  products_jd = q_d k_jd, scores_raw_j = scale * sum_d products_jd (scale from the file, else 1/sqrt(d_k))
  weights = softmax over allowed keys (causal when the file says so; key attention_mask)
  v_j = x_kv[j] W_V^g + b_V^g, weighted_values_j = weights_j v_j, output = sum_j weighted_values_j
and the circuits the slow way, from the full d_model x d_model matrices (never through d_k):
  singular values of W_QK = W_Q^h W_K^h^T and W_OV = W_V^g W_O^h (numpy.linalg.svd), eigenvalues
  of W_OV (numpy.linalg.eig, the d_v largest by modulus) when it is square.

    /usr/bin/python3 scripts/explain_reference.py LAYER.json [--source SOURCE.json] --head H EXPLAIN.json
    /usr/bin/python3 scripts/explain_reference.py MODEL.gguf --token-ids 1,403,407 --layer L --head H EXPLAIN.json

With a GGUF model (F32/F16/BF16; scripts/reference_forward.py's reader and layers, float64), the
layer's input is the forward pass's x / rms(x) and the weights are folded as TransformerLens's
fold_ln does (diag(attn_norm gain) W_Q, W_K, W_V; diag(output_norm gain) W_U), which gives the
same q, k, v; the copying score Σλ/Σ|λ| comes from the eigenvalues of the full
[n_vocab, n_vocab] matrix W_E W_V W_O W_U, and the QK token lists from the full W_QK's SVD.

compares with attnviz's explain.json, prints the largest absolute difference per field and exits
1 when one is above 1e-5 relative to the field's size, max(1, max |reference|): attnviz computes
in float32, whose spacing at stories260K's products (up to 70) is already 7.6e-6.
"""
import argparse
import json
import os
import sys

import numpy as np

TOLERANCE = 1e-5


def matrix(layer, name):
    return np.array(layer[name], dtype=np.float64)


def rotate(x, positions, rope):
    """x [n, d_k] of one head; interleaved pairs (2m, 2m+1) of the first `dim` dimensions."""
    dim = rope.get("dim") or x.shape[1]
    theta = rope.get("theta", 10000.0)
    assert rope.get("style", "interleaved") == "interleaved", "only interleaved RoPE is referenced here"
    angle = np.array(positions, dtype=np.float64)[:, None] * theta ** (-np.arange(0, dim, 2) / dim)[None, :]
    out = x.copy()
    a, b = x[:, 0:dim:2], x[:, 1:dim:2]
    out[:, 0:dim:2] = a * np.cos(angle) - b * np.sin(angle)
    out[:, 1:dim:2] = a * np.sin(angle) + b * np.cos(angle)
    return out


def reference(layer, source, head, query):
    x_q = matrix(layer, "embeddings")
    keys = source if source is not None else layer
    x_kv = matrix(keys, "embeddings")
    h_q = layer["num_heads"]
    h_kv = layer.get("num_kv_heads", h_q)
    w_q, w_k, w_v = matrix(layer, "W_Q"), matrix(layer, "W_K"), matrix(layer, "W_V")
    d_k = w_q.shape[1] // h_q
    d_v = w_v.shape[1] // h_kv
    g = head // (h_q // h_kv)
    cq, ck, cv = slice(head * d_k, (head + 1) * d_k), slice(g * d_k, (g + 1) * d_k), slice(g * d_v, (g + 1) * d_v)
    bias = lambda name, cols, width: matrix(layer, name)[cols] if name in layer else np.zeros(width)
    q = x_q[query:query + 1] @ w_q[:, cq] + bias("b_Q", cq, d_k)
    k = x_kv @ w_k[:, ck] + bias("b_K", ck, d_k)
    v = x_kv @ w_v[:, cv] + bias("b_V", cv, d_v)
    if "rope" in layer:
        q_positions = layer.get("positions", list(range(len(layer["tokens"]))))
        k_positions = keys.get("positions", list(range(len(keys["tokens"]))))
        q = rotate(q, [q_positions[query]], layer["rope"])
        k = rotate(k, k_positions, layer["rope"])
    q = q[0]
    scale = layer.get("scale", 1 / np.sqrt(d_k))
    products = k * q[None, :]
    scores_raw = scale * products.sum(axis=1)
    allowed = np.ones(len(keys["tokens"]), dtype=bool)
    if keys.get("attention_mask"):
        allowed &= np.array(keys["attention_mask"], dtype=bool)
    if layer.get("causal") and source is None:
        allowed &= np.arange(len(allowed)) <= query
    e = np.where(allowed, np.exp(scores_raw - scores_raw[allowed].max()), 0.0)
    weights = e / e.sum()
    weighted = v * weights[:, None]
    ref = {"q": q, "k": k, "products": products, "scores_raw": scores_raw, "weights": weights, "v": v,
           "weighted_values": weighted, "output": weighted.sum(axis=0), "masked": ~allowed,
           "scores": np.where(allowed, scores_raw, np.nan)}
    w_qk = w_q[:, cq] @ w_k[:, ck].T                       # [d_model_q, d_model_kv], the slow way
    ref["qk_singular_values"] = np.linalg.svd(w_qk, compute_uv=False)[:d_k]
    if "W_O" in layer:
        w_ov = w_v[:, cv] @ matrix(layer, "W_O")[head * d_v:(head + 1) * d_v, :]
        ref["ov_singular_values"] = np.linalg.svd(w_ov, compute_uv=False)[:d_v]
        if w_ov.shape[0] == w_ov.shape[1]:
            lam = np.linalg.eigvals(w_ov)
            ref["ov_eigenvalues"] = lam[np.argsort(-np.abs(lam), kind="stable")][:d_v]
    return ref


def model_layer(path, ids, layer_index):
    """The layer dict `reference` reads, for layer `layer_index` of a GGUF model run on `ids`, with
    norm gains folded; plus (W_E, folded W_U, pieces) for the vocabulary circuit."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import reference_forward as rf
    meta, t = rf.read_gguf(path)
    arch = meta["general.architecture"]
    n_heads = meta[arch + ".attention.head_count"]
    n_kv = meta.get(arch + ".attention.head_count_kv", n_heads)
    d_model = meta[arch + ".embedding_length"]
    d_head = d_model // n_heads
    eps = meta.get(arch + ".attention.layer_norm_rms_epsilon", 1e-5)
    x = t["token_embd.weight"][ids]
    ones = np.ones(d_model)
    for l in range(layer_index):  # the layers before, exactly as reference_forward runs them
        p = "blk.%d." % l
        h = rf.rms_norm(x, t[p + "attn_norm.weight"], eps)
        q = rf.rope(h @ t[p + "attn_q.weight"].T, n_heads, d_head, meta.get(arch + ".rope.dimension_count", d_head),
                    meta.get(arch + ".rope.freq_base", 10000.0))
        k = rf.rope(h @ t[p + "attn_k.weight"].T, n_kv, d_head, meta.get(arch + ".rope.dimension_count", d_head),
                    meta.get(arch + ".rope.freq_base", 10000.0))
        v = h @ t[p + "attn_v.weight"].T
        n = len(ids)
        causal = np.tril(np.ones((n, n), dtype=bool))
        outs = []
        for head in range(n_heads):
            g = head // (n_heads // n_kv)
            qh, kh, vh = (m[:, c * d_head:(c + 1) * d_head] for m, c in ((q, head), (k, g), (v, g)))
            scores = np.where(causal, qh @ kh.T / np.sqrt(d_head), -np.inf)
            w = np.exp(scores - scores.max(axis=1, keepdims=True))
            outs.append((w / w.sum(axis=1, keepdims=True)) @ vh)
        x = x + np.concatenate(outs, axis=1) @ t[p + "attn_output.weight"].T
        h = rf.rms_norm(x, t[p + "ffn_norm.weight"], eps)
        gate, up = h @ t[p + "ffn_gate.weight"].T, h @ t[p + "ffn_up.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ t[p + "ffn_down.weight"].T
    p = "blk.%d." % layer_index
    gain = t[p + "attn_norm.weight"][:, None]
    layer = {"tokens": [str(i) for i in ids], "embeddings": rf.rms_norm(x, ones, eps).tolist(), "num_heads": n_heads,
             "num_kv_heads": n_kv, "causal": True, "scale": 1 / np.sqrt(d_head),
             "rope": {"style": "interleaved", "theta": meta.get(arch + ".rope.freq_base", 10000.0),
                      "dim": meta.get(arch + ".rope.dimension_count", d_head)}}
    for name, tensor in (("W_Q", "attn_q"), ("W_K", "attn_k"), ("W_V", "attn_v")):
        layer[name] = (gain * t[p + tensor + ".weight"].T).tolist()
    layer["W_O"] = t[p + "attn_output.weight"].T.tolist()
    w_e = t["token_embd.weight"]
    w_u = t["output_norm.weight"][:, None] * t.get("output.weight", w_e).T
    return layer, (w_e, w_u, meta.get("tokenizer.ggml.tokens"))


def vocabulary_reference(layer, head, vocabulary):
    """Copying score of the full OV circuit and the QK token lists, the slow way."""
    w_e, w_u, pieces = vocabulary
    h_q, h_kv = layer["num_heads"], layer.get("num_kv_heads", layer["num_heads"])
    w_q, w_k, w_v, w_o = (np.array(layer[n]) for n in ("W_Q", "W_K", "W_V", "W_O"))
    d_k = w_q.shape[1] // h_q
    g = head // (h_q // h_kv)
    cq, ck = slice(head * d_k, (head + 1) * d_k), slice(g * d_k, (g + 1) * d_k)
    full = w_e @ (w_v[:, ck] @ w_o[cq, :]) @ w_u                    # [n_vocab, n_vocab]
    lam = np.linalg.eigvals(full)
    u, s, vt = np.linalg.svd(w_q[:, cq] @ w_k[:, ck].T)
    lists = []
    for i in range(5):
        pq, pk = w_e @ u[:, i], w_e @ vt[i, :]
        name = lambda rows: [pieces[r] for r in rows]
        lists.append((name(np.argsort(-pq, kind="stable")[:8]), name(np.argsort(pq, kind="stable")[:8]),
                      name(np.argsort(-pk, kind="stable")[:8]), name(np.argsort(pk, kind="stable")[:8])))
    return lam.sum().real / np.abs(lam).sum(), lists


def eigen_key(values):
    """Eigenvalues as a sorted multiset (conjugate pairs share a modulus, so order by (re, im))."""
    return sorted((round(z.real, 6), round(z.imag, 6)) for z in values)


def compare(ref, got):
    """Largest |difference| per field (nan for a structural mismatch)."""
    diffs = {}
    for name in ("q", "k", "products", "scores_raw", "weights", "v", "weighted_values", "output"):
        a, b = np.array(got[name], dtype=np.float64), ref[name]
        diffs[name] = np.abs(a - b).max() / max(1.0, np.abs(b).max()) if a.shape == b.shape else np.nan
    masked = np.array(got["masked"], dtype=bool)
    scores = np.array([np.nan if s is None else s for s in got["scores"]], dtype=np.float64)
    same_nulls = np.array_equal(masked, ref["masked"]) and np.array_equal(np.isnan(scores), ref["masked"])
    size = max(1.0, np.nanmax(np.abs(ref["scores"])))
    diffs["scores"] = np.nanmax(np.abs(scores - ref["scores"])) / size if same_nulls else np.nan
    c = got["circuits"]
    diffs["qk_singular_values"] = np.abs(np.array(c["qk_singular_values"]) - ref["qk_singular_values"]).max()
    for name in ("ov_singular_values", "ov_eigenvalues"):
        if name not in ref:
            diffs[name] = 0.0 if c[name] is None else np.nan
        elif c[name] is None:
            diffs[name] = np.nan
        elif name == "ov_singular_values":
            diffs[name] = np.abs(np.array(c[name]) - ref[name]).max()
        else:
            got_values = np.array([complex(re, im) for re, im in c[name]])
            a, b = np.array(eigen_key(got_values)), np.array(eigen_key(ref[name]))
            diffs[name] = np.abs(a - b).max() if a.shape == b.shape else np.nan
    return diffs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("explain")
    parser.add_argument("--source")
    parser.add_argument("--head", type=int, required=True)
    parser.add_argument("--token-ids")
    parser.add_argument("--layer", type=int, dest="layer_index")
    parser.add_argument("--view-only", action="store_true",
                        help="compare the neuron view only (a model's layer against its exported JSON, whose "
                             "weights are not folded)")
    args = parser.parse_args()
    got = json.load(open(args.explain, encoding="utf-8"))
    if args.token_ids:
        layer, vocabulary = model_layer(args.input, [int(i) for i in args.token_ids.split(",")], args.layer_index)
        source = None
    else:
        layer, source, vocabulary = json.load(open(args.input, encoding="utf-8")), None, None
        source = json.load(open(args.source, encoding="utf-8")) if args.source else None
    diffs = compare(reference(layer, source, args.head, got["query"]), got)
    if args.view_only:
        diffs = {k: d for k, d in diffs.items() if k not in ("qk_singular_values", "ov_singular_values", "ov_eigenvalues")}
    if vocabulary is not None:
        copying, lists = vocabulary_reference(layer, args.head, vocabulary)
        diffs["copying_score"] = abs(got["circuits"]["copying_score"] - copying)
        mismatched = 0
        for want, d in zip(lists, got["qk_top_tokens"]):
            have = (d["query_top"], d["query_bottom"], d["key_top"], d["key_bottom"])
            flipped = (d["query_bottom"], d["query_top"], d["key_bottom"], d["key_top"])
            mismatched += tuple(want) not in (have, flipped)  # a singular pair's sign is arbitrary
        diffs["qk_top_tokens (lists differing)"] = float(mismatched + (len(got["qk_top_tokens"]) != len(lists)))
    worst = max(diffs.values(), key=lambda d: np.inf if np.isnan(d) else d)
    for name, d in diffs.items():
        print("  %-32s %.3g" % (name, d))  # vectors: relative to max(1, max |ref|); circuits: absolute
    ok = not np.isnan(worst) and worst <= TOLERANCE
    print("%s %s head %d query %d: max |diff| %.3g (tolerance %g)" % ("ok" if ok else "FAIL", args.input, args.head,
                                                                     got["query"], worst, TOLERANCE))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
