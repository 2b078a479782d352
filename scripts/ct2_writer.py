#!/usr/bin/env python3
"""Rewrites a CTranslate2 TransformerBase model directory (binary version 2, as the
aren-transliteration test model ships) in the layout of later CTranslate2 versions, so that the
C++ reader's handling of them can be tested without CTranslate2 itself.

What is written follows CTranslate2's python/ctranslate2/specs/model_spec.py
(ModelSpec._serialize, LayerSpec._quantize) and transformer_spec.py (TransformerSpec, revision 7):

* binary version 4, 5 or 6: type ids (0 float32, 1 int8, 2 int16, 3 int32, 4 float16,
  5 bfloat16) and byte counts, then the alias table; version 3: item sizes (4, 2, 1) and item
  counts, then the alias table (float32, int8 and int16 only);
* spec "TransformerSpec", revision 7, with the spec configuration as scalar variables:
  encoder/num_heads and decoder/num_heads (int16), pre_norm, scale_embeddings, alibi… (int8),
  activation (int8, 0 = ReLU), alignment_layer and alignment_heads (int16);
* the source embeddings as encoder/embeddings_0/weight (TransformerEncoderSpec keeps a list);
* variables sorted by name; variables equal to an earlier one (by name order) become aliases;
* --dtype float16: every float variable as float16; int8: each weight (names ending in
  "weight") as int8 rows with NAME_scale = 127 / max|row| (float32), the rest float32; int16:
  each weight times NAME_scale = 2^10 / max|weight|, rounded;
* --post-norm and --activation N change the spec configuration (pre_norm 0, without the final
  layer norms, as a post-norm spec has none; activation N of common_spec.Activation) while
  keeping the weights: a different model, for checking those code paths against
  scripts/ct2_reference.py, not a translator;
* config.json (SequenceToSequenceModelConfig's fields) and the vocabularies as JSON lists
  (source_vocabulary.json, target_vocabulary.json), as CTranslate2 3.x writes them; with
  --txt-vocabularies the .txt files are copied instead.

Usage: ct2_writer.py SOURCE_DIR OUTPUT_DIR [--version 6] [--dtype float32] [--txt-vocabularies]
                     [--post-norm] [--activation N]
Exit code 77 when numpy is missing (the test reports that).
"""

import argparse
import json
import os
import shutil
import struct
import sys

try:
    import numpy as np
except ImportError:  # Debian: python3-numpy
    print("ct2_writer.py: numpy is missing (Debian package python3-numpy)", file=sys.stderr)
    sys.exit(77)

# Readers of binary versions before 4: the item size names the type (model.cc).
ITEM_SIZE_TYPES = {4: np.float32, 2: np.int16, 1: np.int8}
# DataType ids of include/ctranslate2/types.h.
TYPE_IDS = {np.dtype(np.float32): 0, np.dtype(np.int8): 1, np.dtype(np.int16): 2,
            np.dtype(np.int32): 3, np.dtype(np.float16): 4}
HEADS = {"TransformerBase": 8, "TransformerBig": 16}


def read_model(path):
    """Returns (spec name, {name: numpy array}) of a binary version 2 or 3 model.bin."""
    data = open(path, "rb").read()
    pos = 0

    def take(n):
        nonlocal pos
        if pos + n > len(data):
            raise ValueError("%s: truncated at offset %d" % (path, pos))
        chunk = data[pos:pos + n]
        pos += n
        return chunk

    def u(fmt):
        return struct.unpack("<" + fmt, take(struct.calcsize(fmt)))[0]

    def string():
        return take(u("H")).rstrip(b"\0").decode("utf-8")

    version = u("I")
    if version not in (2, 3):
        raise ValueError("%s: binary version %d, expected 2 or 3" % (path, version))
    spec = string()
    u("I")  # revision
    variables = {}
    for _ in range(u("I")):
        name = string()
        shape = [u("I") for _ in range(u("B"))]
        item_size = u("B")
        count = u("I")
        dtype = ITEM_SIZE_TYPES[item_size]
        variables[name] = np.frombuffer(take(count * item_size), dtype=dtype).reshape(shape).copy()
    return spec, variables


def spec_configuration(num_heads, pre_norm, activation):
    """TransformerEncoderSpec / TransformerDecoderSpec scalars."""
    int8, int16 = np.int8, np.int16
    config = {}
    for stack in ("encoder", "decoder"):
        config[stack + "/num_heads"] = np.array(num_heads, dtype=int16)
        config[stack + "/pre_norm"] = np.array(1 if pre_norm else 0, dtype=int8)
        config[stack + "/activation"] = np.array(activation, dtype=int8)
        config[stack + "/scale_embeddings"] = np.array(1, dtype=int8)
    config["encoder/embeddings_merge"] = np.array(0, dtype=int8)
    config["decoder/alignment_layer"] = np.array(-1, dtype=int16)
    config["decoder/alignment_heads"] = np.array(1, dtype=int16)
    for flag in ("alibi", "alibi_use_positive_positions", "scale_alibi", "start_from_zero_embedding"):
        config["decoder/" + flag] = np.array(0, dtype=int8)
    return config


