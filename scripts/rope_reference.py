#!/usr/bin/python3
"""Independent float64 NumPy reference for attention with rotary position embeddings (RoPE),
and the generator of tests/rope_golden/*.json.

RoPE (Su et al. 2021, "RoFormer", Eq. 34): within each head, pair i of a query or key vector
at position p is turned by the angle p * theta^(-2i/rope_dim), i = 0 .. rope_dim/2 - 1; only
the first rope_dim dimensions of each head rotate. Two layouts of the pairs are in use:
  interleaved  pairs (2i, 2i+1)            GPT-J, Meta's LLaMA, llama2.c, GGUF
  half         pairs (i, i + rope_dim/2)   GPT-NeoX, Hugging Face LLaMA (rotate_half)
The two are written here in the two ways their own code bases write them (complex numbers for
interleaved, as Meta's llama/model.py; cos/sin with rotate_half, as HF's modeling_llama.py), so
they check each other as well as attnviz (src/attention/rope.cpp).

Attention: Q = X_q W_Q + b_Q, K = X_kv W_K + b_K, RoPE on Q and K of every head, then
A_h = softmax(Q_h K_g^T * scale + mask), g = h // (h / h_kv) (grouped-query attention),
scale = 1/sqrt(d_k) unless given; a row with no allowed key is all zeros.

Usage: scripts/rope_reference.py [--check] [--out tests/rope_golden]
  Writes the golden cases and runs the self-checks (properties; stories260K without RoPE
  against the data file's own reference). --check runs the self-checks only.
"""

import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORIES = "data/stories260k/layer0.json"


def frequencies(rope_dim, theta):
    """omega_i = theta^(-2i/rope_dim), i = 0 .. rope_dim/2 - 1."""
    return theta ** (-np.arange(0, rope_dim, 2, dtype=np.float64) / rope_dim)


def rope_interleaved(x, positions, rope_dim, theta):
    """x [n, d_k] of one head. Pairs (2i, 2i+1) as complex numbers z_i = x_2i + j x_2i+1,
    multiplied by exp(j p omega_i) (Meta's apply_rotary_emb)."""
    z = x[:, :rope_dim:2] + 1j * x[:, 1:rope_dim:2]                    # [n, rope_dim/2]
    z = z * np.exp(1j * np.outer(positions, frequencies(rope_dim, theta)))
    out = x.copy()
    out[:, 0:rope_dim:2], out[:, 1:rope_dim:2] = z.real, z.imag
    return out


def rope_half(x, positions, rope_dim, theta):
    """x [n, d_k] of one head. x * cos + rotate_half(x) * sin on the first rope_dim dims, with
    cos/sin of the angles repeated for both halves (HF's apply_rotary_pos_emb)."""
    angles = np.outer(positions, frequencies(rope_dim, theta))          # [n, rope_dim/2]
    angles = np.concatenate([angles, angles], axis=1)                   # [n, rope_dim]
    r = x[:, :rope_dim]
    half = rope_dim // 2
    rotated = np.concatenate([-r[:, half:], r[:, :half]], axis=1)       # rotate_half
    out = x.copy()
    out[:, :rope_dim] = r * np.cos(angles) + rotated * np.sin(angles)
    return out


ROPE = {"interleaved": rope_interleaved, "half": rope_half}


def softmax_rows(s, allowed):
    """Row softmax with the row max subtracted; a row with no allowed key is all zeros."""
    out = np.zeros_like(s)
    for i in range(s.shape[0]):
        keep = allowed[i]
        if keep.any():
            e = np.exp(s[i, keep] - s[i, keep].max())
            out[i, keep] = e / e.sum()
    return out


def attention_weights(x_q, x_kv, w, rope=None, q_pos=None, k_pos=None, causal=False, key_mask=None):
    """[h, n_q, n_k] weights. w: dict with num_heads, optional num_kv_heads, W_Q, W_K, optional
    b_Q, b_K, scale (attnviz's weights-file keys). rope: {"style", "theta", "dim"} or None."""
    x_q, x_kv = np.asarray(x_q, np.float64), np.asarray(x_kv, np.float64)
    h = w["num_heads"]
    h_kv = w.get("num_kv_heads", h)
    q = x_q @ np.asarray(w["W_Q"], np.float64) + np.asarray(w.get("b_Q", 0.0), np.float64)
    k = x_kv @ np.asarray(w["W_K"], np.float64) + np.asarray(w.get("b_K", 0.0), np.float64)
    d_k = q.shape[1] // h
    scale = w.get("scale", 1.0 / np.sqrt(d_k))
    n_q, n_k = q.shape[0], k.shape[0]
    q_pos = np.arange(n_q) if q_pos is None else np.asarray(q_pos)
    k_pos = np.arange(n_k) if k_pos is None else np.asarray(k_pos)
    allowed = np.ones((n_q, n_k), bool)
    if causal:
        allowed &= np.tril(np.ones((n_q, n_k), bool))
    if key_mask is not None:
        allowed &= np.asarray(key_mask, bool)[None, :]
    weights = []
    for head in range(h):
        g = head // (h // h_kv)
        q_h = q[:, head * d_k:(head + 1) * d_k]
        k_g = k[:, g * d_k:(g + 1) * d_k]
        if rope is not None:
            rotate = ROPE[rope["style"]]
            dim = rope.get("dim", d_k)
            q_h = rotate(q_h, q_pos, dim, rope.get("theta", 10000.0))
            k_g = rotate(k_g, k_pos, dim, rope.get("theta", 10000.0))
        weights.append(softmax_rows(q_h @ k_g.T * scale, allowed))
    return np.array(weights)


