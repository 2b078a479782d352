#!/usr/bin/env python3
"""dump -o FILE.safetensors against the JSON dump of the same run (issue 36), read by a reader
written here from the format's description (huggingface/safetensors README: 8-byte
little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets}, optional
"__metadata__": {str: str}}, then the data, offsets relative to its start, tiling it exactly):

* stories260K, a family model (qwen2, gpt2) and the aren-translit translation model: every
  tensor equals the JSON dump's value bit for bit (scores: -inf where the JSON has null), and
  every __metadata__ value is the JSON dump's member;
* the file is exactly 8 + N + the tensors' bytes (one layer: 4·h·n² with no other tensor);
* render of the .safetensors writes the same files, byte for byte, as render of the JSON;
* --activations: resid_mid = resid_pre + attn_out and resid_post = resid_mid + mlp_out exactly,
  each layer's resid_pre the last one's resid_post, z = the heads' outputs, and the last layer's
  resid_post through the final RMSNorm and W_U (numpy, float64) gives the dump's --logits
  within 1e-5;
* bad input: an unknown hook point is refused naming it, --activations without --model too, and
  a JSON dump of activations over 64 MiB before the forward pass, naming the size and the
  safetensors spelling.

    /usr/bin/python3 tests/safetensors_dump_test.py build/attnviz
"""
import filecmp
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from reference_forward import read_gguf  # noqa: E402  (the float64 reference's GGUF reader)

STORIES = os.path.join(ROOT, "data/stories260k/stories260K.gguf")
STORIES_LAYER = os.path.join(ROOT, "data/stories260k/layer0.json")
FAMILIES = os.path.join(ROOT, "tests/data/families")
TRANSLIT = os.path.join(ROOT, "data/aren-translit/model")
IDS = "1,403,407,261,378,432,383,286,261,376,298,315,421,395,317,426,338,401,396,267,337,410,408,419,292,411,322"
DTYPES = {"F32": np.float32, "F64": np.float64}

passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok " if ok else "FAIL ") + what)
    passed, failed = passed + bool(ok), failed + (not ok)


def read_safetensors(path):
    """The spec's reader: header length, JSON header, tensors by data_offsets (tiling the data)."""
    data = open(path, "rb").read()
    (n,) = struct.unpack_from("<Q", data, 0)
    assert 8 + n <= len(data), "header past the end"
    assert data[8:9] == b"{", "the header starts with {"
    header = json.loads(data[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    tensors, covered = {}, 0
    for name, entry in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        begin, end = entry["data_offsets"]
        assert begin == covered, "%s starts at %d, not %d: a hole or an overlap" % (name, begin, covered)
        dtype = np.dtype(DTYPES[entry["dtype"]]).newbyteorder("<")
        count = int(np.prod(entry["shape"], dtype=np.int64))
        assert end - begin == count * dtype.itemsize, name
        tensors[name] = np.frombuffer(data, dtype, count, 8 + n + begin).reshape(entry["shape"])
        covered = end
    assert 8 + n + covered == len(data), "the data is %d bytes, the tensors %d" % (len(data) - 8 - n, covered)
    return n, metadata, tensors


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def f32(values):
    """JSON numbers (null = a masked score, -inf) as float32: each is a float32's shortest text."""
    return np.array(json.loads(json.dumps(values).replace("null", "-Infinity")), dtype=np.float32)


def run(*args, ok=True):
    result = subprocess.run(list(args), capture_output=True, text=True)
    if ok and result.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(args), result.stderr))
    return result


def dump_both(attnviz, tmp, name, args):
    json_path, st_path = os.path.join(tmp, name + ".json"), os.path.join(tmp, name + ".safetensors")
    run(attnviz, "dump", *args, "-o", json_path)
    run(attnviz, "dump", *args, "-o", st_path)
    return json.load(open(json_path)), read_safetensors(st_path), json_path, st_path


MATRIX_FIELDS = {"weights", "scores", "scores_masked", "head_outputs", "output", "norms", "value_norms", "layer_norms",
                 "alti", "resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out"}


