#!/usr/bin/env python3
"""Tiny synthetic models of every decoder family, as GGUF (llama.cpp's tensor names and metadata
keys) and as the same weights in a Hugging Face folder (transformers' names and config.json),
converted the way llama.cpp's convert_hf_to_gguf.py does: Gemma's norms hold 1 + w in the GGUF
and w in the folder; Q/K rows of non-llama families are the same in both (NEOX RoPE).

    /usr/bin/python3 scripts/family_models.py OUT_DIR [FAMILY ...]
    /usr/bin/python3 scripts/family_models.py --fuzz-seeds tests/fuzz/seeds   # <family>_tiny.gguf, < 4 KB each

Each family gets settings that differ from the defaults (θ, ε, a window of 5 on 26 tokens, caps)
so that a reader that ignores a key fails its test. Weights are normal / √fan_in from a fixed
seed per family; a GELU feed-forward's output is scaled down (GELU_SHARE) so that llama.cpp's
float16 GELU table stays well inside the tests' tolerance.
"""
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gguf_writer import F32, vocabulary, write_gguf  # noqa: E402

VOCAB = 48
# How much of the residual stream a GELU feed-forward writes: llama.cpp's GELU is a float16
# table (≈5e-4 relative per activation), kept this small so that it moves attention < 1e-4.
GELU_SHARE = 0.05

# Per family: shapes and the settings written to both formats.
FAMILIES = {
    "qwen2": dict(layers=2, d=32, heads=4, kv=2, dk=8, ff=48, theta=1e6, eps=1e-6),
    "qwen3": dict(layers=2, d=32, heads=4, kv=2, dk=16, ff=48, theta=5e5, eps=1e-6),
    "mistral": dict(layers=2, d=32, heads=4, kv=2, dk=8, ff=48, theta=1e5, eps=1e-5, window=5),
    "gemma2": dict(layers=2, d=32, heads=4, kv=2, dk=16, ff=48, theta=1e4, eps=1e-6, window=5, attn_cap=4.0,
                   final_cap=3.0, query_pre_attn_scalar=16),
    "gemma3": dict(layers=6, d=16, heads=2, kv=1, dk=8, ff=24, theta=1e6, eps=1e-6, window=5, local_theta=1e4,
                   query_pre_attn_scalar=8),
    "phi3": dict(layers=2, d=32, heads=4, kv=4, dk=8, ff=48, theta=1e4, eps=1e-5, rope_dim=4, window=5),
    "gpt2": dict(layers=2, d=32, heads=4, kv=4, dk=8, ff=64, eps=1e-5, context=64),
    "olmo2": dict(layers=2, d=32, heads=4, kv=2, dk=8, ff=48, theta=5e5, eps=1e-6),
    # 5 layers: llama.cpp's NoPE layer is 3 (every 4th); the folder's no_rope_layers names 1 and 4
    "smollm3": dict(layers=5, d=16, heads=2, kv=1, dk=8, ff=24, theta=2e6, eps=1e-6, no_rope=[1, 4]),
    "granite": dict(layers=2, d=32, heads=4, kv=2, dk=8, ff=48, theta=1e4, eps=1e-6, embedding_multiplier=3.0,
                    attention_multiplier=0.2, residual_multiplier=0.4, logits_scaling=2.5),
}


SMALL = dict(layers=3, d=16, heads=2, kv=1, dk=8, ff=24)
LINEAR_4 = {"rope.scaling.type": "linear", "rope.scaling.factor": 4.0}
NONE_4 = {"rope.scaling.type": "none", "rope.scaling.factor": 4.0}
SWA_500 = {"rope.freq_base_swa": 500.0}


def keys(arch, *groups):
    """Metadata under arch's prefix from groups of keys written without it."""
    return {arch + "." + key: value for group in groups for key, value in group.items()}


