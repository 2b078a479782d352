#!/usr/bin/env python3
"""A small GGUF v3 writer for synthetic LLaMA-architecture models (benchmarks, fuzz seeds).

    /usr/bin/python3 scripts/gguf_writer.py OUT.gguf --layers 2 --d-model 16 --heads 4 --kv-heads 2 \
        --ff 32 --vocab 32 [--seed 0] [--type f32|f16]

Weights are random normal / sqrt(fan_in) (fixed seed); the vocabulary is a SentencePiece-style
one ("<unk>", "<s>", "</s>", the 256 byte tokens when the vocabulary is large enough, then
"▁a", "▁b"…), enough for `attnviz tokenize` and `--text`.
"""
import argparse
import struct

import numpy as np

ALIGN = 32


def put_string(out, text):
    data = text.encode("utf-8")
    out += struct.pack("<Q", len(data)) + data


def put_value(out, value):
    if isinstance(value, str):
        out += struct.pack("<I", 8)
        put_string(out, value)
    elif isinstance(value, bool):
        out += struct.pack("<IB", 7, value)
    elif isinstance(value, int):
        out += struct.pack("<II", 4, value)
    elif isinstance(value, float):
        out += struct.pack("<If", 6, value)
    elif isinstance(value, list):
        out += struct.pack("<I", 9)
        if all(isinstance(v, str) for v in value):
            out += struct.pack("<IQ", 8, len(value))
            for v in value:
                put_string(out, v)
        elif all(isinstance(v, float) for v in value):
            out += struct.pack("<IQ", 6, len(value)) + struct.pack("<%df" % len(value), *value)
        else:
            out += struct.pack("<IQ", 5, len(value)) + struct.pack("<%di" % len(value), *value)


def write_gguf(path, metadata, tensors):
    """tensors: list of (name, numpy array in row-major [out, in] order, ggml type 0=f32 / 1=f16)."""
    out = bytearray(b"GGUF") + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, value in metadata.items():
        put_string(out, key)
        put_value(out, value)
    blobs, offset = [], 0
    for name, array, kind in tensors:
        data = array.astype(np.float32 if kind == 0 else np.float16).tobytes()
        put_string(out, name)
        dims = list(reversed(array.shape))
        out += struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, offset)
        blobs.append(data)
        offset += (len(data) + ALIGN - 1) // ALIGN * ALIGN
    out += b"\0" * (-len(out) % ALIGN)
    for data in blobs:
        out += data + b"\0" * (-len(data) % ALIGN)
    with open(path, "wb") as f:
        f.write(out)


def vocabulary(size):
    pieces = ["<unk>", "<s>", "</s>"]
    types = [2, 3, 3]
    if size >= 3 + 256 + 1:
        pieces += ["<0x%02X>" % b for b in range(256)]
        types += [6] * 256
    i = 0
    while len(pieces) < size:
        pieces.append("\u2581" + "".join(chr(ord("a") + (i // 26 ** k) % 26) for k in range(1 + (i >= 26))))
        types.append(1)
        i += 1
    return pieces, [float(-i) for i in range(size)], types


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-model", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--ff", type=int, default=32)
    p.add_argument("--vocab", type=int, default=32)
    p.add_argument("--context", type=int, default=2048)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--type", choices=["f32", "f16"], default="f32")
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    kind = 0 if a.type == "f32" else 1
    d, h, kv, ff = a.d_model, a.heads, a.kv_heads, a.ff
    dk = d // h

    def linear(out_dim, in_dim):
        return rng.standard_normal((out_dim, in_dim)) / np.sqrt(in_dim)

    pieces, scores, types = vocabulary(a.vocab)
    metadata = {
        "general.architecture": "llama", "general.name": "synthetic-%dL-%dd" % (a.layers, d),
        "llama.block_count": a.layers, "llama.embedding_length": d, "llama.feed_forward_length": ff,
        "llama.attention.head_count": h, "llama.attention.head_count_kv": kv,
        "llama.attention.layer_norm_rms_epsilon": 1e-5, "llama.rope.dimension_count": dk,
        "llama.context_length": a.context,
        "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": pieces, "tokenizer.ggml.scores": scores,
        "tokenizer.ggml.token_type": types, "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.unknown_token_id": 0,
    }
    tensors = [("token_embd.weight", rng.standard_normal((a.vocab, d)), kind),
               ("output_norm.weight", np.ones(d), 0)]
    for l in range(a.layers):
        b = "blk.%d." % l
        tensors += [(b + "attn_norm.weight", np.ones(d), 0), (b + "attn_q.weight", linear(h * dk, d), kind),
                    (b + "attn_k.weight", linear(kv * dk, d), kind), (b + "attn_v.weight", linear(kv * dk, d), kind),
                    (b + "attn_output.weight", linear(d, h * dk), kind), (b + "ffn_norm.weight", np.ones(d), 0),
                    (b + "ffn_gate.weight", linear(ff, d), kind), (b + "ffn_up.weight", linear(ff, d), kind),
                    (b + "ffn_down.weight", linear(d, ff), kind)]
    write_gguf(a.out, metadata, tensors)


if __name__ == "__main__":
    main()
