#!/usr/bin/env python3
"""A Hugging Face folder's model with its input embedding and output projection tied, saved in
the layouts tied checkpoints come in, beside its untied equivalent (the same numbers):

    /usr/bin/python3 scripts/tied_checkpoint.py SOURCE_FOLDER OUT_DIR

OUT_DIR/save_model/      as safetensors.torch.save_model writes a tied model: of the names that
                         share one storage, the first in sorted order is stored and each other is
                         recorded in __metadata__ as {dropped: kept} (safetensors' torch.py,
                         _remove_duplicate_names and save_model; a Llama keeps lm_head.weight and
                         records "model.embed_tokens.weight": "lm_head.weight")
OUT_DIR/output_only/     the output matrix stored, the embedding neither stored nor recorded:
                         config.json's tie_word_embeddings alone ties it
OUT_DIR/embedding_only/  the embedding stored, as transformers' save_pretrained writes a tied
                         model (the _tied_weights_keys dropped, __metadata__ {"format": "pt"})
OUT_DIR/untied/          every matrix stored, tie_word_embeddings false

The tied matrix is the source's embedding (its output where it stores no embedding). A BertModel
folder becomes a BertForMaskedLM (names under "bert.", and the MLM head whose decoder is tied to
the word embeddings and whose decoder bias is cls.predictions.bias). safetensors' Python package
is not installed here, so the files are written by hand as its Rust serializer lays them out
(safetensors/src/tensor.rs, prepare and Metadata's Serialize): "__metadata__" first, then the
tensors by descending dtype and then name, compact JSON padded with spaces to a multiple of 8.
Every tensor of the source must be F32 (one dtype, so the order is by name).
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from family_models import write_safetensors  # noqa: E402  (the same layout, with __metadata__)

DECODERS = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Gemma2ForCausalLM",
            "Gemma3ForCausalLM", "Phi3ForCausalLM")


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header.pop("__metadata__", None)
    data = raw[8 + length:]
    tensors = {}
    for name, info in header.items():
        if info["dtype"] != "F32":
            sys.exit("%s: tensor %s is %s; this script writes F32 only" % (path, name, info["dtype"]))
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"])
    return tensors


def tied_model(config, tensors):
    """The state dict of the tied model as groups of names sharing one array: ([names], array)."""
    architecture = config["architectures"][0]
    if architecture in DECODERS:
        embedding, output, prefix = "model.embed_tokens.weight", "lm_head.weight", ""
    elif architecture == "GPT2LMHeadModel":
        embedding, output, prefix = "transformer.wte.weight", "lm_head.weight", ""
    elif architecture == "BertModel":
        embedding, output, prefix = "bert.embeddings.word_embeddings.weight", "cls.predictions.decoder.weight", "bert."
    else:
        sys.exit("architecture %s: no tied names known" % architecture)
    tensors = {prefix + name: value for name, value in tensors.items()}
    matrix = tensors.pop(embedding) if embedding in tensors else tensors[output]
    tensors.pop(output, None)
    groups = [([name], value) for name, value in tensors.items()] + [([embedding, output], matrix)]
    if prefix:
        d = matrix.shape[1]
        groups += [(["cls.predictions.transform.dense.weight"], np.eye(d, dtype=np.float32)),
                   (["cls.predictions.transform.dense.bias"], np.zeros(d, np.float32)),
                   (["cls.predictions.transform.LayerNorm.weight"], np.ones(d, np.float32)),
                   (["cls.predictions.transform.LayerNorm.bias"], np.zeros(d, np.float32)),
                   (["cls.predictions.bias", "cls.predictions.decoder.bias"], np.zeros(matrix.shape[0], np.float32))]
    return groups, embedding, output


def save_model_layout(groups):
    """_remove_duplicate_names: keep the first name of each group in sorted order; save_model
    records every other as {name: kept} in the metadata (no other metadata given)."""
    tensors, metadata = {}, {}
    for names, value in groups:
        kept = sorted(names)[0]
        tensors[kept] = value
        for name in sorted(names):
            if name != kept:
                metadata[name] = kept
    return tensors, (metadata or None)


def write_folder(folder, config, tensors, metadata):
    os.makedirs(folder, exist_ok=True)
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, metadata)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")


def main():
    source, out = sys.argv[1], sys.argv[2]
    with open(os.path.join(source, "config.json")) as f:
        config = json.load(f)
    groups, embedding, output = tied_model(config, read_safetensors(os.path.join(source, "model.safetensors")))
    if config["architectures"][0] == "BertModel":
        config = dict(config, architectures=["BertForMaskedLM"])
    tied, untied = dict(config, tie_word_embeddings=True), dict(config, tie_word_embeddings=False)
    write_folder(os.path.join(out, "save_model"), tied, *save_model_layout(groups))
    without_embedding = [([n for n in names if n != embedding], value) for names, value in groups]
    write_folder(os.path.join(out, "output_only"), tied, *save_model_layout([g for g in without_embedding if g[0]]))
    dropped = {output, "cls.predictions.decoder.bias"}  # BertForMaskedLM's _tied_weights_keys, or lm_head.weight
    kept = {names[0] if len(names) == 1 else sorted(set(names) - dropped)[0]: value for names, value in groups}
    write_folder(os.path.join(out, "embedding_only"), tied, kept, {"format": "pt"})
    write_folder(os.path.join(out, "untied"), untied, {name: value for names, value in groups for name in names}, None)


if __name__ == "__main__":
    main()
