#!/usr/bin/env python3
"""Independent float64 reference for attnviz's --measure norms|alti and --flow (issue 20).

Shares no code with attnviz (src/): the GGUF reader, RMSNorm and RoPE come from
scripts/reference_forward.py; everything else is written here from the papers:
  norms        Kobayashi et al. 2020, Eq. 6: N^h_ij = ||a^h_ij f^h(x_j)||, f^h(x) = (x W_V^g + b_V^g) W_O^h
  alti         Ferrando et al. 2022: T_i(x_j) = sum_h a^h_ij f^h(x_j) + [i == j] r_j, y_i = sum_j T_i(x_j) + b_O,
               c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1), rows normalised; alti_rollout R_l = C_l ... C_0
  flow         Abnar & Zuidema 2020, §3: networkx.maximum_flow_value over the layered graph with capacities
               A^_l = 1/2 mean_h A_l + 1/2 I (rows renormalised), rows of the result normalised

    /usr/bin/python3 scripts/measures_reference.py layer LAYER.json OUT.json
    /usr/bin/python3 scripts/measures_reference.py model MODEL.gguf 1,403,407 [--flow] OUT.json
    /usr/bin/python3 scripts/measures_reference.py ct2 MODEL_DIR "SOURCE TOKENS" "TARGET TOKENS" OUT.json
    /usr/bin/python3 scripts/measures_reference.py bert MODEL.gguf 2,7,12,3 OUT.json

Writes {"norms", "value_norms", "layer_norms", "alti", "head_sum"} for a layer (alti only when W_O maps
back to the input width), and {"layers": [{...}], "alti_rollout"} and with --flow "attention_flow" for a model; for a CTranslate2
model (the forward pass of scripts/ct2_reference.py), {"blocks": [{"stack", "kind", "layer", norms…}]}
for every block in the order the model runs them, cross-attention included. For a BERT GGUF (post-LN,
the forward pass of scripts/bert_reference.py, GELU as llama.cpp computes it: the tanh formula
looked up in a float16 table) {"layers", "alti_rollout"}:
ALTI with the attention output LayerNorm's linear part applied to every T_i(x_j), sigma of the real
y_i, L(b_O) + beta in the output only (Ferrando et al. 2022, §3; mt-upc/transformer-contributions), and
each layer's sum_j L(T_i(x_j)) + L(b_O) + beta checked against the LayerNorm output the forward pass feeds on.
"""
import json
import os
import sys

import networkx as nx
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bert_reference import gelu, layer_norm  # noqa: E402
from reference_forward import read_gguf, rms_norm, rope  # noqa: E402


def softmax_rows(scores):
    out = np.zeros_like(scores)
    for i, row in enumerate(scores):
        finite = np.isfinite(row)
        if finite.any():
            e = np.where(finite, np.exp(row - row[finite].max()), 0.0)
            out[i] = e / e.sum()
    return out


def linear_norm(t, gamma, sigma):
    """A LayerNorm's linear part with a given sigma: gamma * (t - mean(t)) / sigma, per row."""
    return gamma * (t - t.mean(axis=-1, keepdims=True)) / sigma