# ---------------------------------------------------------------------------------------------
# Golden cases.

def random_case(seed, n, d_model, h, d_k, rope, h_kv=None, positions=None, causal=False, biases=True,
                source=None):
    """A self-contained sentence+weights file with a rope block, and its expected weights.
    source: (n_k, d_model_kv, positions or None) for a cross-attention case."""
    rng = np.random.default_rng(seed)
    h_kv = h_kv or h
    r = lambda *shape: np.round(rng.normal(size=shape), 6)  # short decimals, exact in the file
    x = r(n, d_model)
    case = {"tokens": [f"t{i}" for i in range(n)], "embeddings": x.tolist()}
    if positions is not None:
        case["positions"] = list(positions)
    d_kv = d_model if source is None else source[1]
    w = {"num_heads": h, "num_kv_heads": h_kv, "W_Q": r(d_model, h * d_k).tolist(),
         "W_K": r(d_kv, h_kv * d_k).tolist(), "W_V": r(d_kv, h_kv * d_k).tolist()}
    if biases:
        w["b_Q"], w["b_K"], w["b_V"] = r(h * d_k).tolist(), r(h_kv * d_k).tolist(), r(h_kv * d_k).tolist()
    w["rope"] = rope
    case.update(w)
    x_kv, k_pos, src = x, positions, None
    if source is not None:
        n_k, _, k_pos = source
        x_kv = r(n_k, d_kv)
        src = {"tokens": [f"s{i}" for i in range(n_k)], "embeddings": x_kv.tolist()}
        if k_pos is not None:
            src["positions"] = list(k_pos)
    expected = attention_weights(x, x_kv, w, rope, positions, k_pos, causal)
    case["causal"] = causal
    return case, expected, src


def golden_cases():
    """(name, case dict, expected [h][n_q][n_k], source dict or None)."""
    specs = [
        ("interleaved_full", dict(seed=1, n=5, d_model=12, h=2, d_k=6,
                                  rope={"style": "interleaved", "theta": 10000.0, "dim": 6})),
        ("half_full_causal", dict(seed=2, n=6, d_model=16, h=2, d_k=8, causal=True,
                                  rope={"style": "half", "theta": 10000.0, "dim": 8})),
        ("interleaved_partial", dict(seed=3, n=5, d_model=16, h=2, d_k=8, biases=False,
                                     rope={"style": "interleaved", "theta": 500.0, "dim": 4})),
        ("half_partial", dict(seed=4, n=5, d_model=20, h=2, d_k=10,
                              rope={"style": "half", "theta": 10000.0, "dim": 6})),
        ("gqa_positions_offset", dict(seed=5, n=6, d_model=16, h=4, h_kv=2, d_k=8, causal=True,
                                      positions=[100, 101, 102, 103, 104, 105],
                                      rope={"style": "interleaved", "theta": 10000.0, "dim": 8})),
        ("half_gqa_gapped_positions", dict(seed=6, n=5, d_model=12, h=4, h_kv=1, d_k=4,
                                           positions=[-3, 0, 4, 4, 20],
                                           rope={"style": "half", "theta": 1000.0, "dim": 4})),
        ("cross_half_source_positions", dict(seed=7, n=3, d_model=8, h=2, d_k=4,
                                             positions=[4, 5, 6], source=(4, 6, [0, 1, 2, 3]),
                                             rope={"style": "half", "theta": 10000.0, "dim": 4})),
    ]
    for name, spec in specs:
        case, expected, src = random_case(**spec)
        yield name, case, expected, src


def stories_case(root, causal=True):
    data = json.load(open(os.path.join(root, STORIES)))
    rope = {"style": "interleaved", "theta": 10000.0, "dim": 8}
    x = np.array(data["embeddings"])
    expected = attention_weights(x, x, data, rope, causal=causal)
    case = {"description": "stories260K layer 0 (llama2.c): interleaved RoPE, theta 10000, dim 8 = d_k, "
                           "causal, GQA 8/4; weights from scripts/rope_reference.py",
            "input": STORIES, "rope": rope, "causal": causal}
    return case, expected, data


def _matrix_text(m):
    return "[" + ", ".join("%.9g" % v for v in m) + "]"


