#!/usr/bin/env python3
"""A small GGUF v3 writer for synthetic LLaMA-architecture models (benchmarks, fuzz seeds).

    /usr/bin/python3 scripts/gguf_writer.py OUT.gguf --layers 2 --d-model 16 --heads 4 --kv-heads 2 \
        --ff 32 --vocab 32 [--seed 0] [--type f32|f16|q8_0] [--arch llama|qwen2]

Weights are random normal / sqrt(fan_in) (fixed seed); the vocabulary is a SentencePiece-style
one ("<unk>", "<s>", "</s>", the 256 byte tokens when the vocabulary is large enough, then
"▁a", "▁b"…), enough for `attnviz tokenize` and `--text`. With --type q8_0 every matrix is
stored in ggml's Q8_0 blocks (quantize_row_q8_0_ref: per 32 values d = max|x| / 127 as f16,
q = round(x / d) as int8); norms stay f32. Tensors are drawn one at a time and streamed to the
file, so a model of several GB needs little more memory than its largest tensor.
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


F32, F16, Q8_0 = 0, 1, 8


def quantize_q8_0(array):
    """ggml's quantize_row_q8_0_ref on each row: blocks of a float16 scale then 32 int8 values."""
    x = np.asarray(array, dtype=np.float32).reshape(-1, 32)
    amax = np.abs(x).max(axis=1)
    d = amax / np.float32(127)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    v = x * inv[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + np.float32(0.5))).astype(np.int8)  # roundf: half away from zero
    blocks = np.empty(x.shape[0], dtype=[("d", "<f2"), ("qs", "i1", 32)])
    blocks["d"] = d.astype(np.float16)
    blocks["qs"] = q
    return blocks.tobytes()


def tensor_bytes(array, kind):
    if kind == Q8_0:
        return quantize_q8_0(array)
    return np.asarray(array).astype(np.float32 if kind == F32 else np.float16).tobytes()


def stored_size(shape, kind):
    count = int(np.prod(shape))
    return count * 4 if kind == F32 else count * 2 if kind == F16 else count // 32 * 34


def write_gguf(path, metadata, tensors):
    """tensors: list of (name, shape [out, in] row-major, ggml type 0=f32 / 1=f16 / 8=q8_0, array or
    a function returning the array); functions are called in list order while writing."""
    out = bytearray(b"GGUF") + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, value in metadata.items():
        put_string(out, key)
        put_value(out, value)
    offset = 0
    for name, shape, kind, _ in tensors:
        if kind == Q8_0 and shape[-1] % 32:
            raise SystemExit("%s: rows of %d values do not split into Q8_0 blocks of 32" % (name, shape[-1]))
        put_string(out, name)
        dims = list(reversed(shape))
        out += struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", kind, offset)
        size = stored_size(shape, kind)
        offset += (size + ALIGN - 1) // ALIGN * ALIGN
    out += b"\0" * (-len(out) % ALIGN)
    with open(path, "wb") as f:
        f.write(out)
        for name, shape, kind, array in tensors:
            data = tensor_bytes(array() if callable(array) else array, kind)
            assert len(data) == stored_size(shape, kind), name
            f.write(data + b"\0" * (-len(data) % ALIGN))


def letters(i):
    """A distinct lower-case name for every i ≥ 0: a…z, then two letters (first letter fastest), then
    three, four… (llama.cpp refuses a vocabulary with two equal pieces)."""
    if i < 26 + 26 * 26:
        return "".join(chr(ord("a") + (i // 26 ** k) % 26) for k in range(1 + (i >= 26)))
    i -= 26 + 26 * 26
    length = 3
    while i >= 26 ** length:
        i -= 26 ** length
        length += 1
    return "".join(chr(ord("a") + (i // 26 ** k) % 26) for k in range(length))


def vocabulary(size):
    pieces = ["<unk>", "<s>", "</s>"]
    types = [2, 3, 3]
    if size >= 3 + 256 + 1:
        pieces += ["<0x%02X>" % b for b in range(256)]
        types += [6] * 256
    i = 0
    while len(pieces) < size:
        pieces.append("\u2581" + letters(i))
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
    p.add_argument("--type", choices=["f32", "f16", "q8_0"], default="f32")
    p.add_argument("--arch", choices=["llama", "qwen2"], default="llama",
                   help="qwen2: llama.cpp's qwen2 (Q, K, V biases, θ 1e6) instead of llama")
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    kind = {"f32": F32, "f16": F16, "q8_0": Q8_0}[a.type]
    d, h, kv, ff = a.d_model, a.heads, a.kv_heads, a.ff
    dk = d // h

    def linear(out_dim, in_dim):  # drawn when written, in list order (same values as drawing up front)
        return (out_dim, in_dim), lambda: rng.standard_normal((out_dim, in_dim)) / np.sqrt(in_dim)


    pieces, scores, types = vocabulary(a.vocab)
    arch = a.arch
    metadata = {
        "general.architecture": a.arch, "general.name": "synthetic-%dL-%dd" % (a.layers, d),
        arch + ".block_count": a.layers, arch + ".embedding_length": d, arch + ".feed_forward_length": ff,
        arch + ".attention.head_count": h, arch + ".attention.head_count_kv": kv,
        arch + ".attention.layer_norm_rms_epsilon": 1e-5, arch + ".rope.dimension_count": dk,
        arch + ".context_length": a.context,
        "tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": pieces, "tokenizer.ggml.scores": scores,
        "tokenizer.ggml.token_type": types, "tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.unknown_token_id": 0,
    }
    if arch == "qwen2":
        metadata[arch + ".rope.freq_base"] = 1e6
    tensors = [("token_embd.weight", (a.vocab, d), kind, lambda: rng.standard_normal((a.vocab, d))),
               ("output_norm.weight", (d,), F32, np.ones(d))]
    for l in range(a.layers):
        b = "blk.%d." % l
        norm = lambda name: (b + name, (d,), F32, np.ones(d))
        mat = lambda name, shape_and_draw: (b + name, shape_and_draw[0], kind, shape_and_draw[1])
        tensors += [norm("attn_norm.weight"), mat("attn_q.weight", linear(h * dk, d)),
                    mat("attn_k.weight", linear(kv * dk, d)), mat("attn_v.weight", linear(kv * dk, d))]
        if a.arch == "qwen2":  # drawn after the matrices they follow, in list order
            tensors += [(b + "attn_%s.bias" % m, (w,), F32, lambda w=w: 0.1 * rng.standard_normal(w))
                        for m, w in (("q", h * dk), ("k", kv * dk), ("v", kv * dk))]
        tensors += [
                    mat("attn_output.weight", linear(d, h * dk)), norm("ffn_norm.weight"),
                    mat("ffn_gate.weight", linear(ff, d)), mat("ffn_up.weight", linear(ff, d)),
                    mat("ffn_down.weight", linear(d, ff))]
    write_gguf(a.out, metadata, tensors)


if __name__ == "__main__":
    main()