# GGUF-only variants with the optional keys llama.cpp reads for a family (measured: it applies
# them): name -> (family, settings, extra metadata, share of the residual stream a GELU
# feed-forward writes). The -rope- variants pair a local RoPE base (rope.freq_base_swa) present
# or absent with linear scaling (rope.scaling.type linear; or none with a factor; or the older
# rope.scale_linear), which llama.cpp turns by each architecture's own rule in sliding-window
# layers; the -gelu variants let the feed-forward write its whole output, so that llama.cpp's
# float16 GELU table shows in the attention of the next layers.
VARIANTS = {
    "gemma2-keys": ("gemma2", dict(FAMILIES["gemma2"], **SMALL),
                    {"gemma2.attention.sliding_window_pattern": 3, "gemma2.rope.freq_base_swa": 500.0}, GELU_SHARE),
    "gemma2-rope-swa-linear": ("gemma2", dict(FAMILIES["gemma2"], **SMALL), keys("gemma2", SWA_500, LINEAR_4), GELU_SHARE),
    "gemma2-rope-swa-none": ("gemma2", dict(FAMILIES["gemma2"], **SMALL), keys("gemma2", SWA_500, NONE_4), GELU_SHARE),
    "gemma2-rope-linear": ("gemma2", dict(FAMILIES["gemma2"], **SMALL), keys("gemma2", {"rope.scale_linear": 4.0}), GELU_SHARE),
    "gemma2-rope-none": ("gemma2", dict(FAMILIES["gemma2"], **SMALL), keys("gemma2", NONE_4), GELU_SHARE),
    "gemma3-rope-swa-linear": ("gemma3", dict(FAMILIES["gemma3"], layers=4),
                               keys("gemma3", SWA_500, LINEAR_4, {"attention.sliding_window_pattern": 2}), GELU_SHARE),
    "gemma3-rope-swa-none": ("gemma3", dict(FAMILIES["gemma3"], layers=4),
                             keys("gemma3", SWA_500, NONE_4, {"attention.sliding_window_pattern": 2}), GELU_SHARE),
    "gemma3-rope-linear": ("gemma3", dict(FAMILIES["gemma3"], layers=4),
                           keys("gemma3", LINEAR_4, {"attention.sliding_window_pattern": 2}), GELU_SHARE),
    "qwen2-rope": ("qwen2", dict(FAMILIES["qwen2"], **SMALL), keys("qwen2", SWA_500, LINEAR_4), GELU_SHARE),
    "mistral-rope": ("mistral", dict(FAMILIES["mistral"], **SMALL), keys("llama", SWA_500, LINEAR_4), GELU_SHARE),
    "phi3-rope": ("phi3", dict(FAMILIES["phi3"], **SMALL), keys("phi3", SWA_500, LINEAR_4), GELU_SHARE),
    "gpt2-gelu": ("gpt2", dict(FAMILIES["gpt2"], **SMALL), {}, 1.0),
    "gemma2-gelu": ("gemma2", dict(FAMILIES["gemma2"], **SMALL), {}, 1.0),
    # OLMo 3's sliding-window layers as llama.cpp's olmo2 reads them: every 4th layer global, the
    # others turning unscaled at the global base (rope.freq_base_swa, written, is not used by its
    # graph), while the global ones are scaled
    "olmo2-swa": ("olmo2", dict(FAMILIES["olmo2"], **dict(SMALL, layers=4), window=5), keys("olmo2", SWA_500, LINEAR_4), GELU_SHARE),
    # granite without RoPE (rope.scaling.finetuned false) and with llama.cpp's default attention scale
    "granite-nope": ("granite", dict({k: v for k, v in FAMILIES["granite"].items() if k != "attention_multiplier"}, **SMALL),
                     {"granite.rope.scaling.finetuned": False}, GELU_SHARE),
}


# Each family's seed: its place in this list + 25 (the first seven sorted, as they were written
# before OLMo 2, SmolLM3 and Granite joined, so that their files stay the same), and the variants'.
SEED_ORDER = ["gemma2", "gemma3", "gpt2", "mistral", "phi3", "qwen2", "qwen3", "olmo2", "smollm3", "granite"]
VARIANT_SEED = 7 + 25


