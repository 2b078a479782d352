#!/usr/bin/env python3
"""attnviz dump --model against scripts/reference_forward.py (float64, no shared code), on
stories260K F32 (data/) and its F16 and BF16 copies (tests/data/): every layer's
attention within 1e-5, the last logits within 1e-4. The copies run with --exact-matmul (weights
decoded exactly, activations unrounded), what a float64 forward over the decoded weights computes;
by default their products round the activations as llama.cpp does.

    /usr/bin/python3 tests/model_reference_test.py build/attnviz
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IDS = "1,403,407,261,378,432,383,286,261,376,298,315,421,395,317,426,338,401,396,267,337,410,408,419,292,411,322,265,282,295,433,426"
MODELS = [os.path.join(ROOT, "data/stories260k/stories260K.gguf")] + [
    os.path.join(ROOT, "tests/data/stories260k/quantized/stories260K-%s.gguf" % t) for t in ("F16", "BF16")]


def main():
    attnviz = sys.argv[1]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in MODELS:
            ref_path, dump_path = os.path.join(tmp, "ref.json"), os.path.join(tmp, "dump.json")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts/reference_forward.py"), model, IDS, ref_path], check=True)
            exact = [] if model.endswith("stories260K.gguf") else ["--exact-matmul"]
            subprocess.run([attnviz, "dump", "--model", model, "--token-ids", IDS, "--logits", "-o", dump_path] + exact,
                           check=True, stdout=subprocess.DEVNULL)
            ref, dump = json.load(open(ref_path)), json.load(open(dump_path))
            worst = max(np.abs(np.array(layer["weights"]) - np.array(ref["attention"][str(layer["layer"])])).max()
                        for layer in dump["layers"])
            worst_logit = np.abs(np.array(dump["last_logits"]) - np.array(ref["last_logits"])).max()
            ok = worst < 1e-5 and worst_logit < 1e-4 and len(dump["layers"]) == 5
            print("%s %s: max |attention diff| %.3g, max |logit diff| %.3g" % ("ok" if ok else "FAIL", os.path.basename(model),
                                                                          worst, worst_logit))
            passed, failed = passed + ok, failed + (not ok)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
