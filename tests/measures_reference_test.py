#!/usr/bin/env python3
"""attnviz --measure norms|alti and --flow against scripts/measures_reference.py (float64, no code
shared with src/), issue 20: norms, value_norms and layer_norms within 1e-5 (absolute or relative),
ALTI, alti_rollout and attention_flow within 1e-4, on the stories260K layer file (GQA, RoPE,
causal), the USE-Lite layer file (biases, W_O to 512: norms only, ALTI refused), the whole
stories260K model, every block of the aren-translit CTranslate2 model (cross-attention norms;
ALTI of the self-attention blocks, pre-norm as shipped and re-written as a post-norm model), and the
synthetic post-LN BERT GGUF (norms, ALTI and its rollout).

    /usr/bin/python3 tests/measures_reference_test.py build/attnviz
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "scripts/measures_reference.py")
MODEL = os.path.join(ROOT, "data/stories260k/stories260K.gguf")
IDS = "1,403,407,261,378,432,383,286,261,376,298,315,421,395,317,426,338,401,396,267,337,410,408,419,292,411,322,265,282,295,433,426"
FLOW_IDS = "1,403,407,261,378,432,383,286,261,376"  # networkx's max-flow is slow: 10 tokens
NORMS, ALTI = ("norms", "value_norms", "layer_norms"), ("alti",)
ARENT = os.path.join(ROOT, "data/aren-translit/model")
BERT = os.path.join(ROOT, "tests/data/bert/synthetic-bert.gguf")
BERT_IDS = "2,7,12,9,30,5,18,22,11,3,25,6"
ARENT_SOURCE, ARENT_TARGET = "آ ت ز م و ن", "a t z m o n"


def worst(a, b):
    """Largest of min(|a - b|, |a - b| / |b|): the error, absolute or relative."""
    a, b = np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    diff = np.abs(a - b)
    return float(np.minimum(diff, diff / np.maximum(np.abs(b), 1e-300)).max())


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, error, tolerance):
        ok = error <= tolerance
        print("%s %s: max difference %.3g (tolerance %g)" % ("ok" if ok else "FAIL", name, error, tolerance))
        self.passed, self.failed = self.passed + ok, self.failed + (not ok)


def run(*args):
    subprocess.run(list(args), check=True, stdout=subprocess.DEVNULL)


def main():
    attnviz = sys.argv[1]
    checks = Checks()
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda name: os.path.join(tmp, name)  # noqa: E731
        for layer, fields in (("data/stories260k/layer0.json", NORMS + ALTI), ("data/use-lite/layer0.json", NORMS)):
            run(sys.executable, REFERENCE, "layer", os.path.join(ROOT, layer), path("ref.json"))
            ref = json.load(open(path("ref.json")))
            for measure in ("norms", "alti"):
                if measure == "alti" and "alti" not in fields:
                    continue
                run(attnviz, "dump", os.path.join(ROOT, layer), "--measure", measure, "-o", path("dump.json"))
                dump = json.load(open(path("dump.json")))
                for field in NORMS if measure == "norms" else ALTI:
                    checks.check("%s %s" % (layer, field), worst(dump[field], ref[field]), 1e-5 if measure == "norms" else 1e-4)
        run(sys.executable, REFERENCE, "model", MODEL, IDS, path("ref.json"))
        ref = json.load(open(path("ref.json")))
        run(attnviz, "dump", "--model", MODEL, "--token-ids", IDS, "--measure", "norms", "-o", path("norms.json"))
        run(attnviz, "dump", "--model", MODEL, "--token-ids", IDS, "--measure", "alti", "--rollout", "-o", path("alti.json"))
        norms, alti = json.load(open(path("norms.json"))), json.load(open(path("alti.json")))
        for field in NORMS:
            checks.check("stories260K model %s" % field,
                         max(worst(layer[field], ref["layers"][layer["layer"]][field]) for layer in norms["layers"]), 1e-5)
        checks.check("stories260K model alti", max(worst(layer["alti"], ref["layers"][layer["layer"]]["alti"]) for layer in alti["layers"]), 1e-4)
        checks.check("stories260K model alti_rollout", worst(alti["alti_rollout"], ref["alti_rollout"]), 1e-4)
        # aren-translit (CTranslate2): every block's norms, the decoder's cross-attention included.
        run(sys.executable, REFERENCE, "ct2", ARENT, ARENT_SOURCE, ARENT_TARGET, path("ref.json"))
        run(attnviz, "dump", "--model", ARENT, "--source-tokens", ARENT_SOURCE, "--target-tokens", ARENT_TARGET,
            "--measure", "norms", "-o", path("ct2.json"))
        ref, dump = json.load(open(path("ref.json")))["blocks"], json.load(open(path("ct2.json")))["layers"]
        key = lambda b: (b["stack"], b["kind"], b["layer"])  # noqa: E731
        theirs = {key(b): b for b in ref}
        ok = len(dump) == len(ref) == 18 and sorted(map(key, dump)) == sorted(theirs)
        checks.check("aren-translit blocks (18, as the reference)", 0.0 if ok else 1.0, 0.0)
        for field in NORMS:
            checks.check("aren-translit %s (every block, cross included)" % field,
                         max(worst(b[field], theirs[key(b)][field]) for b in dump), 1e-5)
        run(attnviz, "dump", "--model", ARENT, "--source-tokens", ARENT_SOURCE, "--target-tokens", ARENT_TARGET,
            "--measure", "alti", "-o", path("ct2_alti.json"))
        alti = [b for b in json.load(open(path("ct2_alti.json")))["layers"] if b["kind"] == "self"]
        assert len(alti) == 12 and all("alti" in b for b in alti)
        checks.check("aren-translit alti (12 self-attention blocks, encoder and decoder)",
                     max(worst(b["alti"], theirs[key(b)]["alti"]) for b in alti), 1e-4)
        # The same weights as a post-norm model (scripts/ct2_writer.py --post-norm): ALTI applies each
        # block's LayerNorm's linear part (Ferrando et al. 2022), as the reference does.
        run(sys.executable, os.path.join(ROOT, "scripts/ct2_writer.py"), ARENT, path("post_norm"), "--post-norm")
        run(sys.executable, REFERENCE, "ct2", path("post_norm"), ARENT_SOURCE, ARENT_TARGET, path("ref.json"))
        run(attnviz, "dump", "--model", path("post_norm"), "--source-tokens", ARENT_SOURCE, "--target-tokens", ARENT_TARGET,
            "--measure", "alti", "-o", path("post_alti.json"))
        theirs = {key(b): b for b in json.load(open(path("ref.json")))["blocks"]}
        alti = [b for b in json.load(open(path("post_alti.json")))["layers"] if b["kind"] == "self"]
        checks.check("aren-translit as a post-norm model: alti (12 self-attention blocks)",
                     max(worst(b["alti"], theirs[key(b)]["alti"]) for b in alti), 1e-4)
        # The synthetic BERT GGUF (post-LN encoder): norms, and ALTI through each attention output LayerNorm.
        run(sys.executable, REFERENCE, "bert", BERT, BERT_IDS, path("ref.json"))
        ref = json.load(open(path("ref.json")))
        run(attnviz, "dump", "--model", BERT, "--token-ids", BERT_IDS, "--measure", "norms", "-o", path("bert_norms.json"))
        run(attnviz, "dump", "--model", BERT, "--token-ids", BERT_IDS, "--measure", "alti", "--rollout", "-o", path("bert_alti.json"))
        norms, alti = json.load(open(path("bert_norms.json"))), json.load(open(path("bert_alti.json")))
        assert len(norms["layers"]) == len(alti["layers"]) == 2
        for field in NORMS:
            checks.check("BERT model %s" % field,
                         max(worst(layer[field], ref["layers"][layer["layer"]][field]) for layer in norms["layers"]), 1e-5)
        checks.check("BERT model alti (post-LN)", max(worst(layer["alti"], ref["layers"][layer["layer"]]["alti"]) for layer in alti["layers"]), 1e-4)
        checks.check("BERT model alti_rollout", worst(alti["alti_rollout"], ref["alti_rollout"]), 1e-4)
        run(sys.executable, REFERENCE, "model", MODEL, FLOW_IDS, "--flow", path("ref.json"))
        run(attnviz, "dump", "--model", MODEL, "--token-ids", FLOW_IDS, "--flow", "-o", path("flow.json"))
        checks.check("stories260K model attention_flow",
                     worst(json.load(open(path("flow.json")))["attention_flow"], json.load(open(path("ref.json")))["attention_flow"]), 1e-4)
    print("%d passed, %d failed" % (checks.passed, checks.failed))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