def tensors_of(name, s, rng, gelu_share=GELU_SHARE):
    """The model's tensors under llama.cpp's names, as float64 arrays [out, in] (norms hold what
    the GGUF holds: 1 + w for Gemma); a GELU feed-forward writes gelu_share of its output."""
    d, h, kv, dk, ff = s["d"], s["heads"], s["kv"], s["dk"], s["ff"]

    def lin(o, i, scale=1.0):
        return rng.standard_normal((o, i)) / np.sqrt(i) * scale

    def gain(n):
        return 1.0 + 0.2 * rng.standard_normal(n)

    t = {"token_embd.weight": rng.standard_normal((VOCAB, d)) * (0.2 if name.startswith("gemma") else 1.0)}
    if name == "gpt2":
        t["position_embd.weight"] = 0.5 * rng.standard_normal((s["context"], d))
    t["output_norm.weight"] = gain(d)
    if name == "gpt2":
        t["output_norm.bias"] = 0.1 * rng.standard_normal(d)
    if name in ("qwen2", "mistral", "phi3", "olmo2"):
        t["output.weight"] = lin(VOCAB, d)
    for l in range(s["layers"]):
        b = "blk.%d." % l
        if name != "olmo2":  # OLMo 2: no norm before the sublayers
            t[b + "attn_norm.weight"] = gain(d)
        if name == "gpt2":
            t[b + "attn_norm.bias"] = 0.1 * rng.standard_normal(d)
        q, k, v = lin(h * dk, d, 1.5), lin(kv * dk, d, 1.5), lin(kv * dk, d)
        if name in ("phi3", "gpt2"):
            t[b + "attn_qkv.weight"] = np.concatenate([q, k, v])
            if name == "gpt2":
                t[b + "attn_qkv.bias"] = 0.2 * rng.standard_normal(q.shape[0] + k.shape[0] + v.shape[0])
        else:
            t[b + "attn_q.weight"], t[b + "attn_k.weight"], t[b + "attn_v.weight"] = q, k, v
        if name == "qwen2":
            for part, width in (("q", h * dk), ("k", kv * dk), ("v", kv * dk)):
                t[b + "attn_%s.bias" % part] = 0.3 * rng.standard_normal(width)
        if name in ("qwen3", "gemma3"):
            t[b + "attn_q_norm.weight"], t[b + "attn_k_norm.weight"] = gain(dk), gain(dk)
        if name == "olmo2":  # over the whole q and k, before the head split
            t[b + "attn_q_norm.weight"], t[b + "attn_k_norm.weight"] = gain(h * dk), gain(kv * dk)
        t[b + "attn_output.weight"] = lin(d, h * dk)
        if name == "gpt2":
            t[b + "attn_output.bias"] = 0.1 * rng.standard_normal(d)
        if name.startswith("gemma") or name == "olmo2":
            t[b + "post_attention_norm.weight"] = gain(d)
        if name != "olmo2":
            t[b + "ffn_norm.weight"] = gain(d)
        if name == "gpt2":
            t[b + "ffn_norm.bias"] = 0.1 * rng.standard_normal(d)
            t[b + "ffn_up.weight"], t[b + "ffn_up.bias"] = lin(ff, d), 0.1 * rng.standard_normal(ff)
            t[b + "ffn_down.weight"], t[b + "ffn_down.bias"] = lin(d, ff, gelu_share), 0.1 * rng.standard_normal(d)
        else:
            gate, up = lin(ff, d), lin(ff, d)
            if name == "phi3":
                t[b + "ffn_up.weight"] = np.concatenate([gate, up])
            else:
                t[b + "ffn_gate.weight"], t[b + "ffn_up.weight"] = gate, up
            t[b + "ffn_down.weight"] = lin(d, ff, 0.3)
        if name.startswith("gemma"):
            t[b + "post_ffw_norm.weight"] = gelu_share * gain(d)
        if name == "olmo2":
            t[b + "post_ffw_norm.weight"] = gain(d)
    return t


def gguf_metadata(name, s):
    arch = "llama" if name == "mistral" else name
    pieces, scores, types = vocabulary(VOCAB)
    if name == "phi3":  # llama.cpp's vocabulary loader looks Phi-3's end-of-turn token up by its text
        pieces[-2:], types[-2:] = ["<|end|>", "<|endoftext|>"], [3, 3]
    m = {"general.architecture": arch, "general.name": "synthetic-" + name,
         arch + ".block_count": s["layers"], arch + ".embedding_length": s["d"],
         arch + ".feed_forward_length": s["ff"], arch + ".attention.head_count": s["heads"],
         arch + ".attention.head_count_kv": s["kv"], arch + ".context_length": s.get("context", 256)}
    if s["dk"] != s["d"] // s["heads"]:
        m[arch + ".attention.key_length"] = s["dk"]
        m[arch + ".attention.value_length"] = s["dk"]
    if name == "gpt2":
        m[arch + ".attention.layer_norm_epsilon"] = s["eps"]
    else:
        m[arch + ".attention.layer_norm_rms_epsilon"] = s["eps"]
        m[arch + ".rope.freq_base"] = s["theta"]
        m[arch + ".rope.dimension_count"] = s.get("rope_dim", s["dk"])
    if "window" in s:
        m[arch + ".attention.sliding_window"] = s["window"]
    if name == "granite":
        m.update({arch + ".embedding_scale": s["embedding_multiplier"], arch + ".residual_scale": s["residual_multiplier"],
                  arch + ".logit_scale": s["logits_scaling"]})
        if "attention_multiplier" in s:
            m[arch + ".attention.scale"] = s["attention_multiplier"]
    if name == "gemma2":
        m[arch + ".attn_logit_softcapping"] = s["attn_cap"]
        m[arch + ".final_logit_softcapping"] = s["final_cap"]
    m.update({"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": pieces, "tokenizer.ggml.scores": scores,
              "tokenizer.ggml.token_type": types, "tokenizer.ggml.bos_token_id": 1,
              "tokenizer.ggml.eos_token_id": 2, "tokenizer.ggml.unknown_token_id": 0})
    return m


