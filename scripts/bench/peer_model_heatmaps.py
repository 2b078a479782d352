#!/usr/bin/python3
"""The route a user takes today for per-layer attention pictures of a GGUF model (whole-model
benchmark 4, scripts/bench/model_run.sh): a numpy GGUF reader (F32/F16 tensors, mapped), a
PyTorch float32 forward pass of the LLaMA architecture that keeps every layer's softmax weights
(as Hugging Face's eager attention with output_attentions=True), then per layer a matplotlib grid
of all heads with token labels and a colour bar plus one labelled PNG per head (Agg backend),
into OUT_DIR/layer_<l>/{grid.png, head_<h>.png}.

  peer_model_heatmaps.py MODEL.gguf IDS OUT_DIR [--threads N]
"""
import math
import os
import struct
import sys

import numpy as np
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from peer_heatmaps import draw  # noqa: E402  (same drawing as the single-layer peer)

SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def read_gguf(path):
    """Metadata as a dict, tensors as float32 torch tensors in [out, in] order."""
    data = np.memmap(path, dtype=np.uint8, mode="r")
    buf = memoryview(data)
    pos = 4

    def take(fmt):
        nonlocal pos
        value = struct.unpack_from(fmt, buf, pos)[0]
        pos += struct.calcsize(fmt)
        return value

    def string():
        nonlocal pos
        n = take("<Q")
        text = bytes(buf[pos:pos + n]).decode("utf-8", errors="replace")
        pos += n
        return text

    def value(kind):
        if kind == 8:
            return string()
        if kind == 9:
            element, count = take("<I"), take("<Q")
            return [value(element) for _ in range(count)]
        return take(SCALARS[kind])

    assert bytes(buf[:4]) == b"GGUF"
    take("<I")
    n_tensors, n_kv = take("<Q"), take("<Q")
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, dims, take("<I"), take("<Q")))
    align = meta.get("general.alignment", 32)
    start = (pos + align - 1) // align * align
    tensors = {}
    for name, dims, kind, offset in infos:
        count = int(np.prod(dims))
        dtype = {0: np.float32, 1: np.float16}[kind]
        array = np.frombuffer(data, dtype, count, start + offset).reshape(list(reversed(dims)))
        tensors[name] = torch.from_numpy(array.astype(np.float32))
    return meta, tensors


def rope(x, n, heads, d_head, rope_dim, theta):
    """llama.cpp's rope for GGUF LLaMA files: adjacent pairs (2i, 2i+1) turn by pos·θ^(-2i/dim)."""
    x = x.view(n, heads, d_head).clone()
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    freq = theta ** (-torch.arange(0, rope_dim, 2, dtype=torch.float32) / rope_dim)
    angle = pos * freq[None, :]
    cos, sin = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
    a, b = x[:, :, 0:rope_dim:2].clone(), x[:, :, 1:rope_dim:2].clone()
    x[:, :, 0:rope_dim:2] = a * cos - b * sin
    x[:, :, 1:rope_dim:2] = a * sin + b * cos
    return x  # [n, heads, d_head]


def rms_norm(x, gain, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * gain


@torch.no_grad()
def forward(meta, t, ids):
    """Every layer's attention weights, [layers][heads, n, n]."""
    a = meta["general.architecture"]
    layers, heads = meta[a + ".block_count"], meta[a + ".attention.head_count"]
    kv = meta.get(a + ".attention.head_count_kv", heads)
    d_model = meta[a + ".embedding_length"]
    d_head = d_model // heads
    eps = meta.get(a + ".attention.layer_norm_rms_epsilon", 1e-5)
    theta = meta.get(a + ".rope.freq_base", 10000.0)
    rope_dim = meta.get(a + ".rope.dimension_count", d_head)
    n = len(ids)
    x = t["token_embd.weight"][torch.tensor(ids)]
    mask = torch.full((n, n), float("-inf")).triu(1)
    captured = []
    for l in range(layers):
        p = "blk.%d." % l
        h = rms_norm(x, t[p + "attn_norm.weight"], eps)
        q = rope(h @ t[p + "attn_q.weight"].T, n, heads, d_head, rope_dim, theta).transpose(0, 1)
        k = rope(h @ t[p + "attn_k.weight"].T, n, kv, d_head, rope_dim, theta).transpose(0, 1)
        v = (h @ t[p + "attn_v.weight"].T).view(n, kv, d_head).transpose(0, 1)
        k = k.repeat_interleave(heads // kv, dim=0)
        v = v.repeat_interleave(heads // kv, dim=0)
        w = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d_head) + mask, dim=-1)  # [heads, n, n]
        captured.append(w.numpy())
        x = x + (w @ v).transpose(0, 1).reshape(n, heads * d_head) @ t[p + "attn_output.weight"].T
        h = rms_norm(x, t[p + "ffn_norm.weight"], eps)
        x = x + (torch.nn.functional.silu(h @ t[p + "ffn_gate.weight"].T) * (h @ t[p + "ffn_up.weight"].T)) @ \
            t[p + "ffn_down.weight"].T
    return captured


def main():
    model, ids_text, out = sys.argv[1:4]
    if "--threads" in sys.argv:
        torch.set_num_threads(int(sys.argv[sys.argv.index("--threads") + 1]))
    ids = [int(i) for i in ids_text.split(",")]
    meta, tensors = read_gguf(model)
    pieces = meta["tokenizer.ggml.tokens"]
    tokens = [pieces[i] for i in ids]
    for l, a in enumerate(forward(meta, tensors, ids)):
        folder = os.path.join(out, "layer_%d" % l)
        os.makedirs(folder, exist_ok=True)
        h = a.shape[0]
        fig, axes = plt.subplots(2, (h + 1) // 2, figsize=(24, 12))
        for i, ax in enumerate(axes.flat[:h]):
            im = draw(ax, fig, a[i], tokens, f"L{l}H{i}")
        fig.colorbar(im, ax=axes, label="attention weight")
        fig.suptitle(f"layer {l} self-attention weights")
        fig.savefig(os.path.join(folder, "grid.png"))
        plt.close(fig)
        for i in range(h):
            fig, ax = plt.subplots(figsize=(8, 7.5))
            im = draw(ax, fig, a[i], tokens, f"L{l}H{i}")
            fig.colorbar(im, ax=ax, label="attention weight")
            fig.savefig(os.path.join(folder, f"head_{i}.png"))
            plt.close(fig)
    if "--dump" in sys.argv:  # for checking the peer against attnviz
        np.save(sys.argv[sys.argv.index("--dump") + 1], np.stack(forward(meta, tensors, ids)))


if __name__ == "__main__":
    main()