def compare_layer(layer, tensors, metadata, attention, block, label):
    """Every matrix of one JSON layer against its tensors, and its header against the metadata."""
    mismatches = []
    expect = {attention + ".hook_pattern": f32(layer["weights"])}
    if "scores" in layer:
        expect[attention + ".hook_attn_scores"] = f32(layer["scores"])
    if "head_outputs" in layer:
        expect[attention + ".hook_z"] = f32(layer["head_outputs"]).transpose(1, 0, 2)
    if "output" in layer:
        expect[(block + "." if block else "") + ("hook_cross_attn_out" if layer["mode"] == "cross" else "hook_attn_out")] = \
            f32(layer["output"])
    for field in ("norms", "value_norms", "layer_norms", "alti"):
        if field in layer:
            expect[attention + "." + field] = f32(layer[field])
    for field in ("resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out"):
        if field in layer:
            expect[block + ".hook_" + field] = f32(layer[field])
    for name, value in expect.items():
        if name not in tensors or not same_bits(tensors[name], value):
            mismatches.append(name)
    header = json.loads(metadata[attention]) if attention in metadata else None
    small = {k: v for k, v in layer.items() if k not in MATRIX_FIELDS}
    if header != small:
        mismatches.append("__metadata__ " + attention)
    check(not mismatches, "%s: %d tensors and the header bit for bit%s" % (
        label, len(expect), ("; differ: " + ", ".join(mismatches)) if mismatches else ""))
    return set(expect)


def compare_model(dump, stored, label, encoder_decoder=False):
    n, metadata, tensors = stored
    seen = set()
    for layer in dump["layers"]:
        block = ("%s." % layer["stack"] if encoder_decoder else "") + "blocks.%d" % layer["layer"]
        attention = block + (".cross_attn" if layer["kind"] == "cross" else ".attn")
        seen |= compare_layer(layer, tensors, metadata, attention, block, "%s %s" % (label, attention))
    run_members = {k: v for k, v in dump.items() if k not in ("layers", "last_logits", "rollout", "rollout_residual",
                                                               "alti_rollout", "attention_flow")}
    meta_run = {k: json.loads(v) for k, v in metadata.items() if not (k.endswith(".attn") or k.endswith(".cross_attn"))}
    check(meta_run == run_members, "%s: __metadata__ holds the JSON dump's header (%d members)" % (label, len(run_members)))
    for field in ("last_logits", "rollout", "rollout_residual", "alti_rollout", "attention_flow"):
        if field in dump:
            dtype = np.float32 if field == "last_logits" else np.float64
            check(same_bits(tensors.get(field), np.array(dump[field], dtype=dtype)), "%s: %s bit for bit" % (label, field))
            seen.add(field)
    check(set(tensors) == seen, "%s: no tensor beyond the JSON dump's (%d)" % (label, len(tensors)))


def logits_check(dump_tensors, model, last_layer, logits, label):
    meta, t = read_gguf(model)
    arch = meta["general.architecture"]
    eps = meta.get(arch + ".attention.layer_norm_rms_epsilon", 1e-5)
    x = dump_tensors["blocks.%d.hook_resid_post" % last_layer][-1].astype(np.float64)
    normed = x / np.sqrt((x * x).mean() + eps) * t["output_norm.weight"]
    ours = t.get("output.weight", t["token_embd.weight"]) @ normed
    worst = np.abs(ours - np.array(logits, dtype=np.float64)).max()
    check(worst < 1e-5, "%s: resid_post of layer %d through the final norm and W_U: max |logit diff| %.3g (< 1e-5)" % (
        label, last_layer, worst))


