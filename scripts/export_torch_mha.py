#!/usr/bin/python3
"""Export a torch.nn.MultiheadAttention layer and its input to attnviz's JSON files.

Writes a weights file (num_heads, W_Q, W_K, W_V, biases, W_O, b_O) and a sentence file
(tokens, embeddings, attention_mask), plus a source file for cross-attention, so that

    attnviz dump SENTENCE.json WEIGHTS.json [--source SOURCE.json] [--causal] --outputs -o out.json

reproduces the layer's attn_output_weights (average_attn_weights=False) and attn_output.
Supported: fused in_proj_weight (kdim == vdim == embed_dim) and separate q/k/v projections
(kdim, vdim != embed_dim), with or without biases, key padding masks. Not supported (they
have no counterpart in attnviz's input): add_bias_kv and add_zero_attn.

Importable (export_mha) or run as a script (--demo writes a seeded random example).
Needs PyTorch (Debian: python3-torch); run it with /usr/bin/python3.
"""

import argparse
import json
import math
import os
import sys

import torch
from torch import nn


def _as_rows(x, mha, name):
    """A [n, d] tensor from [n, d] or a batch of one ([n, 1, d], or [1, n, d] if batch_first)."""
    x = torch.as_tensor(x)
    if x.dim() == 3:
        batch_axis = 0 if mha.batch_first else 1
        if x.shape[batch_axis] != 1:
            raise ValueError(f"{name}: batch of {x.shape[batch_axis]}; attnviz takes one sequence, "
                             "export each batch element separately")
        x = x.squeeze(batch_axis)
    if x.dim() != 2:
        raise ValueError(f"{name}: expected [n, d] or a batch of one, got shape {list(x.shape)}")
    return x


def _floats(t):
    """Nested lists of Python floats. repr(float(x)) of a float32 value reads back as exactly
    that float32 (float64 holds every float32 exactly), which is what json.dumps writes."""
    return t.detach().to(torch.float64).cpu().tolist()


def _transposed(w):
    """PyTorch's Linear stores weight as [out, in] and computes y = x W^T + b (column-vector
    convention). attnviz uses the row-vector convention Q = X W_Q + b_Q with W_Q as
    [in, out] = [d_model, h*d_k], so every projection matrix is written transposed."""
    return _floats(w.t())


def _attention_mask(key_padding_mask, n, name):
    """PyTorch's key_padding_mask says True (or nonzero) = padding, ignore this key; attnviz's
    attention_mask says the opposite: 1 = real token, 0 = padding. So it is inverted here.
    A float key_padding_mask (additive, -inf = pad) is treated as pad where it is -inf."""
    m = torch.as_tensor(key_padding_mask)
    if m.dim() == 2 and m.shape[0] == 1:
        m = m[0]
    if m.dim() != 1 or m.numel() != n:
        raise ValueError(f"{name}: expected [{n}] or [1, {n}] (one value per key token), got {list(m.shape)}")
    padded = torch.isinf(m) & (m < 0) if m.is_floating_point() else m.to(torch.bool)
    return [0 if p else 1 for p in padded.tolist()]


def _write_json(path, obj):
    """One key per line and one matrix row per line: readable, and still plain JSON."""
    def value(v):
        if isinstance(v, list) and v and isinstance(v[0], list):
            return "[\n  " + ",\n  ".join(json.dumps(row) for row in v) + "\n ]"
        return json.dumps(v, ensure_ascii=False)
    body = ",\n".join(f" {json.dumps(k)}: {value(v)}" for k, v in obj.items())
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("{\n" + body + "\n}\n")
    os.replace(tmp, path)


def _projections(mha, separate_values):
    """(W_Q, W_K, W_V) as PyTorch [out, in] tensors, and (b_Q, b_K, b_V) or Nones.
    separate_values: the keys and values come from different inputs, so the source file holds
    [key_x | value_x] side by side and W_K / W_V get zero rows for the other half."""
    e = mha.embed_dim
    if mha._qkv_same_embed_dim:
        w_q, w_k, w_v = mha.in_proj_weight.split(e, dim=0)
    else:
        w_q, w_k, w_v = mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight
    if separate_values:
        w_k = torch.cat([w_k, torch.zeros(e, w_v.shape[1], dtype=w_k.dtype)], dim=1)
        w_v = torch.cat([torch.zeros(e, w_k.shape[1] - w_v.shape[1], dtype=w_v.dtype), w_v], dim=1)
    biases = (None, None, None)
    if mha.in_proj_bias is not None:
        biases = mha.in_proj_bias.split(e, dim=0)
    return (w_q, w_k, w_v), biases


def weights_json(mha, separate_values=False):
    """The attnviz weights object for `mha` (see _projections for separate_values)."""
    if mha.bias_k is not None or mha.bias_v is not None:
        raise ValueError("add_bias_kv=True appends a learned key/value token; attnviz has no equivalent")
    if mha.add_zero_attn:
        raise ValueError("add_zero_attn=True appends a zero key/value token; attnviz has no equivalent")
    (w_q, w_k, w_v), (b_q, b_k, b_v) = _projections(mha, separate_values)
    out = {"num_heads": mha.num_heads, "W_Q": _transposed(w_q), "W_K": _transposed(w_k),
           "W_V": _transposed(w_v)}
    if b_q is not None:
        out.update({"b_Q": _floats(b_q), "b_K": _floats(b_k), "b_V": _floats(b_v)})
    out["W_O"] = _transposed(mha.out_proj.weight)
    if mha.out_proj.bias is not None:
        out["b_O"] = _floats(mha.out_proj.bias)
    # PyTorch scales q by 1/sqrt(head_dim), attnviz's default; written out so the file says so.
    out["scale"] = 1.0 / math.sqrt(mha.head_dim)
    return out