def write_golden(path, case, expected):
    """Case keys as JSON, expected_weights one query row per line (%.9g: ~1e-9 relative)."""
    parts = [f" {json.dumps(k)}: {json.dumps(v)}" for k, v in case.items()]
    heads = [",\n   ".join(_matrix_text(row) for row in head) for head in expected]
    parts.append(' "expected_weights": [\n  [' + "],\n  [".join(heads) + "]\n ]")
    with open(path, "w") as f:
        f.write("{\n" + ",\n".join(parts) + "\n}\n")


# ---------------------------------------------------------------------------------------------
# Self-checks of the reference (it must be right before it judges attnviz).

def self_checks(root):
    rng = np.random.default_rng(0)
    failures = []

    def check(name, diff, tol):
        status = "ok" if diff <= tol else "FAIL"
        print(f"  {status:4} {name}: max diff {diff:.3g} (tolerance {tol:g})")
        if diff > tol:
            failures.append(name)

    x = rng.normal(size=(4, 8))
    for style, rotate in ROPE.items():
        check(f"{style}: position 0 is the identity", np.abs(rotate(x, np.zeros(4), 8, 1e4) - x).max(), 0)
        y = rotate(x, np.arange(4) * 7 + 3, 6, 1e4)
        check(f"{style}: rotation keeps norms", np.abs(np.linalg.norm(y, axis=1) - np.linalg.norm(x, axis=1)).max(),
              1e-12)
        check(f"{style}: dims past rope_dim untouched", np.abs(y[:, 6:] - x[:, 6:]).max(), 0)
    # One pair by hand: (1, 0) at position 1, pair 0 (omega = 1) turns by 1 radian.
    e = np.zeros((1, 4)); e[0, 0] = 1
    check("interleaved: pair (0,1) by hand", np.abs(rope_interleaved(e, [1], 4, 1e4)[0, :2] -
                                                    [np.cos(1), np.sin(1)]).max(), 1e-15)
    check("half: pair (0,2) by hand", np.abs(rope_half(e, [1], 4, 1e4)[0, [0, 2]] - [np.cos(1), np.sin(1)]).max(),
          1e-15)

    w = {"num_heads": 2, "num_kv_heads": 1, "W_Q": rng.normal(size=(6, 16)), "W_K": rng.normal(size=(6, 8)),
         "b_Q": rng.normal(size=16), "b_K": rng.normal(size=8)}
    xs = rng.normal(size=(5, 6))
    for style in ROPE:
        rope = {"style": style, "theta": 10000.0, "dim": 6}
        a = attention_weights(xs, xs, w, rope, causal=True)
        b = attention_weights(xs, xs, w, rope, q_pos=np.arange(5) + 1000, k_pos=np.arange(5) + 1000, causal=True)
        check(f"{style}: shifting every position keeps the weights", np.abs(a - b).max(), 1e-9)
    # Interleaved with W columns permuted to half's pairing == half: dimension 2i -> i, 2i+1 -> i + d/2.
    d = 8
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])    # new column c takes old perm[c]
    head_perm = np.concatenate([perm + hd * d for hd in range(2)])
    kv_perm = perm
    w_half = dict(w, W_Q=w["W_Q"][:, head_perm], b_Q=w["b_Q"][head_perm], W_K=w["W_K"][:, kv_perm],
                  b_K=w["b_K"][kv_perm])
    a = attention_weights(xs, xs, w, {"style": "interleaved", "theta": 1e4, "dim": d})
    b = attention_weights(xs, xs, w_half, {"style": "half", "theta": 1e4, "dim": d})
    check("interleaved == half with W_Q/W_K columns permuted per head", np.abs(a - b).max(), 1e-12)

    _, _, data = stories_case(root)
    x = np.array(data["embeddings"])
    for key, causal in (("reference_attention_plain", False), ("reference_attention_plain_causal", True)):
        plain = attention_weights(x, x, data, None, causal=causal)
        check(f"stories260K without RoPE == data file's {key}", np.abs(plain - np.array(data[key])).max(), 1e-5)
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "rope_golden"),
                        help="folder for the golden files (default tests/rope_golden)")
    parser.add_argument("--check", action="store_true", help="run the self-checks only, write nothing")
    args = parser.parse_args(argv)
    print("self-checks of the reference:")
    failures = self_checks(ROOT)
    if failures:
        print(f"{len(failures)} self-check(s) failed; not writing golden files", file=sys.stderr)
        return 1
    if args.check:
        return 0
    os.makedirs(args.out, exist_ok=True)
    for name, case, expected, src in golden_cases():
        if src is not None:
            src_name = name + "_source.json"
            case = dict(case, source_file=src_name)
            with open(os.path.join(args.out, src_name), "w") as f:
                json.dump(src, f)
                f.write("\n")
        write_golden(os.path.join(args.out, name + ".json"), case, expected)
        print("wrote", name + ".json", list(expected.shape))
    case, expected, _ = stories_case(ROOT)
    write_golden(os.path.join(args.out, "stories260k_layer0.json"), case, expected)
    print("wrote stories260k_layer0.json", list(expected.shape))
    return 0


if __name__ == "__main__":
    sys.exit(main())
