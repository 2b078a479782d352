#!/usr/bin/python3
"""The Python pipeline attnviz replaces (issue 7, P1): json.load, PyTorch's
nn.MultiheadAttention(need_weights=True, average_attn_weights=False), a matplotlib 2 x 4 grid
with token labels and a colour bar, then one labelled PNG per head (Agg backend).

  peer_heatmaps.py SENTENCE.json WEIGHTS.json OUT_DIR [--threads N]
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
from torch_mha import build_mha  # noqa: E402


def load(sentence_path, weights_path):
    with open(sentence_path) as f:
        sentence = json.load(f)
    with open(weights_path) as f:
        weights = json.load(f)
    return sentence, weights


def attention_weights(sentence, weights):
    x = torch.tensor(sentence["embeddings"], dtype=torch.float32)  # [n, d_model]
    mha = build_mha(weights, x.shape[1])
    with torch.no_grad():
        _, a = mha(x[None], x[None], x[None], need_weights=True, average_attn_weights=False)
    return a[0].numpy()  # [h, n, n]


def draw(ax, fig, a, tokens, title):
    im = ax.imshow(a, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=7)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=7)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("keys")
    ax.set_ylabel("queries")
    return im


def main():
    sentence_path, weights_path, out = sys.argv[1:4]
    if "--threads" in sys.argv:
        torch.set_num_threads(int(sys.argv[sys.argv.index("--threads") + 1]))
    os.makedirs(out, exist_ok=True)
    sentence, weights = load(sentence_path, weights_path)
    a = attention_weights(sentence, weights)
    tokens = sentence["tokens"]
    h = a.shape[0]
    fig, axes = plt.subplots(2, (h + 1) // 2, figsize=(24, 12))
    for i, ax in enumerate(axes.flat[:h]):
        im = draw(ax, fig, a[i], tokens, f"head {i} of {h}")
    fig.colorbar(im, ax=axes, label="attention weight")
    fig.suptitle("self-attention weights")
    fig.savefig(os.path.join(out, "grid.png"))
    plt.close(fig)
    for i in range(h):
        fig, ax = plt.subplots(figsize=(8, 7.5))
        im = draw(ax, fig, a[i], tokens, f"head {i} of {h}")
        fig.colorbar(im, ax=ax, label="attention weight")
        fig.savefig(os.path.join(out, f"head_{i}.png"))
        plt.close(fig)


if __name__ == "__main__":
    main()
