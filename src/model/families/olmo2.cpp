// OLMo 2 (Olmo2ForCausalLM; llama.cpp's olmo2): no norm before the sublayers; an RMSNorm on
// each sublayer's output before it joins the residual stream (post_attention_norm,
// post_ffw_norm); an RMSNorm of the whole q [h·d_k] and the whole k [h_kv·d_k] before they are
// split into heads (attn_q_norm, attn_k_norm), then RoPE in halves (NEOX); SwiGLU; no biases.
// GGUF files may also ask for OLMo 3's sliding-window layers (llama.cpp runs OLMo 3 as olmo2);
// Olmo2ForCausalLM has none.
#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {

// llama.cpp (LLM_ARCH_OLMO2, which also runs OLMo 3): with attention.sliding_window > 0,
// sliding-window layers where l % n < n − 1 (attention.sliding_window_pattern, default 4),
// whose RoPE its graph turns at the context's θ (rope.freq_base) unscaled (freq_scale 1, no
// YaRN: "Olmo3 use regular rope"); the loader reads rope.freq_base_swa, but the graph passes
// freq_base, so that key changes nothing (measured against the npm build: the file's θ, not
// the key's, matches its attention to 1e-7). Without a window, none.
void olmo2_gguf(const GgufFile& file, DecoderConfig& c) {
  const std::string a = "olmo2.";
  const std::optional<std::int64_t> value = file.integer(a + "attention.sliding_window");
  if (!value || *value == 0) return;
  const long window = *gguf_window(file, a + "attention.sliding_window", std::nullopt);
  c.sliding_window = gguf_window_pattern(file, a + "attention.sliding_window_pattern", c.num_layers, window, 4);
  if (file.has(a + "rope.freq_base_swa"))
    c.warnings.push_back(file.path() + ": metadata " + a + "rope.freq_base_swa: llama.cpp's olmo2 graph turns its sliding-window layers at " +
                         a + "rope.freq_base all the same, and so does attnviz");
  if (c.rope.linear_factor != 1.0 || !c.rope.frequency_factors.empty()) {
    RopeSettings local = c.rope;
    local.linear_factor = 1.0;
    local.frequency_factors.clear();
    c.local_rope = local;
  }
}

// transformers' Olmo2Attention: q_norm over num_heads·head_dim and k_norm over
// num_key_value_heads·head_dim (Olmo2RMSNorm, rms_norm_eps), biases on q, k, v and o when
// attention_bias, which attnviz does not implement.
void olmo2_hf(const JsonSettings& config, DecoderConfig& c) {
  if (config.flag("/attention_bias", false))
    throw InputError::bad_value(config.file(), "/attention_bias", "false (attnviz's OLMo 2 has no biases, as llama.cpp's olmo2)", "true");
  c.qkv_bias = false;
}

}  // namespace

const DecoderFamily& olmo2_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "olmo2";
    f.hf_architecture = "Olmo2ForCausalLM";
    f.block.pre_norm = false;
    f.block.post_attention_norm = true;
    f.block.post_ffn_norm = true;
    f.block.qk_norm = true;
    f.block.qk_norm_whole = true;
    f.gguf_keys = {"attention.sliding_window", "attention.sliding_window_pattern", "rope.freq_base_swa"};
    f.gguf_settings = olmo2_gguf;
    f.hf_settings = olmo2_hf;
    f.hf_names = {{"attn_q_norm.weight", "self_attn.q_norm.weight"},
                  {"attn_k_norm.weight", "self_attn.k_norm.weight"},
                  {"post_attention_norm.weight", "post_attention_layernorm.weight"},
                  {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"}};
    return f;
  }();
  return family;
}

}  // namespace attnviz
