#!/usr/bin/env python3
"""attnviz dump --model on the synthetic model of every decoder family and its GGUF-only variants
(tests/data/families, written by scripts/family_models.py), three ways:
  1. the GGUF against llama.cpp's own attention and last logits for the same file and token ids
     (captured once with the llamacpp-attention tool, committed beside them): every weight within
     5e-6, the last logits within 5e-6 of the largest |logit| (GELU included: attnviz uses
     llama.cpp's float16 GELU table for GGUF files);
  2. the GGUF against scripts/reference_forward.py (float64 with llama.cpp's GELU table, no code
     shared with attnviz): 1e-5;
  3. the same weights as a Hugging Face folder against the same float64 reference with
     transformers' tanh GELU: 1e-5. Where transformers and llama.cpp differ (Mistral's and
     Phi-3's sliding_window in every layer; SmolLM3's NoPE layers from no_rope_layers), the folder
     is held to the reference run with that difference (--window-every-layer, --no-rope-layers),
     and its attention must differ from the GGUF's.

    /usr/bin/python3 tests/family_reference_test.py build/attnviz
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests/data/families")
FAMILIES = ["qwen2", "qwen3", "mistral", "gemma2", "gemma3", "phi3", "gpt2", "gemma2-keys",
            # each family's RoPE in its sliding-window layers: a local base present or absent x
            # linear scaling (type linear, type none with a factor, the older rope.scale_linear)
            "gemma2-rope-swa-linear", "gemma2-rope-swa-none", "gemma2-rope-linear", "gemma2-rope-none",
            "gemma3-rope-swa-linear", "gemma3-rope-swa-none", "gemma3-rope-linear", "qwen2-rope", "mistral-rope",
            "phi3-rope",
            # a GELU feed-forward writing its whole output: llama.cpp's float16 GELU table shows
            "gpt2-gelu", "gemma2-gelu",
            # OLMo 2 (post-norms, whole-vector QK-norm; OLMo 3's window), SmolLM3 (NoPE layers),
            # Granite (multipliers; without RoPE)
            "olmo2", "olmo2-swa", "smollm3", "granite", "granite-nope"]
# attnviz's bounds against llama.cpp's attention and logits (relative to the largest |logit|).
LLAMACPP_ATTENTION, LLAMACPP_LOGITS = 5e-6, 5e-6
# Where the tanh GELU formula misses llama.cpp by far more than that bound (the float64
# reference with --gelu tanh shows it): its table is what holds these files to the bound.
GELU_VARIANTS = ["gpt2-gelu", "gemma2-gelu"]
# transformers applies these folders' sliding_window in every layer; llama.cpp in none.
WINDOW_EVERY_LAYER = ["mistral", "phi3"]
# transformers' NoPE layers (config.json's no_rope_layers) where llama.cpp's are every 4th.
NO_ROPE_LAYERS = {"smollm3": "1,4"}


def attnviz_dump(attnviz, model, ids, tmp):
    dump_path = os.path.join(tmp, "dump.json")
    subprocess.run([attnviz, "dump", "--model", model, "--token-ids", ids, "--logits", "-o", dump_path], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(dump_path))


def differences(dump, attention, logits):
    """Largest |weight difference| over every layer and the largest |logit difference| relative
    to the largest |logit|; attention is a list or a {"layer": …} map."""
    layers = attention if isinstance(attention, list) else [attention[str(l)] for l in range(len(attention))]
    if len(dump["layers"]) != len(layers):
        raise SystemExit("%d layers, reference %d" % (len(dump["layers"]), len(layers)))
    worst = max(np.abs(np.array(layer["weights"]) - np.array(layers[layer["layer"]])).max() for layer in dump["layers"])
    logits = np.array(logits)
    return worst, np.abs(np.array(dump["last_logits"]) - logits).max() / np.abs(logits).max()


def main():
    attnviz = sys.argv[1]
    passed = failed = 0

    def report(ok, text):
        nonlocal passed, failed
        print("%s %s" % ("ok" if ok else "FAIL", text))
        passed, failed = passed + ok, failed + (not ok)

    with tempfile.TemporaryDirectory() as tmp:
        for family in FAMILIES:
            gguf = os.path.join(DATA, family + ".gguf")
            llamacpp = json.load(open(os.path.join(DATA, family + ".llamacpp.json")))
            ids = ",".join(str(i) for i in llamacpp["token_ids"])
            dump = attnviz_dump(attnviz, gguf, ids, tmp)
            worst, worst_logit = differences(dump, llamacpp["attention"], llamacpp["last_logits"])
            report(worst < LLAMACPP_ATTENTION and worst_logit < LLAMACPP_LOGITS,
                   "%s.gguf vs llama.cpp: max |attention diff| %.3g, max |logit diff| / max |logit| %.3g" % (family, worst, worst_logit))
            ref_path = os.path.join(tmp, "ref.json")
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts/reference_forward.py"), gguf, ids, ref_path], check=True)
            ref = json.load(open(ref_path))
            worst, worst_logit = differences(dump, ref["attention"], ref["last_logits"])
            if family in GELU_VARIANTS:
                subprocess.run([sys.executable, os.path.join(ROOT, "scripts/reference_forward.py"), gguf, ids, ref_path, "--gelu",
                                "tanh"], check=True)
                tanh = json.load(open(ref_path))
                apart = max(np.abs(np.array(tanh["attention"][str(l)]) - np.array(layer)).max()
                            for l, layer in enumerate(llamacpp["attention"]))
                report(apart > 20 * LLAMACPP_ATTENTION,
                       "%s.gguf: the tanh GELU formula misses llama.cpp's attention by %.3g" % (family, apart))
            report(worst < 1e-5 and worst_logit < 1e-5,
                   "%s.gguf vs float64: max |attention diff| %.3g, max |logit diff| / max |logit| %.3g" % (family, worst, worst_logit))
            folder = os.path.join(DATA, family + "-hf")
            if not os.path.isdir(folder):
                continue
            hf_dump = attnviz_dump(attnviz, folder, ids, tmp)
            # transformers' tanh GELU for the folder, and its window in every layer where it has one
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts/reference_forward.py"), gguf, ids, ref_path, "--gelu",
                            "tanh"] + (["--window-every-layer"] if family in WINDOW_EVERY_LAYER else []) +
                           (["--no-rope-layers", NO_ROPE_LAYERS[family]] if family in NO_ROPE_LAYERS else []), check=True)
            ref = json.load(open(ref_path))
            if family in WINDOW_EVERY_LAYER or family in NO_ROPE_LAYERS:
                apart, _ = differences(hf_dump, llamacpp["attention"], llamacpp["last_logits"])
                what = "window" if family in WINDOW_EVERY_LAYER else "no_rope_layers"
                report(apart > 0.1, "%s-hf differs from the GGUF by transformers' %s: max |attention diff| %.3g" % (family, what, apart))
            worst, worst_logit = differences(hf_dump, ref["attention"], ref["last_logits"])
            report(worst < 1e-5 and worst_logit < 1e-5,
                   "%s-hf vs float64: max |attention diff| %.3g, max |logit diff| / max |logit| %.3g" % (family, worst, worst_logit))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
