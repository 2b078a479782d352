#!/usr/bin/env python3
"""The weights of a BERT GGUF written as a Hugging Face BertModel folder (config.json,
model.safetensors in float32, tensors named as llama.cpp's convert_hf_to_gguf.py maps BERT's,
reversed; tokenizer.json: the GGUF's WordPiece vocabulary).

    /usr/bin/python3 scripts/bert_hf_folder.py MODEL.gguf OUT_DIR [--hidden-act gelu]
"""
import argparse
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference_forward import read_gguf  # noqa: E402

PER_LAYER = {
    "attn_q": "attention.self.query", "attn_k": "attention.self.key", "attn_v": "attention.self.value",
    "attn_output": "attention.output.dense", "attn_output_norm": "attention.output.LayerNorm",
    "ffn_up": "intermediate.dense", "ffn_down": "output.dense", "layer_output_norm": "output.LayerNorm",
}
WHOLE = {"token_embd": "embeddings.word_embeddings", "position_embd": "embeddings.position_embeddings",
         "token_types": "embeddings.token_type_embeddings", "token_embd_norm": "embeddings.LayerNorm"}


def hf_name(name):
    stem, kind = name.rsplit(".", 1)
    if stem in WHOLE:
        return WHOLE[stem] + "." + kind
    _, layer, part = stem.split(".", 2)
    return "encoder.layer.%s.%s.%s" % (layer, PER_LAYER[part], kind)


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--hidden-act", default="gelu")
    p.add_argument("--architecture", choices=["BertModel", "BertForMaskedLM"], default="BertModel",
                   help="BertForMaskedLM keeps the encoder's tensors under \"bert.\"")
    a = p.parse_args()
    meta, tensors = read_gguf(a.model)
    os.makedirs(a.out, exist_ok=True)
    prefix = "bert." if a.architecture == "BertForMaskedLM" else ""
    write_safetensors(os.path.join(a.out, "model.safetensors"), {prefix + hf_name(k): v for k, v in tensors.items()})
    config = {
        "architectures": [a.architecture], "model_type": "bert", "hidden_size": meta["bert.embedding_length"],
        "num_hidden_layers": meta["bert.block_count"], "num_attention_heads": meta["bert.attention.head_count"],
        "intermediate_size": meta["bert.feed_forward_length"], "hidden_act": a.hidden_act,
        "max_position_embeddings": meta["bert.context_length"], "type_vocab_size": meta["tokenizer.ggml.token_type_count"],
        "vocab_size": len(meta["tokenizer.ggml.tokens"]), "layer_norm_eps": meta["bert.attention.layer_norm_epsilon"],
        "position_embedding_type": "absolute", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02, "pad_token_id": 0, "torch_dtype": "float32",
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    # The GGUF's WordPiece vocabulary as BERT's tokenizer.json holds it: word-initial pieces bare
    # (llama.cpp's converter marks them with "▁"), [CLS] $A [SEP] framing.
    pieces = [p[1:] if p.startswith("\u2581") else p for p in meta["tokenizer.ggml.tokens"]]
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": pieces.index(s), "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for s in specials],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
                       "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                           "pair": [], "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                                                          "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                  "vocab": {p: i for i, p in enumerate(pieces)}},
    }
    with open(os.path.join(a.out, "tokenizer.json"), "w") as f:
        json.dump(tokenizer, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
