#!/usr/bin/env python3
"""Independent float64 forward pass of a decoder GGUF (F32/F16/BF16 tensors): llama, qwen2,
qwen3, gemma2, gemma3, phi3, gpt2, olmo2, smollm3, granite, each as llama.cpp's graph for it
computes: OLMo 2's post-norms without pre-norms and its QK-norm over the whole q and k,
SmolLM3's NoPE layers (every 4th; --no-rope-layers 1,4 names them instead, as transformers'
no_rope_layers does), Granite's multipliers (embedding_scale, attention.scale, residual_scale,
logit_scale) and its rope.scaling.finetuned false (no RoPE).

Shares no code with attnviz: its own GGUF reader, its own RMSNorm and LayerNorm, RoPE (adjacent
pairs for llama, halves for the others), QK-norm, grouped-query attention with causal and
sliding-window masks, soft-caps, SwiGLU / GeGLU / GELU, RoPE's linear scaling and each
family's RoPE of its sliding-window layers as llama.cpp's load_hparams sets it. With
--window-every-layer a llama (Mistral) or phi3 file's attention.sliding_window applies in every
layer, as transformers applies config.json's sliding_window. GELU: --gelu ggml (llama.cpp's, the
default: the tanh approximation looked up in a float16 table, ggml_vec_gelu_f32 / geglu with
GGML_GELU_FP16) or --gelu tanh (the formula itself, as transformers' gelu_new and
gelu_pytorch_tanh compute it). Writes {"token_ids", "attention": {layer: [head][query][key]},
"last_logits"} as JSON.

    /usr/bin/python3 scripts/reference_forward.py MODEL.gguf 1,403,407 OUT.json [--window-every-layer] [--gelu tanh]
        [--no-rope-layers 1,4]
"""
import json
import math
import struct
import sys

import numpy as np

GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def read_gguf(path):
    data = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        value = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return value

    def string():
        nonlocal pos
        length = take("<Q")
        text = data[pos:pos + length].decode("utf-8", errors="surrogateescape")
        pos += length
        return text

    def value(kind):
        if kind == 8:
            return string()
        if kind == 9:
            element, count = take("<I"), take("<Q")
            return [value(element) for _ in range(count)]
        return take(GGUF_SCALARS[kind])

    assert data[:4] == b"GGUF", "not a GGUF file"
    pos = 4
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
    alignment = meta.get("general.alignment", 32)
    start = (pos + alignment - 1) // alignment * alignment
    tensors = {}
    for name, dims, kind, offset in infos:
        count = int(np.prod(dims))
        at = start + offset
        if kind == 0:
            values = np.frombuffer(data, np.float32, count, at).astype(np.float64)
        elif kind == 1:
            values = np.frombuffer(data, np.float16, count, at).astype(np.float64)
        elif kind == 30:
            raw = np.frombuffer(data, np.uint16, count, at).astype(np.uint32) << 16
            values = raw.view(np.float32).astype(np.float64)
        else:
            continue  # not needed by this reference
        tensors[name] = values.reshape(list(reversed(dims)))
    return meta, tensors


