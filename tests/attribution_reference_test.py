#!/usr/bin/env python3
"""attnviz attribute against scripts/reference_attribution.py (float64, no code shared with
src/) on the bundled stories260K: the target, logit and log p, every dla share within 1e-5
(absolute or relative) and every ablation effect within 1e-4, at three positions and targets.

    /usr/bin/python3 tests/attribution_reference_test.py build/attnviz
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "data/stories260k/stories260K.gguf")
IDS = "1,403,407,261,378,432,383,286,261,376,298,315,421,395,317,426,338,401,396,267,337,410,408,419,292,411,322,265,282,295,433,426"
# (position, target id or None for the model's top prediction)
CASES = [(31, None), (10, None), (5, 261)]


def worst(ours, theirs):
    """Largest difference, and whether every entry is within 1e-5 absolute or relative."""
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    diff = np.abs(ours - theirs)
    return diff.max(), bool(np.all((diff <= 1e-5) | (diff <= 1e-5 * np.abs(theirs))))


def main():
    attnviz = sys.argv[1]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for position, target in CASES:
            ref_path, out = os.path.join(tmp, "ref.json"), os.path.join(tmp, "out")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts/reference_attribution.py"), MODEL, IDS, str(position),
                            "-" if target is None else str(target), ref_path], check=True)
            command = [attnviz, "attribute", "--model", MODEL, "--token-ids", IDS, "--position", str(position), "-o", out]
            if target is not None:
                command += ["--target-id", str(target)]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            ref, ours = json.load(open(ref_path)), json.load(open(os.path.join(out, "attribution.json")))
            def flat(d):
                return list(np.ravel(d["dla"])) + d["dla_mlp"] + [d["dla_embedding"], d["logit"], d["log_prob"]]
            dla, dla_ok = worst(flat(ours), flat(ref))
            ablation = np.abs(np.array(ours["ablation"]) - np.array(ref["ablation"])).max()
            total = np.sum(ours["dla"]) + sum(ours["dla_mlp"]) + ours["dla_embedding"] + sum(ours["dla_attn_bias"]) + \
                sum(ours["dla_mlp_bias"]) + ours["dla_final_norm_bias"]
            ok = (ours["target_id"] == ref["target_id"] and ours["position"] == position and dla_ok and ablation < 1e-4 and
                  abs(total - ours["logit"]) < 1e-4 and np.abs(ref["ablation"]).max() > 1e-3)
            print("%s position %d target %d: max |dla diff| %.3g, max |ablation diff| %.3g, |sum of dla - logit| %.3g" % (
                "ok" if ok else "FAIL", position, ours["target_id"], dla, ablation, abs(total - ours["logit"])))
            passed, failed = passed + ok, failed + (not ok)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