def unpermute_llama(w, n_head):
    """The inverse of convert_hf_to_gguf.py's LlamaModel.permute (Hugging Face's rotate-half rows
    of W_Q / W_K -> llama.cpp's adjacent pairs): the folder's rows from the GGUF's."""
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


HF_WHOLE = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
            "output.weight": "lm_head.weight"}
HF_LAYER = {"attn_norm.weight": "input_layernorm.weight", "attn_q.weight": "self_attn.q_proj.weight",
            "attn_k.weight": "self_attn.k_proj.weight", "attn_v.weight": "self_attn.v_proj.weight",
            "attn_q.bias": "self_attn.q_proj.bias", "attn_k.bias": "self_attn.k_proj.bias",
            "attn_v.bias": "self_attn.v_proj.bias", "attn_output.weight": "self_attn.o_proj.weight",
            "attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight",
            "attn_qkv.weight": "self_attn.qkv_proj.weight", "ffn_norm.weight": "post_attention_layernorm.weight",
            "ffn_gate.weight": "mlp.gate_proj.weight", "ffn_up.weight": "mlp.up_proj.weight",
            "ffn_down.weight": "mlp.down_proj.weight"}
HF_GEMMA = {"post_attention_norm.weight": "post_attention_layernorm.weight",
            "ffn_norm.weight": "pre_feedforward_layernorm.weight",
            "post_ffw_norm.weight": "post_feedforward_layernorm.weight"}


GPT2_NAMES = {"token_embd.weight": "wte.weight", "position_embd.weight": "wpe.weight", "output_norm.weight": "ln_f.weight",
              "output_norm.bias": "ln_f.bias", "attn_norm.weight": "ln_1.weight", "attn_norm.bias": "ln_1.bias",
              "attn_qkv.weight": "attn.c_attn.weight", "attn_qkv.bias": "attn.c_attn.bias",
              "attn_output.weight": "attn.c_proj.weight", "attn_output.bias": "attn.c_proj.bias",
              "ffn_norm.weight": "ln_2.weight", "ffn_norm.bias": "ln_2.bias", "ffn_up.weight": "mlp.c_fc.weight",
              "ffn_up.bias": "mlp.c_fc.bias", "ffn_down.weight": "mlp.c_proj.weight", "ffn_down.bias": "mlp.c_proj.bias"}


def gpt2_hf_tensors(t):
    """GPT2LMHeadModel's names (transformer.h.L.…) and Conv1D's [in, out] matrices: the GGUF's
    transposed, as convert_hf_to_gguf.py transposes them the other way."""
    out = {}
    for key, value in t.items():
        if key.startswith("blk."):
            _, layer, rest = key.split(".", 2)
            hf = "transformer.h.%s.%s" % (layer, GPT2_NAMES[rest])
        else:
            hf, rest = "transformer." + GPT2_NAMES[key], key
        out[hf] = value.T if value.ndim == 2 and rest in ("attn_qkv.weight", "attn_output.weight", "ffn_up.weight",
                                                          "ffn_down.weight") else value
    return out


def hf_tensors(name, s, t):
    if name == "gpt2":
        return gpt2_hf_tensors(t)
    out = {}
    for key, value in t.items():
        if key in HF_WHOLE:
            hf = HF_WHOLE[key]
        else:
            _, layer, rest = key.split(".", 2)
            table = dict(HF_LAYER, **(HF_GEMMA if name.startswith("gemma") or name == "olmo2" else {}))
            if name == "phi3" and rest == "ffn_up.weight":
                table[rest] = "mlp.gate_up_proj.weight"
            hf = "model.layers.%s.%s" % (layer, table[rest])
        if name.startswith("gemma") and key.endswith("norm.weight"):
            value = value - 1.0
        if name in ("mistral", "smollm3", "granite") and key.endswith(("attn_q.weight", "attn_k.weight")):
            value = unpermute_llama(value, s["heads"] if "attn_q" in key else s["kv"])
        out[hf] = value
    return out