def rms_norm(x, gain, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gain


def layer_norm(x, gain, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gain + bias


def gelu(x, kind):
    if kind == "ggml":
        # x rounded to float16; the entry: the tanh GELU of that float16 value in float32, rounded
        # to float16; 0 below -10 and x above 10 (ggml-cpu's vec.h).
        h = x.astype(np.float32).astype(np.float16).astype(np.float32)
        c, a = np.float32(math.sqrt(2.0 / math.pi)), np.float32(0.044715)
        entry = (np.float32(0.5) * h * (np.float32(1) + np.tanh(c * h * (np.float32(1) + a * h * h)))).astype(np.float16)
        return np.where(x <= -10, 0.0, np.where(x >= 10, x, entry.astype(np.float64)))
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def layer_ropes(arch, meta, window):
    """Each layer's (θ, position scale). llama.cpp reads the scale 1/f from rope.scaling.factor,
    else rope.scale_linear (absent or 0: 1), whatever rope.scaling.type says; its context unscales
    the layers it turns at the global settings when the type is "none". Sliding-window layers turn
    at rope_freq_base_train_swa / rope_freq_scale_train_swa: Gemma 2 rope.freq_base_swa (default
    the global θ) with the file's scale, Gemma 3 rope.freq_base_swa (default 10 000) unscaled,
    OLMo 2 (OLMo 3's windows) the global θ unscaled (rope.freq_base_swa is not used by its graph).
    Other families have no such layers in llama.cpp."""
    theta = meta.get(arch + ".rope.freq_base", 10000.0)
    key = arch + ".rope.scaling.factor"
    factor = (meta[key] if key in meta else meta.get(arch + ".rope.scale_linear", 0.0)) or 1.0
    unscaled = meta.get(arch + ".rope.scaling.type", "linear") == "none"
    full = (theta, 1.0 if unscaled else 1.0 / factor)
    local = {"gemma2": (meta.get(arch + ".rope.freq_base_swa", theta), 1.0 / factor),
             "gemma3": (meta.get(arch + ".rope.freq_base_swa", 10000.0), 1.0),
             "olmo2": (theta, 1.0)}.get(arch, full)  # its graph passes freq_base: rope.freq_base_swa is read, not used
    return [local if w else full for w in window]


def rope(x, n_heads, d_head, rope_dim, theta, halves=False, scale=1.0):
    """Pair i of each head turns by scale * pos * theta^(-2i/rope_dim): adjacent pairs (2i, 2i+1)
    as llama.cpp turns LLaMA GGUF files, or halves (i, i + rope_dim/2) as it turns the other
    families (NEOX) and as transformers' rotate_half does."""
    n = x.shape[0]
    out = x.reshape(n, n_heads, d_head).copy()
    pos = scale * np.arange(n, dtype=np.float64)[:, None]
    freq = theta ** (-np.arange(0, rope_dim, 2, dtype=np.float64) / rope_dim)
    angle = pos * freq[None, :]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    if halves:
        first, second = slice(0, rope_dim // 2), slice(rope_dim // 2, rope_dim)
    else:
        first, second = slice(0, rope_dim, 2), slice(1, rope_dim, 2)
    a, b = out[:, :, first].copy(), out[:, :, second].copy()
    out[:, :, first] = a * cos - b * sin
    out[:, :, second] = a * sin + b * cos
    return out.reshape(n, n_heads * d_head)


def windows(arch, meta, n_layers, every_layer):
    """Each layer's sliding window (0 = none): Gemma 2 every even layer, Gemma 3 five of six
    (llama.cpp's swa patterns 2 and 6); with every_layer, Mistral's and Phi-3's window in every
    layer as transformers applies it (llama.cpp applies none for llama and phi3)."""
    w = meta.get(arch + ".attention.sliding_window", 4096 if arch == "gemma2" else 0)
    if arch in ("gemma2", "gemma3") or (arch == "olmo2" and w):  # OLMo 3's windows, in llama.cpp's olmo2
        n = meta.get(arch + ".attention.sliding_window_pattern", {"gemma2": 2, "gemma3": 6, "olmo2": 4}[arch])
        return [w if n == 0 or l % n < n - 1 else 0 for l in range(n_layers)]
    return [w if every_layer else 0] * n_layers


def no_rope(arch, meta, n_layers, listed):
    """The layers that turn no RoPE: SmolLM3's every 4th (llama.cpp's n_no_rope_layer_step, no
    key), or `listed`; Granite's all when rope.scaling.finetuned is false."""
    if listed is not None:
        return set(listed)
    if arch == "smollm3":
        return {l for l in range(n_layers) if (l + 1) % 4 == 0}
    if arch == "granite" and not meta.get(arch + ".rope.scaling.finetuned", True):
        return set(range(n_layers))
    return set()


def forward(meta, t, ids, every_layer_window=False, gelu_kind="ggml", no_rope_listed=None):
    arch = meta["general.architecture"]
    n_layers = meta[arch + ".block_count"]
    n_heads = meta[arch + ".attention.head_count"]
    n_kv = meta.get(arch + ".attention.head_count_kv", n_heads)
    d_model = meta[arch + ".embedding_length"]
    d_head = meta.get(arch + ".attention.key_length", d_model // n_heads)
    gpt2, gemma = arch == "gpt2", arch.startswith("gemma")
    eps = meta.get(arch + (".attention.layer_norm_epsilon" if gpt2 else ".attention.layer_norm_rms_epsilon"), 1e-5)
    rope_dim = meta.get(arch + ".rope.dimension_count", d_head)
    attn_cap = meta.get(arch + ".attn_logit_softcapping", 50.0) if arch == "gemma2" else 0
    final_cap = meta.get(arch + ".final_logit_softcapping", 30.0) if arch == "gemma2" else 0
    window = windows(arch, meta, n_layers, every_layer_window)
    nope = no_rope(arch, meta, n_layers, no_rope_listed)
    post_norms = gemma or arch == "olmo2"
    # Granite's multipliers (0 or absent: none; the attention's 1/sqrt(d_head)), llama.cpp's float32 values
    granite = {key: float(np.float32(meta.get(arch + "." + key, 0.0))) or None
               for key in ("embedding_scale", "residual_scale", "logit_scale", "attention.scale")} if arch == "granite" else {}
    attention_scale = granite.get("attention.scale") or 1 / np.sqrt(d_head)
    residual_scale = granite.get("residual_scale") or 1.0
    ropes = layer_ropes(arch, meta, windows(arch, meta, n_layers, False))
    n = len(ids)
    x = t["token_embd.weight"][ids]
    if gemma:
        x = x * np.sqrt(d_model)
    if gpt2:
        x = x + t["position_embd.weight"][:n]
    if granite.get("embedding_scale"):
        x = x * granite["embedding_scale"]

    def norm(h, name):
        if gpt2:
            return layer_norm(h, t[name + ".weight"], t[name + ".bias"], eps)
        return rms_norm(h, t[name + ".weight"], eps)

    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    attention = {}
    for l in range(n_layers):
        p = "blk.%d." % l
        h = x if arch == "olmo2" else norm(x, p + "attn_norm")  # OLMo 2: no pre-norm
        if p + "attn_qkv.weight" in t:
            qkv = h @ t[p + "attn_qkv.weight"].T + t.get(p + "attn_qkv.bias", 0)
            q, k, v = np.split(qkv, [n_heads * d_head, (n_heads + n_kv) * d_head], axis=1)
        else:
            q, k, v = (h @ t[p + "attn_%s.weight" % m].T + t.get(p + "attn_%s.bias" % m, 0) for m in "qkv")
        if arch == "olmo2":  # one RMSNorm over the whole q and the whole k
            q, k = rms_norm(q, t[p + "attn_q_norm.weight"], eps), rms_norm(k, t[p + "attn_k_norm.weight"], eps)
        elif p + "attn_q_norm.weight" in t:
            q = rms_norm(q.reshape(n, n_heads, d_head), t[p + "attn_q_norm.weight"], eps).reshape(n, -1)
            k = rms_norm(k.reshape(n, n_kv, d_head), t[p + "attn_k_norm.weight"], eps).reshape(n, -1)
        if not gpt2 and l not in nope:
            layer_theta, scale = ropes[l]
            halves = arch not in ("llama", "smollm3", "granite")
            q = rope(q, n_heads, d_head, rope_dim, layer_theta, halves=halves, scale=scale)
            k = rope(k, n_kv, d_head, rope_dim, layer_theta, halves=halves, scale=scale)
        allowed = j <= i
        if window[l]:
            allowed = allowed & (i - j < window[l])
        heads, outs = [], []
        for head in range(n_heads):
            g = head // (n_heads // n_kv)
            qh, kh, vh = (m[:, c * d_head:(c + 1) * d_head] for m, c in ((q, head), (k, g), (v, g)))
            scores = qh @ kh.T * attention_scale
            if attn_cap:
                scores = attn_cap * np.tanh(scores / attn_cap)
            scores = np.where(allowed, scores, -np.inf)
            w = np.exp(scores - scores.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            heads.append(w)
            outs.append(w @ vh)
        attention[str(l)] = np.array(heads).tolist()
        out = np.concatenate(outs, axis=1) @ t[p + "attn_output.weight"].T + t.get(p + "attn_output.bias", 0)
        x = x + residual_scale * (norm(out, p + "post_attention_norm") if post_norms else out)
        h = x if arch == "olmo2" else norm(x, p + "ffn_norm")
        if gpt2:
            up = h @ t[p + "ffn_up.weight"].T + t[p + "ffn_up.bias"]
            out = gelu(up, gelu_kind) @ t[p + "ffn_down.weight"].T + t[p + "ffn_down.bias"]
        else:
            if p + "ffn_gate.weight" in t:
                gate, up = h @ t[p + "ffn_gate.weight"].T, h @ t[p + "ffn_up.weight"].T
            else:  # Phi-3: [gate; up] in one matrix
                gate, up = np.split(h @ t[p + "ffn_up.weight"].T, 2, axis=1)
            act = gelu(gate, gelu_kind) if gemma else gate / (1 + np.exp(-gate))
            out = (act * up) @ t[p + "ffn_down.weight"].T
        x = x + residual_scale * (norm(out, p + "post_ffw_norm") if post_norms else out)
    last = norm(x[-1:], "output_norm")[0]
    output = t.get("output.weight", t["token_embd.weight"])
    logits = output @ last
    if granite.get("logit_scale"):
        logits = logits / granite["logit_scale"]
    if final_cap:
        logits = final_cap * np.tanh(logits / final_cap)
    return attention, logits.tolist()


def main():
    model, ids_text, out_path = sys.argv[1:4]
    every_layer_window = "--window-every-layer" in sys.argv[4:]
    gelu_kind = sys.argv[sys.argv.index("--gelu") + 1] if "--gelu" in sys.argv else "ggml"
    assert gelu_kind in ("ggml", "tanh"), "--gelu ggml or --gelu tanh"
    ids = [int(i) for i in ids_text.split(",")]
    meta, tensors = read_gguf(model)
    listed = None
    if "--no-rope-layers" in sys.argv:
        text = sys.argv[sys.argv.index("--no-rope-layers") + 1]
        listed = [int(l) for l in text.split(",") if l]
    attention, logits = forward(meta, tensors, ids, every_layer_window, gelu_kind, listed)
    json.dump({"token_ids": ids, "attention": attention, "last_logits": logits}, open(out_path, "w"))


if __name__ == "__main__":
    main()
