#!/usr/bin/env python3
"""attnviz attribute on the bundled aren-translit CTranslate2 model against
scripts/reference_attribution.py --ct2 (float64, no code shared with src/): the target, logit and
log p, every dla share (decoder self- and cross-attention heads, MLPs, embedding, positions,
biases) within 1e-5 absolute or relative, the shares summing to the logit within 1e-4, and every
ablation effect (encoder, decoder self and cross heads) within 1e-4, at three positions and targets.

    /usr/bin/python3 tests/attribution_ct2_reference_test.py build/attnviz
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "data/aren-translit/model")
SOURCE = "م ا ك د و ن ا ل د"
TARGET = "m c d o n a l d"
# (decoder position, target token or None for the model's top prediction)
CASES = [(8, None), (3, None), (5, "a")]
DLA = ["dla", "dla_cross", "dla_mlp", "dla_embedding", "dla_position", "dla_attn_bias", "dla_cross_bias", "dla_mlp_bias",
       "dla_final_norm_bias", "dla_output_bias"]
ABLATION = ["ablation", "ablation_cross", "ablation_encoder"]


def flat(d, keys):
    return np.concatenate([np.ravel(np.asarray(d[k], dtype=float)) for k in keys])


def main():
    attnviz = sys.argv[1]
    vocabulary = open(os.path.join(MODEL, "target_vocabulary.txt"), encoding="utf-8").read().split("\n")
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for position, target in CASES:
            target_id = None if target is None else vocabulary.index(target)
            ref_path, out = os.path.join(tmp, "ref.json"), os.path.join(tmp, "out")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts/reference_attribution.py"), "--ct2", MODEL, SOURCE, TARGET,
                            str(position), "-" if target_id is None else str(target_id), ref_path], check=True)
            command = [attnviz, "attribute", "--model", MODEL, "--source-tokens", SOURCE, "--target-tokens", TARGET,
                       "--position", str(position), "-o", out]
            if target is not None:
                command += ["--target", target]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            ref, ours = json.load(open(ref_path)), json.load(open(os.path.join(out, "attribution.json")))
            a, b = flat(ours, DLA + ["logit", "log_prob"]), flat(ref, DLA + ["logit", "log_prob"])
            diff = np.abs(a - b)
            dla_ok = bool(np.all((diff <= 1e-5) | (diff <= 1e-5 * np.abs(b))))
            ablation = np.abs(flat(ours, ABLATION) - flat(ref, ABLATION)).max()
            total = flat(ours, DLA).sum()
            ok = (ours["target_id"] == ref["target_id"] and ours["position"] == position and dla_ok and ablation < 1e-4 and
                  abs(total - ours["logit"]) < 1e-4 and np.abs(flat(ref, ABLATION)).max() > 1e-3)
            print("%s position %d target %d: max |dla diff| %.3g, max |ablation diff| %.3g, |sum of dla - logit| %.3g" % (
                "ok" if ok else "FAIL", position, ours["target_id"], diff.max(), ablation, abs(total - ours["logit"])))
            passed, failed = passed + ok, failed + (not ok)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