def activations_check(tensors, layers, label):
    exact = True
    for l in range(layers):
        b = "blocks.%d." % l
        exact &= same_bits(tensors[b + "hook_resid_mid"], tensors[b + "hook_resid_pre"] + tensors[b + "hook_attn_out"])
        exact &= same_bits(tensors[b + "hook_resid_post"], tensors[b + "hook_resid_mid"] + tensors[b + "hook_mlp_out"])
        if l + 1 < layers:
            exact &= same_bits(tensors["blocks.%d.hook_resid_pre" % (l + 1)], tensors[b + "hook_resid_post"])
    check(exact, "%s: resid_mid = resid_pre + attn_out, resid_post = resid_mid + mlp_out, resid_pre(l+1) = resid_post(l), exactly" % label)


def main():
    attnviz = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        # stories260K: every field a model dump can hold.
        args = ["--model", STORIES, "--token-ids", IDS, "--scores", "--outputs", "--logits", "--measure", "norms", "--rollout"]
        dump, stored, json_path, st_path = dump_both(attnviz, tmp, "stories", args)
        compare_model(dump, stored, "stories260K")
        n, _, tensors = stored
        check(os.path.getsize(st_path) == 8 + n + sum(a.nbytes for a in tensors.values()),
              "stories260K: the file is 8 + header + the tensors' bytes")

        # render reads it back: the same pictures, byte for byte.
        for source, folder in ((json_path, "render_json"), (st_path, "render_st")):
            run(attnviz, "render", source, "-o", os.path.join(tmp, folder))
        a, b = os.path.join(tmp, "render_json"), os.path.join(tmp, "render_st")
        files = sorted(os.path.relpath(os.path.join(d, f), a) for d, _, fs in os.walk(a) for f in fs)
        same = files and all(filecmp.cmp(os.path.join(a, f), os.path.join(b, f), shallow=False) for f in files)
        same = same and files == sorted(os.path.relpath(os.path.join(d, f), b) for d, _, fs in os.walk(b) for f in fs)
        check(same, "render of the .safetensors writes the JSON's %d files, byte for byte" % len(files))

        # compare reads it too (one layer of a model dump, against the JSON's).
        one_json, one_st = os.path.join(tmp, "one.json"), os.path.join(tmp, "one.safetensors")
        run(attnviz, "dump", "--model", STORIES, "--token-ids", IDS, "--layers", "2", "-o", one_json)
        run(attnviz, "dump", "--model", STORIES, "--token-ids", IDS, "--layers", "2", "-o", one_st)
        stats_a, stats_b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
        run(attnviz, "compare", one_json, one_st, "-o", os.path.join(tmp, "cmp.png"), "--stats", stats_a)
        run(attnviz, "compare", one_st, one_st, "-o", os.path.join(tmp, "cmp2.png"), "--stats", stats_b)
        check(open(stats_a).read() == open(stats_b).read(), "compare: the .safetensors against the JSON as against itself")
        compare_model(json.load(open(one_json)), read_safetensors(one_st), "one layer, written head by head")
        n, _, tensors = read_safetensors(one_st)
        h, q = 8, len(IDS.split(","))
        check(os.path.getsize(one_st) == 8 + n + 4 * h * q * q and list(tensors) == ["blocks.2.attn.hook_pattern"],
              "one layer: the file is exactly header + 4·h·n² bytes (%d + %d)" % (8 + n, 4 * h * q * q))

        # A single-layer dump (dump SENTENCE), and render of it.
        dump, stored, json_path, st_path = dump_both(attnviz, tmp, "layer", [STORIES_LAYER, "--scores", "--outputs"])
        n, metadata, tensors = stored
        small = {k: v for k, v in dump.items() if k not in MATRIX_FIELDS}
        check({k: json.loads(v) for k, v in metadata.items()} == small, "single layer: __metadata__ is the dump's header")
        block = "blocks.%d" % dump["layer"] if dump.get("layer") is not None else ""
        attention = (block + "." if block else "") + "attn"
        compare_layer(dict(dump), tensors, {attention: json.dumps(small)}, attention, block, "single layer")
        run(attnviz, "render", json_path, "-o", os.path.join(tmp, "rl_json"))
        run(attnviz, "render", st_path, "-o", os.path.join(tmp, "rl_st"))
        grids = [open(os.path.join(tmp, d, "grid.png"), "rb").read() for d in ("rl_json", "rl_st")]
        check(grids[0] == grids[1], "single layer: render draws the same grid.png")

        # Family models: qwen2 (GQA, RoPE, biases), gpt2 (learned positions, LayerNorm, GELU).
        for family in ("qwen2", "gpt2"):
            model = os.path.join(FAMILIES, family + ".gguf")
            dump, stored, _, _ = dump_both(attnviz, tmp, family, ["--model", model, "--token-ids", "1,5,6,7,8,9,10,11",
                                                                  "--scores", "--outputs", "--logits", "--measure", "norms"])
            compare_model(dump, stored, family)

        # The translation model: encoder, decoder and cross-attention blocks named by stack.
        translit = os.path.join(tmp, "translit")
        dump, stored, _, _ = dump_both(attnviz, tmp, "translit", ["--model", TRANSLIT, "--source-tokens", "آ ت ز م و ن",
                                                                  "--scores", "--outputs"])
        compare_model(dump, stored, "aren-translit", encoder_decoder=True)
        check(any(k.startswith("decoder.blocks.0.cross_attn") for k in stored[2]), "aren-translit: decoder.blocks.0.cross_attn.* present")

        # --activations: exact sums, and the logits from the last resid_post.
        names = "resid_pre,resid_mid,resid_post,attn_out,mlp_out,z"
        for label, model, layers in (("stories260K", STORIES, 5), ("qwen2", os.path.join(FAMILIES, "qwen2.gguf"), None)):
            ids = IDS if model == STORIES else "1,5,6,7,8,9,10,11"
            dump, stored, _, _ = dump_both(attnviz, tmp, "act_" + label, ["--model", model, "--token-ids", ids, "--logits",
                                                                          "--activations", names])
            compare_model(dump, stored, label + " --activations")
            layers = len(dump["layers"])
            activations_check(stored[2], layers, label)
            logits_check(stored[2], model, layers - 1, dump["last_logits"], label)

        # Bad input.
        bad = run(attnviz, "dump", "--model", STORIES, "--token-ids", IDS, "--activations", "resid_pre,residual",
                  "-o", os.path.join(tmp, "never.safetensors"), ok=False)
        check(bad.returncode != 0 and '"residual"' in bad.stderr and not os.path.exists(os.path.join(tmp, "never.safetensors")),
              "an unknown hook point is refused, named: " + bad.stderr.strip().splitlines()[-1][:120])
        # A JSON dump of activations past 64 MiB is refused before the forward pass: 2 layers ×
        # 4000 positions × 5 hook points × d_model 512 floats is 78.1 MiB.
        wide = os.path.join(tmp, "wide.gguf")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/gguf_writer.py"), wide, "--layers", "2", "--d-model", "512",
                        "--heads", "8", "--kv-heads", "8", "--ff", "64", "--vocab", "64", "--context", "4096"], check=True,
                       stdout=subprocess.DEVNULL)
        ids = ",".join(["1"] + [str(2 + i % 60) for i in range(3999)])
        big = run(attnviz, "dump", "--model", wide, "--token-ids", ids, "--activations", "resid_pre,resid_mid,resid_post,attn_out,mlp_out",
                  "-o", os.path.join(tmp, "big.json"), ok=False)
        check(big.returncode != 0 and "78.1 MiB" in big.stderr and "big.safetensors" in big.stderr and
              not os.path.exists(os.path.join(tmp, "big.json")), "JSON activations over 64 MiB refused: " + big.stderr.strip()[:200])
        alone = run(attnviz, "dump", STORIES_LAYER, "--activations", "resid_pre", "-o", os.path.join(tmp, "never.json"), ok=False)
        check(alone.returncode != 0 and "--activations" in alone.stderr and "--model" in alone.stderr,
              "--activations without --model is refused: " + alone.stderr.strip().splitlines()[-1][:120])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
