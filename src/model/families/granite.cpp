// Granite 3 (GraniteForCausalLM; llama.cpp's granite): LLaMA's block (the GGUF's W_Q, W_K rows
// in adjacent pairs) with four multipliers: the embeddings × embedding_multiplier, the scores ×
// attention_multiplier in place of 1/√d_k, each sublayer's output × residual_multiplier before
// it joins the residual stream, and the logits ÷ logits_scaling. The formats differ where a
// value is absent: llama.cpp reads {arch}.logit_scale (required), .residual_scale,
// .embedding_scale and .attention.scale, where absent or 0 means none (1/√d_k for the
// attention); transformers' GraniteConfig defaults each to 1.0, so an absent
// attention_multiplier scales the scores by 1, not 1/√d_k.
#include <cmath>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/families/family.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {

// A GGUF multiplier: finite and > 0, or 0 / absent for llama.cpp's "none" (nullopt).
std::optional<double> gguf_multiplier(const GgufFile& file, const std::string& key) {
  const std::optional<double> value = file.number(key);
  if (!value || *value == 0) return std::nullopt;
  // llama.cpp reads these as float32: the value it multiplies by.
  const double as_float = static_cast<float>(*value);
  if (!(std::isfinite(as_float) && as_float > 0))
    throw InputError::bad_value(file.path(), "metadata " + key, "a finite number > 0 (or 0: none)", std::to_string(*value));
  return as_float;
}

void granite_gguf(const GgufFile& file, DecoderConfig& c) {
  const std::string a = "granite.";
  if (const std::optional<std::int64_t> experts = file.integer(a + "expert_count"); experts && *experts > 0)
    throw InputError::inconsistent(file.path(), "metadata " + a + "expert_count = " + std::to_string(*experts) +
                                                    ": a Granite mixture of experts, which attnviz does not run");
  for (const char* name : {"blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias", "blk.0.attn_output.bias", "blk.0.ffn_up.bias",
                           "blk.0.ffn_gate.bias", "blk.0.ffn_down.bias"})
    if (file.find_tensor(name))
      throw InputError::inconsistent(file.path(), std::string("tensor ") + name + ": a bias attnviz's granite does not apply");
  if (!file.has(a + "logit_scale"))
    throw InputError::inconsistent(file.path(), "missing metadata " + a + "logit_scale (llama.cpp requires it for granite)");
  const std::optional<double> logit = gguf_multiplier(file, a + "logit_scale");
  if (!logit) throw InputError::bad_value(file.path(), "metadata " + a + "logit_scale", "a finite number > 0 (the logits are divided by it)", "0");
  c.logit_divisor = *logit;
  c.embedding_multiplier = gguf_multiplier(file, a + "embedding_scale").value_or(1.0);
  c.residual_multiplier = gguf_multiplier(file, a + "residual_scale").value_or(1.0);
  if (const std::optional<double> scale = gguf_multiplier(file, a + "attention.scale")) c.attention_scale = *scale;
  // llama.cpp's granite graph turns RoPE only when rope.scaling.finetuned is true (its default).
  if (const std::optional<bool> rope = file.boolean(a + "rope.scaling.finetuned"); rope && !*rope)
    for (int l = 0; l < c.num_layers; ++l) c.no_rope_layers.push_back(l);
}

// A GraniteConfig multiplier: finite and > 0, default 1.
double hf_multiplier(const JsonSettings& config, const std::string& pointer) {
  const double value = config.number(pointer, 1.0);
  if (!(std::isfinite(value) && value > 0))
    throw InputError::bad_value(config.file(), pointer, "a finite number > 0", config.find(pointer)->dump());
  return value;
}

void granite_hf(const JsonSettings& config, DecoderConfig& c) {
  if (config.flag("/attention_bias", false))
    throw InputError::bad_value(config.file(), "/attention_bias", "false (attnviz's Granite has no biases)", "true");
  c.qkv_bias = false;
  c.embedding_multiplier = hf_multiplier(config, "/embedding_multiplier");
  c.residual_multiplier = hf_multiplier(config, "/residual_multiplier");
  c.logit_divisor = hf_multiplier(config, "/logits_scaling");
  c.attention_scale = hf_multiplier(config, "/attention_multiplier");  // GraniteAttention.scaling, in place of 1/√d_k
}

}  // namespace

const DecoderFamily& granite_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "granite";
    f.hf_architecture = "GraniteForCausalLM";
    // The converter (GraniteModel, a LlamaModel) permutes W_Q, W_K into adjacent pairs, and
    // llama.cpp turns them as LLAMA_ROPE_TYPE_NORM; it loads rope_freqs.weight as for llama.
    f.gguf_rope_style = RopeStyle::Interleaved;
    f.gguf_rope_frequency_factors = true;
    f.gguf_keys = {"logit_scale", "embedding_scale", "residual_scale", "attention.scale", "expert_count"};
    f.gguf_settings = granite_gguf;
    f.hf_settings = granite_hf;
    return f;
  }();
  return family;
}

}  // namespace attnviz
