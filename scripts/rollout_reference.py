#!/usr/bin/python3
"""Independent float64 NumPy reference for attention rollout and the head census (issue 13).

Rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", section 3):
  A_hat_l = (1 - a) * mean_h(A_l) + a * I, rows renormalised to sum to 1 (a = residual weight)
  R_0 = A_hat_0,  R_l = A_hat_l @ R_(l-1)
The identity is added only on diagonal cells whose key is not padding, so masked keys stay 0;
a row with nothing left stays all zero. Rows of R are distributions: row sums, not column
sums, are what is normalised (checked below; one widely copied implementation divides by the
wrong axis).

Census statistics (docs/analysis.md), per head over rows that are not
fully masked: previous-token mass (mean over rows i >= 1 of a_i,i-1), first-token mass (mean of
a_i0), diagonal mass (mean of a_ii) and the induction score (mean over rows with an earlier copy
j of token i, j + 1 < i, of the summed weight on the keys j + 1).

Usage:
  scripts/rollout_reference.py --check                  the hand values of the issue
  scripts/rollout_reference.py DUMP.json [CENSUS.csv]   compare attnviz's `dump --model --rollout`
                                                        (and a `--census` CSV of the same text)
Prints the largest absolute difference and exits 1 when it is above the tolerance (1e-5: the
dump holds float32 values).
"""

import csv
import json
import sys

import numpy as np

TOLERANCE = 1e-5


def allowed_mask(layer):
    n_q, n_k = len(layer["query_tokens"]), len(layer["key_tokens"])
    allowed = np.ones((n_q, n_k), dtype=bool)
    key_mask = layer.get("key_mask") or []
    if key_mask:
        allowed &= np.array(key_mask, dtype=bool)[None, :]
    if layer.get("causal"):
        allowed &= np.tril(np.ones((n_q, n_k), dtype=bool))
    return allowed


def rollout(head_means, masks, residual):
    """head_means: L arrays [n, n]; masks: L boolean [n, n]. Returns L arrays R_l [n, n]."""
    results = []
    r = None
    for mean, allowed in zip(head_means, masks):
        n = mean.shape[0]
        a_hat = (1.0 - residual) * mean + residual * np.diag(np.diag(allowed).astype(np.float64))
        sums = a_hat.sum(axis=1, keepdims=True)  # over keys: each query row is a distribution
        a_hat = np.divide(a_hat, sums, out=np.zeros_like(a_hat), where=sums > 0)
        r = a_hat if r is None else a_hat @ r
        results.append(r)
        assert r.shape == (n, n)
    return results


def census(weights, tokens, allowed):
    """weights: [n, n] of one head. Returns (diagonal, previous, first, induction or None)."""
    n = weights.shape[0]
    rows = [i for i in range(n) if allowed[i].any()]
    diagonal = np.mean([weights[i, i] for i in rows])
    previous = np.mean([weights[i, i - 1] for i in rows if i >= 1])
    first = np.mean([weights[i, 0] for i in rows])
    scores = []
    for i in rows:
        keys = {j + 1 for j in range(i - 1) if tokens[j] == tokens[i]}
        if keys:
            scores.append(sum(weights[i, k] for k in keys))
    return diagonal, previous, first, (np.mean(scores) if scores else None)


def check_hand_values():
    a = np.array([[1.0, 0.0], [0.3, 0.7]])
    r = rollout([a, a], [np.ones((2, 2), dtype=bool)] * 2, 0.5)
    expected = np.array([[1.0, 0.0], [0.2775, 0.7225]])
    worst = np.abs(r[1] - expected).max()
    print(f"hand values: R_1 = {r[1].tolist()}, largest difference {worst:.3g}")
    return worst < 1e-12


def compare_dump(path, census_path):
    with open(path, encoding="utf-8") as f:
        dump = json.load(f)
    layers = [layer for layer in dump["layers"] if layer.get("kind", "self") == "self"]
    means = [np.mean(np.array(layer["weights"], dtype=np.float64), axis=0) for layer in layers]
    masks = [allowed_mask(layer) for layer in layers]
    expected = rollout(means, masks, float(dump["rollout_residual"]))
    worst = 0.0
    for l, (ours, theirs) in enumerate(zip(expected, dump["rollout"])):
        worst = max(worst, float(np.abs(ours - np.array(theirs, dtype=np.float64)).max()))
        row_error = float(np.abs(ours.sum(axis=1)[masks[l].any(axis=1)] - 1).max())
        assert row_error < 1e-9, f"layer {l}: reference rows do not sum to 1 ({row_error})"
    print(f"rollout: {len(expected)} layers of {expected[0].shape[0]} tokens, largest |R_attnviz - R_reference| = {worst:.3g}")
    ok = worst <= TOLERANCE
    if census_path:
        with open(census_path, encoding="utf-8") as f:
            table = {(int(r["layer"]), int(r["head"])): r for r in csv.DictReader(f)}
        worst_census = 0.0
        for layer, allowed in zip(layers, masks):
            for h, w in enumerate(layer["weights"]):
                row = table[(layer["layer"], h)]
                ours = census(np.array(w, dtype=np.float64), layer["query_tokens"], allowed)
                names = ["diagonal_mass", "previous_token_mass", "first_token_mass", "induction_score"]
                for name, value in zip(names, ours):
                    if value is None:
                        assert row[name] == "", f"L{layer['layer']}H{h} {name}: expected empty"
                        continue
                    worst_census = max(worst_census, abs(value - float(row[name])))
        print(f"census: {len(table)} heads, largest difference {worst_census:.3g} (CSV keeps 6 significant digits)")
        ok = ok and worst_census <= 1e-5
    return ok


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    if argv[1] == "--check":
        return 0 if check_hand_values() else 1
    return 0 if check_hand_values() and compare_dump(argv[1], argv[2] if len(argv) > 2 else None) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