def hf_config(name, s):
    if name == "gpt2":
        return {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": s["layers"], "n_embd": s["d"],
                "n_head": s["heads"], "n_inner": s["ff"], "n_positions": s["context"], "vocab_size": VOCAB,
                "layer_norm_epsilon": s["eps"], "activation_function": "gelu_new", "tie_word_embeddings": True,
                "torch_dtype": "float32"}
    cls = {"qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM", "mistral": "MistralForCausalLM",
           "gemma2": "Gemma2ForCausalLM", "gemma3": "Gemma3ForCausalLM", "phi3": "Phi3ForCausalLM",
           "olmo2": "Olmo2ForCausalLM", "smollm3": "SmolLM3ForCausalLM", "granite": "GraniteForCausalLM"}[name]
    c = {"architectures": [cls], "model_type": name if name != "gemma3" else "gemma3_text",
         "num_hidden_layers": s["layers"], "hidden_size": s["d"], "intermediate_size": s["ff"],
         "num_attention_heads": s["heads"], "num_key_value_heads": s["kv"], "head_dim": s["dk"],
         "vocab_size": VOCAB, "max_position_embeddings": 256, "rms_norm_eps": s["eps"], "rope_theta": s["theta"],
         "tie_word_embeddings": name not in ("qwen2", "mistral", "phi3", "olmo2"), "torch_dtype": "float32"}
    if name in ("mistral", "phi3"):
        c["sliding_window"] = s["window"]
    if name in ("qwen2", "qwen3"):
        c["use_sliding_window"] = False
    if name == "phi3":
        c["partial_rotary_factor"] = s["rope_dim"] / s["dk"]
    if name.startswith("gemma"):
        c.update(hidden_activation="gelu_pytorch_tanh", sliding_window=s["window"],
                 query_pre_attn_scalar=s["query_pre_attn_scalar"])
    if name == "gemma2":
        c.update(attn_logit_softcapping=s["attn_cap"], final_logit_softcapping=s["final_cap"])
    if name == "smollm3":
        c.update(no_rope_layers=[0 if l in s["no_rope"] else 1 for l in range(s["layers"])], use_sliding_window=False)
    if name == "granite":
        c.update({key: s[key] for key in ("embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling")})
    if name == "gemma3":
        c.update(rope_local_base_freq=s["local_theta"], sliding_window_pattern=6, attn_logit_softcapping=None,
                 final_logit_softcapping=None)
    return c


def write_safetensors(path, tensors, metadata=None):
    """As safetensors' serialize_file: {["__metadata__": …,] name: {dtype, shape, data_offsets}…}, F32."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        raw = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(np.shape(tensors[name])), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_fuzz_seeds(out):
    """One layer of width 8 per family (2 heads of 4, one key/value head): seeds small enough for
    the fuzz target's inputs (-max_len 16384) that still reach each family's reader."""
    global VOCAB
    VOCAB = 8
    for name, settings in FAMILIES.items():
        s = dict(settings, layers=1, d=8, heads=2, kv=1, dk=4, ff=8, context=16)
        if "rope_dim" in s:
            s["rope_dim"] = 2
        t = tensors_of(name, s, np.random.default_rng(0))
        write_gguf(os.path.join(out, name + "_tiny.gguf"), gguf_metadata(name, s),
                   [(key, value.shape, F32, value) for key, value in t.items()])


def main():
    if sys.argv[1] == "--fuzz-seeds":
        write_fuzz_seeds(sys.argv[2])
        return
    out = sys.argv[1]
    names = sys.argv[2:] or list(FAMILIES) + list(VARIANTS)
    os.makedirs(out, exist_ok=True)
    for name in [n for n in names if n in VARIANTS]:
        arch, s, extra, gelu_share = VARIANTS[name]
        t = tensors_of(arch, s, np.random.default_rng(VARIANT_SEED), gelu_share)
        write_gguf(os.path.join(out, name + ".gguf"), dict(gguf_metadata(arch, s), **extra),
                   [(key, value.shape, F32, value) for key, value in t.items()])
    names = [n for n in names if n not in VARIANTS]
    for name in names:
        s = FAMILIES[name]
        rng = np.random.default_rng(SEED_ORDER.index(name) + 25)
        t = tensors_of(name, s, rng)
        tensors = [(key, value.shape, F32, value) for key, value in t.items()]
        write_gguf(os.path.join(out, name + ".gguf"), gguf_metadata(name, s), tensors)
        folder = os.path.join(out, name + "-hf")
        os.makedirs(folder, exist_ok=True)
        write_safetensors(os.path.join(folder, "model.safetensors"), hf_tensors(name, s, t))
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(hf_config(name, s), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