def export_mha(mha, query_tokens, query_x, path_weights, path_sentence, path_source=None,
               key_tokens=None, key_x=None, value_x=None, key_padding_mask=None):
    """Writes `mha` to path_weights and the input to path_sentence (and path_source).

    Self-attention (key_x None): path_sentence gets query_tokens, query_x [n, embed_dim] and,
    if key_padding_mask is given, the attention_mask. Cross-attention: key_x [n_k, kdim] (and
    value_x [n_k, vdim] if it is not key_x) go to path_source with key_tokens and the mask.
    When the values differ from the keys, the source embeddings are [key_x | value_x] and W_K,
    W_V read their half (zero rows for the other), since attnviz has one key/value input.
    key_padding_mask follows PyTorch: [n_k] (or [1, n_k]), True = padding.
    Returns the list of paths written."""
    query_x = _as_rows(query_x, mha, "query_x")
    query_tokens = [str(t) for t in query_tokens]
    if len(query_tokens) != query_x.shape[0]:
        raise ValueError(f"{len(query_tokens)} query tokens for {query_x.shape[0]} query rows")
    sentence = {"tokens": query_tokens, "embeddings": _floats(query_x)}
    separate_values = False
    if key_x is None:
        if value_x is not None or path_source is not None:
            raise ValueError("cross-attention needs key_x (and path_source)")
        if key_padding_mask is not None:
            sentence["attention_mask"] = _attention_mask(key_padding_mask, len(query_tokens), "key_padding_mask")
        written = [path_sentence]
    else:
        if path_source is None:
            raise ValueError("cross-attention (key_x given) needs path_source")
        key_x = _as_rows(key_x, mha, "key_x")
        key_tokens = [str(t) for t in key_tokens] if key_tokens is not None else [
            f"k{i}" for i in range(key_x.shape[0])]
        if len(key_tokens) != key_x.shape[0]:
            raise ValueError(f"{len(key_tokens)} key tokens for {key_x.shape[0]} key rows")
        kv = key_x
        if value_x is not None:
            value_x = _as_rows(value_x, mha, "value_x")
            separate_values = value_x is not key_x and not torch.equal(value_x, key_x)
            if separate_values:
                kv = torch.cat([key_x, value_x], dim=1)
        if not separate_values and mha.kdim != mha.vdim:
            raise ValueError(f"kdim {mha.kdim} != vdim {mha.vdim}: pass value_x as well")
        source = {"tokens": key_tokens, "embeddings": _floats(kv)}
        if key_padding_mask is not None:
            source["attention_mask"] = _attention_mask(key_padding_mask, len(key_tokens), "key_padding_mask")
        _write_json(path_source, source)
        written = [path_sentence, path_source]
    weights = weights_json(mha, separate_values)
    # Said in the file, so that attnviz refuses to run it without its source (--source) rather
    # than failing on a width mismatch the user cannot place.
    weights["attention"] = "self" if key_x is None else "cross"
    if os.path.abspath(path_weights) == os.path.abspath(path_sentence):
        sentence.update(weights)
    else:
        _write_json(path_weights, weights)
        written.insert(0, path_weights)
    _write_json(path_sentence, sentence)
    return written


def attnviz_command():
    """The attnviz executable as a command that runs from the current directory: the repository's
    build/attnviz (the README's build folder) relative to it, e.g. ./build/attnviz at the repository
    root. A bare "attnviz" would need the binary on PATH, which the build does not do."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.relpath(os.path.join(root, "build", "attnviz"))
    return path if path.startswith(("/", ".")) else "./" + path


def _demo(folder, seed):
    """A seeded random cross-attention layer with kdim != embed_dim, biases and a padded key."""
    torch.manual_seed(seed)
    mha = nn.MultiheadAttention(16, 4, kdim=12, vdim=12).eval()
    nn.init.normal_(mha.in_proj_bias)
    query_tokens = ["the", "cat", "sat"]
    key_tokens = ["le", "chat", "<pad>"]
    x_q, x_kv = torch.randn(3, 16), torch.randn(3, 12)
    pad = torch.tensor([False, False, True])
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, name) for name in ("weights.json", "sentence.json", "source.json")]
    export_mha(mha, query_tokens, x_q, *paths, key_tokens=key_tokens, key_x=x_kv, key_padding_mask=pad)
    with torch.no_grad():
        _, weights = mha(x_q.unsqueeze(1), x_kv.unsqueeze(1), x_kv.unsqueeze(1), key_padding_mask=pad.unsqueeze(0),
                         need_weights=True, average_attn_weights=False)
    for p in paths:
        print("wrote", p)
    print(f"\n{attnviz_command()} dump {paths[1]} {paths[0]} --source {paths[2]} --outputs "
          f"-o {os.path.join(folder, 'attention.json')}")
    print("should give, for head 0 (PyTorch's attn_output_weights[0, 0]):")
    for row in weights[0, 0].tolist():
        print("  " + " ".join(f"{w:.6f}" for w in row))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] + "\n\nAs a library: from export_torch_mha import export_mha "
        "(see its docstring). As a script: --demo FOLDER writes weights.json, sentence.json and source.json "
        "for a seeded random cross-attention layer and prints the attnviz command and PyTorch's weights "
        "to compare with.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", metavar="FOLDER", required=True,
                        help="write a random example layer and input into FOLDER")
    parser.add_argument("--seed", type=int, default=0, help="random seed for --demo (default 0)")
    args = parser.parse_args(argv)
    _demo(args.demo, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