def measures(weights, f, residual, b_o, post_norm=None):
    """weights [h][n_q][n_k], f [h][n_k][d]: the norms, and ALTI when residual is given; post_norm =
    (gamma, beta, eps) for a post-LN block (the LayerNorm's linear part, sigma from the real y_i)."""
    heads, n_q, n_k = weights.shape
    value_norms = np.linalg.norm(f, axis=2)                          # [h, n_k]
    norms = weights * value_norms[:, None, :]                        # [h, n_q, n_k]
    mixed = np.einsum("hij,hjd->ijd", weights, f)                    # [n_q, n_k, d]: sum_h a f
    out = {"norms": norms, "value_norms": value_norms, "layer_norms": np.linalg.norm(mixed, axis=2),
           "head_sum": mixed.sum(axis=1) + (b_o if b_o is not None else 0)}
    if residual is not None:
        alti = np.zeros((n_q, n_k))
        ln_outputs = np.zeros((n_q, f.shape[2]))
        for i in range(n_q):
            t = mixed[i].copy()
            t[i] += residual[i]
            bias = b_o if b_o is not None else np.zeros(t.shape[1])
            y = t.sum(axis=0) + bias
            if post_norm is not None:
                gamma, beta, eps = post_norm
                sigma = np.sqrt(((y - y.mean()) ** 2).mean() + eps)
                t = linear_norm(t, gamma, sigma)
                y = t.sum(axis=0) + linear_norm(bias, gamma, sigma) + beta
                ln_outputs[i] = y
            c = np.maximum(0.0, np.abs(y).sum() - np.abs(y[None, :] - t).sum(axis=1))
            alti[i] = c / c.sum() if c.sum() > 0 else c
        out["alti"] = alti
        if post_norm is not None:
            out["ln_outputs"] = ln_outputs
    return out


def attention_weights(q, k, n_heads, n_kv, d_k, scale, allowed):
    w = []
    for h in range(n_heads):
        g = h // (n_heads // n_kv)
        s = q[:, h * d_k:(h + 1) * d_k] @ k[:, g * d_k:(g + 1) * d_k].T * scale
        w.append(softmax_rows(np.where(allowed, s, -np.inf)))
    return np.array(w)


def value_vectors(v, w_o, n_heads, n_kv, d_v):
    f = []
    for h in range(n_heads):
        g = h // (n_heads // n_kv)
        f.append(v[:, g * d_v:(g + 1) * d_v] @ w_o[h * d_v:(h + 1) * d_v])
    return np.array(f)