def convert(variables, dtype):
    """Applies LayerSpec._quantize's rules for `dtype` to float32 variables."""
    out = {}
    for name, value in variables.items():
        if value.dtype != np.float32 or value.ndim == 0:
            out[name] = value
        elif dtype == "float16":
            out[name] = value.astype(np.float16)
        elif dtype == "int8" and name.endswith("weight"):
            amax = np.amax(np.absolute(value), axis=1)
            amax[amax == 0] = 127.0
            scale = (127.0 / amax).astype(np.float32)
            out[name] = np.rint(value * np.expand_dims(scale, 1)).astype(np.int8)
            out[name + "_scale"] = scale
        elif dtype == "int16" and name.endswith("weight"):
            scale = np.float32(2**10 / np.amax(np.absolute(value)))
            quantized = np.clip(np.rint(value * scale), -32768, 32767)
            out[name] = quantized.astype(np.int16)
            out[name + "_scale"] = np.array(scale, dtype=np.float32)
        else:
            out[name] = value
    return out


def write_model(path, version, variables):
    ordered = sorted(variables.items())
    aliases = []
    kept = []
    for name, value in ordered:
        # _alias_variables: a variable equal to one earlier in name order becomes an alias.
        twin = next((other for other, v in kept
                     if value.ndim > 0 and v.dtype == value.dtype and v.shape == value.shape
                     and np.array_equal(v, value)), None)
        if twin is None:
            kept.append((name, value))
        else:
            aliases.append((name, twin))
    with open(path, "wb") as f:
        def string(text):
            raw = text.encode("utf-8")
            f.write(struct.pack("<H", len(raw) + 1) + raw + b"\0")

        f.write(struct.pack("<I", version))
        string("TransformerSpec")
        f.write(struct.pack("<I", 7))
        f.write(struct.pack("<I", len(kept)))
        for name, value in kept:
            string(name)
            f.write(struct.pack("<B", value.ndim))
            for dim in value.shape:
                f.write(struct.pack("<I", dim))
            raw = np.ascontiguousarray(value).astype(value.dtype.newbyteorder("<")).tobytes()
            if version >= 4:
                f.write(struct.pack("<BI", TYPE_IDS[value.dtype], len(raw)))
            else:
                if value.dtype not in (np.float32, np.int16, np.int8):
                    sys.exit("ct2_writer.py: binary version 3 cannot hold %s (%s)" % (name, value.dtype))
                f.write(struct.pack("<BI", value.itemsize, value.size))
            f.write(raw)
        f.write(struct.pack("<I", len(aliases)))
        for alias, target in aliases:
            string(alias)
            string(target)
    return len(kept), len(aliases)


def read_lines(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source_dir")
    parser.add_argument("output_dir")
    parser.add_argument("--version", type=int, default=6, choices=(3, 4, 5, 6))
    parser.add_argument("--dtype", default="float32", choices=("float32", "float16", "int8", "int16"))
    parser.add_argument("--txt-vocabularies", action="store_true")
    parser.add_argument("--post-norm", action="store_true")
    parser.add_argument("--activation", type=int, default=0, choices=range(6))
    args = parser.parse_args()

    spec, variables = read_model(os.path.join(args.source_dir, "model.bin"))
    if spec not in HEADS:
        sys.exit("ct2_writer.py: spec %s: expected TransformerBase or TransformerBig" % spec)
    variables["encoder/embeddings_0/weight"] = variables.pop("encoder/embeddings/weight")
    if args.post_norm:
        for stack in ("encoder", "decoder"):
            del variables[stack + "/layer_norm/gamma"], variables[stack + "/layer_norm/beta"]
    variables.update(spec_configuration(HEADS[spec], not args.post_norm, args.activation))
    variables = convert(variables, args.dtype)

    os.makedirs(args.output_dir, exist_ok=True)
    kept, aliased = write_model(os.path.join(args.output_dir, "model.bin"), args.version, variables)
    config = {"add_source_bos": False, "add_source_eos": False, "bos_token": "<s>",
              "decoder_start_token": "<s>", "eos_token": "</s>", "layer_norm_epsilon": None,
              "multi_query_attention": False, "unk_token": "<unk>"}
    with open(os.path.join(args.output_dir, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    for role in ("source", "target"):
        txt = os.path.join(args.source_dir, role + "_vocabulary.txt")
        if args.txt_vocabularies:
            shutil.copyfile(txt, os.path.join(args.output_dir, role + "_vocabulary.txt"))
        else:
            with open(os.path.join(args.output_dir, role + "_vocabulary.json"), "w", encoding="utf-8") as f:
                json.dump(read_lines(txt), f, ensure_ascii=False)
    print("wrote %s: binary version %d, %s, %d variables, %d aliases"
          % (args.output_dir, args.version, args.dtype, kept, aliased))


if __name__ == "__main__":
    main()
