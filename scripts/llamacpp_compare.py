#!/usr/bin/env python3
"""attnviz's default dump of GGUF files against llama.cpp's own attention for them: for each
MODEL.gguf beside MODEL.llamacpp.json (captured by the shared llamacpp-attention tool), runs
`attnviz dump --model MODEL.gguf --token-ids <the capture's ids> --logits` and prints the largest
|attnviz − llama.cpp| over every layer's weights, per layer, and over the last logits, with the
dump's model.matmul. Extra attnviz options (e.g. --exact-matmul) follow `--`.

    /usr/bin/python3 scripts/llamacpp_compare.py build/attnviz a.gguf b.gguf … [-- --exact-matmul]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def compare(attnviz, gguf, extra):
    with open(gguf[:-len(".gguf")] + ".llamacpp.json") as f:
        theirs = json.load(f)
    ids = ",".join(str(i) for i in theirs["token_ids"])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "dump.json")
        subprocess.run([attnviz, "dump", "--model", gguf, "--token-ids", ids, "--logits", "-o", out] + extra,
                       check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            ours = json.load(f)
    per_layer = []
    for layer in ours["layers"]:
        a = np.array(layer["weights"], dtype=np.float64)
        b = np.array(theirs["attention"][layer["layer"]], dtype=np.float64)[:, :a.shape[1], :a.shape[2]]
        per_layer.append(float(np.abs(a - b).max()))
    logits = float(np.abs(np.array(ours["last_logits"]) - np.array(theirs["last_logits"])).max())
    return per_layer, logits, ours["model"].get("matmul", "")


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    attnviz, files = args[0], args[1:]
    worst = 0.0
    for gguf in files:
        per_layer, logits, matmul = compare(attnviz, gguf, extra)
        worst = max(worst, max(per_layer))
        print("%-28s attention %.1e (layers %s)  logits %.1e  [%s]" % (
            os.path.basename(gguf), max(per_layer), " ".join("%.1e" % v for v in per_layer), logits, matmul))
    print("worst attention difference: %.2e" % worst)


if __name__ == "__main__":
    main()