def layer_reference(path):
    d = json.load(open(path))
    x = np.array(d["embeddings"], dtype=np.float64)
    n = x.shape[0]
    n_heads = d["num_heads"]
    n_kv = d.get("num_kv_heads", n_heads)
    mat = lambda key: np.array(d[key], dtype=np.float64)  # noqa: E731
    vec = lambda key, width: np.array(d[key], dtype=np.float64) if key in d else np.zeros(width)  # noqa: E731
    w_q, w_k, w_v, w_o = mat("W_Q"), mat("W_K"), mat("W_V"), mat("W_O")
    q, k = x @ w_q + vec("b_Q", w_q.shape[1]), x @ w_k + vec("b_K", w_k.shape[1])
    v = x @ w_v + vec("b_V", w_v.shape[1])
    d_k = w_q.shape[1] // n_heads
    if d.get("rope"):
        r = d["rope"]
        assert r["style"] == "interleaved"
        q = rope(q, n_heads, d_k, r.get("dim", d_k), r.get("theta", 10000.0))
        k = rope(k, n_kv, d_k, r.get("dim", d_k), r.get("theta", 10000.0))
    allowed = np.tril(np.ones((n, n), dtype=bool)) if d.get("causal") else np.ones((n, n), dtype=bool)
    scale = d.get("scale", 1 / np.sqrt(d_k))
    weights = attention_weights(q, k, n_heads, n_kv, d_k, scale, allowed)
    f = value_vectors(v, w_o, n_heads, n_kv, w_v.shape[1] // n_kv)
    b_o = vec("b_O", w_o.shape[1])
    return measures(weights, f, x if w_o.shape[1] == x.shape[1] else None, b_o)


def residual_mix(head_mean):
    n = head_mean.shape[0]
    a = 0.5 * head_mean + 0.5 * np.eye(n)
    return a / a.sum(axis=1, keepdims=True)


def attention_flow(mixed):
    """Max-flow from the last layer's node i to input node j through capacities mixed[l][i][j]."""
    layers, n = len(mixed), mixed[0].shape[0]
    graph = nx.DiGraph()
    for l, a in enumerate(mixed):
        for i in range(n):
            for j in range(n):
                if a[i, j] > 0:
                    graph.add_edge((l + 1, i), (l, j), capacity=a[i, j])
    flow = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if graph.has_node((layers, i)) and graph.has_node((0, j)):
                flow[i, j] = nx.maximum_flow_value(graph, (layers, i), (0, j))
        flow[i] /= flow[i].sum()
    return flow


def model_reference(path, ids, flow):
    meta, t = read_gguf(path)
    arch = meta["general.architecture"]
    n_layers, n_heads = meta[arch + ".block_count"], meta[arch + ".attention.head_count"]
    n_kv = meta.get(arch + ".attention.head_count_kv", n_heads)
    d_model = meta[arch + ".embedding_length"]
    d_k = d_model // n_heads
    eps = meta.get(arch + ".attention.layer_norm_rms_epsilon", 1e-5)
    theta = meta.get(arch + ".rope.freq_base", 10000.0)
    rope_dim = meta.get(arch + ".rope.dimension_count", d_k)
    n = len(ids)
    x = t["token_embd.weight"][ids]
    causal = np.tril(np.ones((n, n), dtype=bool))
    layers, mixed, rollout = [], [], None
    for l in range(n_layers):
        p = "blk.%d." % l
        h = rms_norm(x, t[p + "attn_norm.weight"], eps)
        q = rope(h @ t[p + "attn_q.weight"].T, n_heads, d_k, rope_dim, theta)
        k = rope(h @ t[p + "attn_k.weight"].T, n_kv, d_k, rope_dim, theta)
        v = h @ t[p + "attn_v.weight"].T
        w_o = t[p + "attn_output.weight"].T
        weights = attention_weights(q, k, n_heads, n_kv, d_k, 1 / np.sqrt(d_k), causal)
        m = measures(weights, value_vectors(v, w_o, n_heads, n_kv, d_k), x, None)
        rollout = m["alti"] if rollout is None else m["alti"] @ rollout
        m["alti_rollout"] = rollout
        mixed.append(residual_mix(weights.mean(axis=0)))
        layers.append(m)
        x = x + m["head_sum"]
        h = rms_norm(x, t[p + "ffn_norm.weight"], eps)
        gate, up = h @ t[p + "ffn_gate.weight"].T, h @ t[p + "ffn_up.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ t[p + "ffn_down.weight"].T
    result = {"layers": layers, "alti_rollout": [m["alti_rollout"] for m in layers]}
    if flow:  # networkx takes minutes beyond ~16 tokens
        result["attention_flow"] = attention_flow(mixed)
    return result


def ct2_reference(folder, source, target):
    """Norms of every block of a CTranslate2 model, and ALTI of its self-attention blocks (pre- or post-norm):
    ct2_reference.Model's forward pass, with each attention call's value vectors f^h(x_j) = v^h_j W_O^h
    taken from the block's output Dense (self-attention linear_1, cross-attention linear_2), and the
    residual entering the block from the sublayer that calls it."""
    from ct2_reference import EPS, Model

    class Measured(Model):
        def __init__(self, path):
            super().__init__(path)
            self.blocks, self.scope = [], None

        def sublayer(self, pre_norm, norm, x, fn):
            self.residual = x  # the residual stream entering the block, for ALTI
            self.post_norm = None if pre_norm else (self.v[norm + "/gamma"], self.v[norm + "/beta"], EPS)
            return super().sublayer(pre_norm, norm, x, fn)

        def dense(self, scope, x):
            if scope.endswith("/linear_0"):  # the block's first projection: its scope is the block's
                self.scope = scope[: -len("/linear_0")]
            return super().dense(scope, x)

        def attention(self, heads, q, k, v, mask):
            weights, context = super().attention(heads, q, k, v, mask)
            cross = not self.scope.endswith("/self_attention")
            w_o = self.v[self.scope + ("/linear_2" if cross else "/linear_1") + "/weight"].T
            d_v = v.shape[1] // heads
            f = np.array([v[:, h * d_v:(h + 1) * d_v] @ w_o[h * d_v:(h + 1) * d_v] for h in range(heads)])
            b_o = self.v[self.scope + ("/linear_2" if cross else "/linear_1") + "/bias"]
            block = measures(np.array(weights), f, None if cross else self.residual, b_o, self.post_norm)
            block.pop("ln_outputs", None)
            del block["head_sum"]
            stack, layer = self.scope.split("/")[0], int(self.scope.split("/")[1].split("_")[1])
            block.update({"stack": stack, "kind": "cross" if cross else "self", "layer": layer})
            self.blocks.append(block)
            return weights, context

    model = Measured(folder)
    unk_s, unk_t = model.source["<unk>"], model.target["<unk>"]
    source_ids = [model.source.get(t, unk_s) for t in source.split()]
    input_ids = [model.target["<s>"]] + [model.target.get(t, unk_t) for t in target.split()]
    model.run(source_ids, input_ids)
    return {"blocks": model.blocks}


def bert_reference(path, ids):
    meta, t = read_gguf(path)
    n_layers, n_heads = meta["bert.block_count"], meta["bert.attention.head_count"]
    eps = meta["bert.attention.layer_norm_epsilon"]
    n = len(ids)
    x = t["token_embd.weight"][ids] + t["token_types.weight"][[0] * n] + t["position_embd.weight"][:n]
    x = layer_norm(x, t["token_embd_norm.weight"], t["token_embd_norm.bias"], eps)
    d_k = x.shape[1] // n_heads
    every_key = np.ones((n, n), dtype=bool)
    layers, rollout = [], None
    for l in range(n_layers):
        p = "blk.%d." % l

        def linear(name, h):
            return h @ t[p + name + ".weight"].T + t[p + name + ".bias"]

        q, k, v = linear("attn_q", x), linear("attn_k", x), linear("attn_v", x)
        weights = attention_weights(q, k, n_heads, n_heads, d_k, 1 / np.sqrt(d_k), every_key)
        gamma, beta = t[p + "attn_output_norm.weight"], t[p + "attn_output_norm.bias"]
        b_o = t[p + "attn_output.bias"]
        m = measures(weights, value_vectors(v, t[p + "attn_output.weight"].T, n_heads, n_heads, d_k), x, b_o, (gamma, beta, eps))
        x = layer_norm(x + m["head_sum"], gamma, beta, eps)  # head_sum: the attention output, b_O included
        # The decomposition adds up to what the next sublayer reads: sum_j L(T_i(x_j)) + L(b_O) + beta = LN(y_i).
        assert np.allclose(m["ln_outputs"], x, rtol=0, atol=1e-9), np.abs(m["ln_outputs"] - x).max()
        rollout = m["alti"] if rollout is None else m["alti"] @ rollout
        m["alti_rollout"] = rollout
        del m["ln_outputs"]
        layers.append(m)
        x = layer_norm(x + linear("ffn_down", gelu(linear("ffn_up", x), "ggml")), t[p + "layer_output_norm.weight"],
                       t[p + "layer_output_norm.bias"], eps)
    return {"layers": layers, "alti_rollout": [m["alti_rollout"] for m in layers]}


def to_lists(value):
    if isinstance(value, dict):
        return {k: to_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_lists(v) for v in value]
    return value.tolist() if isinstance(value, np.ndarray) else value


def main():
    if sys.argv[1] == "layer":
        result = layer_reference(sys.argv[2])
    elif sys.argv[1] == "bert":
        result = bert_reference(sys.argv[2], [int(i) for i in sys.argv[3].split(",")])
    elif sys.argv[1] == "ct2":
        result = ct2_reference(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        result = model_reference(sys.argv[2], [int(i) for i in sys.argv[3].split(",")], "--flow" in sys.argv)
    json.dump(to_lists(result), open(sys.argv[-1], "w"))


if __name__ == "__main__":
    main()
