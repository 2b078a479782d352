#!/usr/bin/env python3
"""Independent float64 head census over a corpus of token ids (issue 22): the attention of
scripts/reference_forward.py's float64 forward pass (its own GGUF reader; no code shared with
src/), every census statistic written out here from its definition in docs/corpus.md, and the
mean, sample std and Student-t 95% interval over texts (scipy's t quantile).

    /usr/bin/python3 scripts/census_reference.py MODEL.gguf IDS.jsonl OUT.json [SINK_EPSILON]

IDS.jsonl: one {"token_ids": [...]} per line. OUT.json: {"heads": [{"layer", "head",
STATISTIC: {"texts", "mean", "std", "ci95_low", "ci95_high"}}]}, null where undefined.
"""
import json
import math
import os
import sys

import numpy as np
from scipy import stats as scipy_stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_forward import forward, read_gguf  # noqa: E402  (the float64 forward pass)

STATISTICS = ["entropy_mean", "entropy_normalised_mean", "max_weight_mean", "mean_distance", "diagonal_mass",
              "previous_token_mass", "first_token_mass", "induction_score", "sink_rate", "previous_token_score",
              "duplicate_token_score", "induction_score_tl"]


def entropy(row):
    p = row[row > 0]
    return float(-(p * np.log(p)).sum())


def head_values(a, ids, epsilon):
    """Every statistic of one causal head a [n, n] on one text (None where undefined)."""
    n = len(ids)
    rows = range(n)
    v = {}
    h = [entropy(a[i, :i + 1]) for i in rows]
    v["entropy_mean"] = float(np.mean(h))
    normalised = [h[i] / math.log(i + 1) for i in rows if i + 1 >= 2]  # row i sees i + 1 keys
    v["entropy_normalised_mean"] = float(np.mean(normalised)) if normalised else None
    v["max_weight_mean"] = float(np.mean([a[i].max() for i in rows]))
    v["mean_distance"] = float(np.mean([sum(a[i, j] * abs(i - j) for j in range(n)) for i in rows]))
    v["diagonal_mass"] = float(np.mean([a[i, i] for i in rows]))
    v["previous_token_mass"] = float(np.mean([a[i, i - 1] for i in range(1, n)])) if n > 1 else None
    alpha_1 = float(np.mean([a[i, 0] for i in rows]))
    v["first_token_mass"] = alpha_1
    # Olsson et al.'s induction: keys j + 1 < i after an earlier copy t_j = t_i.
    scores = []
    for i in rows:
        keys = [j + 1 for j in range(n) if j + 1 < i and ids[j] == ids[i]]
        if keys:
            scores.append(sum(a[i, k] for k in keys))
    v["induction_score"] = float(np.mean(scores)) if scores else None
    v["sink_rate"] = 1.0 if alpha_1 > epsilon else 0.0  # Gu et al. 2025: α_1 > ε
    # TransformerLens detect_head, "mul", no exclusions: Σ A∘P / Σ A; needs n > 1.
    if n > 1:
        previous = np.zeros((n, n))
        duplicate = np.zeros((n, n))
        induction = np.zeros((n, n))
        for i in rows:
            for j in rows:
                previous[i, j] = 1.0 if j == i - 1 else 0.0
                duplicate[i, j] = 1.0 if j < i and ids[j] == ids[i] else 0.0
                induction[i, j] = 1.0 if 1 <= j <= i and ids[j - 1] == ids[i] else 0.0
        total = a.sum()
        v["previous_token_score"] = float((a * previous).sum() / total)
        v["duplicate_token_score"] = float((a * duplicate).sum() / total)
        v["induction_score_tl"] = float((a * induction).sum() / total)
    else:
        v["previous_token_score"] = v["duplicate_token_score"] = v["induction_score_tl"] = None
    return v


def summary(values):
    xs = [x for x in values if x is not None]
    out = {"texts": len(xs), "mean": float(np.mean(xs)) if xs else None, "std": None, "ci95_low": None, "ci95_high": None}
    if len(xs) >= 2:
        std = float(np.std(xs, ddof=1))
        half = float(scipy_stats.t.ppf(0.975, len(xs) - 1)) * std / math.sqrt(len(xs))
        out.update(std=std, ci95_low=out["mean"] - half, ci95_high=out["mean"] + half)
    return out


def main():
    model, corpus, out_path = sys.argv[1:4]
    epsilon = float(sys.argv[4]) if len(sys.argv) > 4 else 0.3
    meta, tensors = read_gguf(model)
    per_head = {}
    for line in open(corpus):
        if not line.strip():
            continue
        ids = json.loads(line)["token_ids"]
        attention, _ = forward(meta, tensors, ids)
        for layer in sorted(attention, key=int):
            for head, weights in enumerate(attention[layer]):
                values = head_values(np.array(weights, dtype=np.float64), ids, epsilon)
                per_head.setdefault((int(layer), head), []).append(values)
    heads = []
    for (layer, head), texts in sorted(per_head.items()):
        entry = {"layer": layer, "head": head}
        for s in STATISTICS:
            entry[s] = summary([t[s] for t in texts])
        heads.append(entry)
    json.dump({"heads": heads}, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
