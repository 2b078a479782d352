#!/usr/bin/python3
"""attnviz census against scripts/census_reference.py (float64, its own forward pass and its
own statistics) on stories260K over the first 20 texts of the bundled corpus (issue 22): every
statistic's S_texts equal, and mean, std and 95% interval within 1e-6·max(1, |x|). The texts
are given as token ids (from attnviz tokenize), so that both sides run the same tokens.
Usage: census_reference_test.py PATH/TO/attnviz REPO_ROOT   Prints a closing 'N passed, M failed'.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ATTNVIZ, ROOT = sys.argv[1], sys.argv[2]
MODEL = os.path.join(ROOT, "data/stories260k/stories260K.gguf")
CORPUS = os.path.join(ROOT, "data/corpus/stories260k_stories.txt")
TEXTS = 20
TOLERANCE = 1e-6


def main():
    tmp = tempfile.mkdtemp(prefix="attnviz-census-ref-")
    failures, checked, worst = [], 0, (0.0, "")
    try:
        ids_path = os.path.join(tmp, "ids.jsonl")
        with open(CORPUS) as corpus, open(ids_path, "w") as out:
            texts = [line.rstrip("\n") for line in corpus if line.strip()][:TEXTS]
            for text in texts:
                run = subprocess.run([ATTNVIZ, "tokenize", "--model", MODEL, "--text", text, "--json"],
                                     capture_output=True, text=True, check=True)
                out.write(json.dumps({"token_ids": json.loads(run.stdout)["token_ids"]}) + "\n")
        subprocess.run([ATTNVIZ, "census", "--model", MODEL, "--corpus", ids_path, "-o", os.path.join(tmp, "attnviz"),
                        "--quiet"], check=True, capture_output=True)
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/census_reference.py"), MODEL, ids_path,
                        os.path.join(tmp, "reference.json")], check=True)
        ours = json.load(open(os.path.join(tmp, "attnviz", "census.json")))
        reference = json.load(open(os.path.join(tmp, "reference.json")))
        assert ours["covers"]["texts"] == TEXTS
        mine = {(h["layer"], h["head"]): h for h in ours["heads"]}
        for ref in reference["heads"]:
            head = mine[(ref["layer"], ref["head"])]
            for s in ours["statistics"]:
                name = "L%dH%d %s" % (ref["layer"], ref["head"], s)
                if head[s]["texts"] != ref[s]["texts"]:
                    failures.append("%s: %d texts, reference %d" % (name, head[s]["texts"], ref[s]["texts"]))
                    continue
                for key in ("mean", "std", "ci95_low", "ci95_high"):
                    a, b = head[s][key], ref[s][key]
                    checked += 1
                    if (a is None) != (b is None):
                        failures.append("%s %s: %s vs reference %s" % (name, key, a, b))
                        continue
                    if a is None:
                        continue
                    d = abs(a - b) / max(1.0, abs(b))
                    if d > worst[0]:
                        worst = (d, "%s %s" % (name, key))
                    if d > TOLERANCE:
                        failures.append("%s %s: %.9g vs reference %.9g" % (name, key, a, b))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures[:20]:
        print("FAIL " + f)
    print("worst difference %.3g·max(1, |x|) at %s (tolerance %g)" % (worst[0], worst[1], TOLERANCE))
    print("%d passed, %d failed" % (checked - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
