#!/usr/bin/env python3
"""attnviz explain against scripts/explain_reference.py (float64 NumPy, no code shared with src/),
within 1e-5: stories260K layer 0 (RoPE, GQA, causal), USE-Lite layer 0 (biases, a rectangular
W_O), aren-translit decoder layer 2 (cross-attention), and the stories260K GGUF model (folded norm
gains, the copying score, the QK token lists), and the aren-translit CTranslate2 model's cross-attention
against the layer JSON exported from it.

    /usr/bin/python3 tests/explain_reference_test.py build/attnviz
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data")
STORIES = os.path.join(DATA, "stories260k/layer0.json")
USE_LITE = os.path.join(DATA, "use-lite/layer0.json")
AREN = os.path.join(DATA, "aren-translit/atzmon/decoder_layer2.json")
AREN_SOURCE = os.path.join(DATA, "aren-translit/atzmon/source.json")
GGUF = os.path.join(DATA, "stories260k/stories260K.gguf")
AREN_MODEL = os.path.join(DATA, "aren-translit/model")
IDS = "1,403,407,261,378,432,383,286,261,376,298,315,421,395,317,426"

# (attnviz explain arguments, reference arguments)
CASES = [
    ([STORIES, "--head", "5"], [STORIES, "--head", "5"]),
    ([STORIES, "--head", "H2", "--query", "6"], [STORIES, "--head", "2"]),
    ([USE_LITE, "--head", "3", "--query", "4"], [USE_LITE, "--head", "3"]),
    ([AREN, "--source", AREN_SOURCE, "--head", "6", "--query", "2"], [AREN, "--source", AREN_SOURCE, "--head", "6"]),
    (["--model", GGUF, "--token-ids", IDS, "--head", "L1H3"], [GGUF, "--token-ids", IDS, "--layer", "1", "--head", "3"]),
    (["--model", GGUF, "--token-ids", IDS, "--head", "L4H6", "--query", "9"],
     [GGUF, "--token-ids", IDS, "--layer", "4", "--head", "6"]),
    # The CTranslate2 model's own forward pass against the layer it exported (data/aren-translit/
    # atzmon: the real inputs of decoder layer 2): the neuron view only, as the JSON's W_Q is not folded.
    (["--model", AREN_MODEL, "--text", "\u0622\u062a\u0632\u0645\u0648\u0646", "--head", "cross.L2H6", "--query", "3"],
     [AREN, "--source", AREN_SOURCE, "--head", "6", "--view-only"]),
]


def main():
    attnviz = sys.argv[1]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n, (args, reference) in enumerate(CASES):
            out = os.path.join(tmp, "case%d" % n)
            subprocess.run([attnviz, "explain"] + args + ["-o", out], check=True, stdout=subprocess.DEVNULL)
            result = subprocess.run([sys.executable, os.path.join(ROOT, "scripts/explain_reference.py")] + reference +
                                    [os.path.join(out, "explain.json")], capture_output=True, text=True)
            print(result.stdout.rstrip())
            ok = result.returncode == 0
            passed, failed = passed + ok, failed + (not ok)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
