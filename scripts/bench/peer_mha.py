#!/usr/bin/python3
"""P2 peer: per-head attention weights of nn.MultiheadAttention(need_weights=True,
average_attn_weights=False) on one thread, timed in process (inputs already tensors), and the
one-core sgemm peak of numpy's BLAS. Prints one line per measurement, median of REPEATS runs.

  peer_mha.py SENTENCE.json WEIGHTS.json [REPEATS]
"""
import json
import math
import os
import statistics
import sys
import time

# Debian's torch does its GEMMs in the system BLAS (OpenBLAS, BLAS_INFO=generic), whose own
# threads torch.set_num_threads does not govern: pin them too, before the libraries load.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch_mha import build_mha  # noqa: E402


def median_seconds(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    torch.set_num_threads(1)
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    with open(sys.argv[1]) as f:
        sentence = json.load(f)
    with open(sys.argv[2]) as f:
        weights = json.load(f)
    x = torch.tensor(sentence["embeddings"], dtype=torch.float32)[None]  # [1, n, d_model]
    d_model = x.shape[2]
    mha = build_mha(weights, d_model)

    def forward():
        with torch.no_grad():
            mha(x, x, x, need_weights=True, average_attn_weights=False)

    print(f"torch_mha_seconds {median_seconds(forward, repeats):.6f}")

    # The same work as attnviz's compute phase without --outputs: Q and K projections, QKᵀ/√d_k
    # and the softmax, per head (MHA's forward above also projects V, multiplies by it and
    # applies W_O).
    n = x.shape[1]
    heads = int(weights["num_heads"])
    w_q, w_k = (torch.tensor(weights[k], dtype=torch.float32) for k in ("W_Q", "W_K"))
    b_q, b_k = (torch.tensor(weights[k], dtype=torch.float32) if k in weights else torch.zeros(w_q.shape[1])
                for k in ("b_Q", "b_K"))
    d_k = w_q.shape[1] // heads

    def weights_only():
        with torch.no_grad():
            q = (x[0] @ w_q + b_q).view(n, heads, d_k).transpose(0, 1)
            k = (x[0] @ w_k + b_k).view(n, heads, d_k).transpose(0, 1)
            torch.softmax(q @ k.transpose(1, 2) / math.sqrt(d_k), dim=-1)

    print(f"torch_weights_only_seconds {median_seconds(weights_only, repeats):.6f}")
    # One-core GEMM peak: C = A B with A [1024, 1024], B [1024, 1024] (2·1024³ flop), and the
    # projection shape X [n, d_model] · W [d_model, 3·d_model].
    rng = np.random.default_rng(0)
    for m, k, n in ((1024, 1024, 1024), (x.shape[1], d_model, 3 * d_model)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        bm = rng.standard_normal((k, n)).astype(np.float32)
        seconds = median_seconds(lambda: a @ bm, repeats)
        print(f"numpy_sgemm_gflops_{m}x{k}x{n} {2 * m * k * n / seconds / 1e9:.1f}")


if __name__ == "__main__":
    main()
