#!/usr/bin/env python3
"""A small synthetic BERT GGUF (llama.cpp's architecture "bert": the metadata keys and tensor names
of ggml-vocab-bert-bge.gguf and llama.cpp's LLM_ARCH_BERT), for tests and the reference capture.

    /usr/bin/python3 scripts/bert_gguf_writer.py OUT.gguf [--layers 2 --d-model 16 --heads 4 --ff 8
        --vocab 40 --context 64 --seed 0 --eps 1e-5 --type f32|f16|q8_0]

Weights are random normal / sqrt(fan_in) with a fixed seed; the query and key projections are
scaled up (×1.5) so attention is neither uniform nor one-hot, and the feed-forward is kept small
(up and down ×0.3) so llama.cpp's float16 GELU table stays within the tests' tolerance of an
exact GELU. Norm gains are 1 + 0.1·noise, biases 0.1·noise. The vocabulary is WordPiece as
llama.cpp's converter stores it ([PAD] [UNK] [CLS] [SEP] [MASK], then "▁a", "▁b", …).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_writer import F16, F32, Q8_0, letters, write_gguf  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--d-model", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ff", type=int, default=8)
    p.add_argument("--vocab", type=int, default=40)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--types", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eps", type=float, default=1e-5)
    p.add_argument("--type", choices=["f32", "f16", "q8_0"], default="f32", help="the matrices' type (norms and biases stay f32)")
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    d, ff = a.d_model, a.ff
    kind = {"f32": F32, "f16": F16, "q8_0": Q8_0}[a.type]

    def linear(out_dim, in_dim, gain=1.0):
        return rng.standard_normal((out_dim, in_dim)) * gain / np.sqrt(in_dim)

    def gain():
        return 1.0 + 0.1 * rng.standard_normal(d)

    def bias(n):
        return 0.1 * rng.standard_normal(n)

    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    types = [3, 2, 3, 3, 3]
    i = 0
    while len(pieces) < a.vocab:
        pieces.append("\u2581" + letters(i))
        types.append(1)
        i += 1
    metadata = {
        "general.architecture": "bert", "general.name": "synthetic-bert-%dL-%dd" % (a.layers, d),
        "bert.block_count": a.layers, "bert.context_length": a.context, "bert.embedding_length": d,
        "bert.feed_forward_length": ff, "bert.attention.head_count": a.heads,
        "bert.attention.layer_norm_epsilon": a.eps, "bert.attention.causal": False,
        "tokenizer.ggml.token_type_count": a.types, "tokenizer.ggml.model": "bert",
        "tokenizer.ggml.tokens": pieces, "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.bos_token_id": 2, "tokenizer.ggml.unknown_token_id": 1, "tokenizer.ggml.seperator_token_id": 3,
        "tokenizer.ggml.padding_token_id": 0, "tokenizer.ggml.cls_token_id": 2, "tokenizer.ggml.mask_token_id": 4,
    }
    tensors = [("token_embd.weight", (a.vocab, d), kind, rng.standard_normal((a.vocab, d))),
               ("token_types.weight", (a.types, d), F32, 0.5 * rng.standard_normal((a.types, d))),
               ("position_embd.weight", (a.context, d), F32, 0.5 * rng.standard_normal((a.context, d))),
               ("token_embd_norm.weight", (d,), F32, gain()), ("token_embd_norm.bias", (d,), F32, bias(d))]
    for l in range(a.layers):
        b = "blk.%d." % l
        tensors += [(b + "attn_q.weight", (d, d), kind, linear(d, d, 1.5)), (b + "attn_q.bias", (d,), F32, bias(d)),
                    (b + "attn_k.weight", (d, d), kind, linear(d, d, 1.5)), (b + "attn_k.bias", (d,), F32, bias(d)),
                    (b + "attn_v.weight", (d, d), kind, linear(d, d)), (b + "attn_v.bias", (d,), F32, bias(d)),
                    (b + "attn_output.weight", (d, d), kind, linear(d, d)), (b + "attn_output.bias", (d,), F32, bias(d)),
                    (b + "attn_output_norm.weight", (d,), F32, gain()), (b + "attn_output_norm.bias", (d,), F32, bias(d)),
                    (b + "ffn_up.weight", (ff, d), kind, linear(ff, d, 0.3)), (b + "ffn_up.bias", (ff,), F32, bias(ff)),
                    (b + "ffn_down.weight", (d, ff), kind, linear(d, ff, 0.3)), (b + "ffn_down.bias", (d,), F32, bias(d)),
                    (b + "layer_output_norm.weight", (d,), F32, gain()), (b + "layer_output_norm.bias", (d,), F32, bias(d))]
    write_gguf(a.out, metadata, tensors)


if __name__ == "__main__":
    main()
