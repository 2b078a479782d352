#include "model/families/gemma_settings.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/families/family_settings.hpp"

namespace attnviz {

double gemma_gguf_scale(const DecoderConfig& c) {
  const bool is_27b = (c.architecture == "gemma2" && c.num_layers == 46) || (c.architecture == "gemma3" && c.num_layers == 62);
  const float width = is_27b ? static_cast<float>(c.d_model / c.num_heads) : static_cast<float>(c.d_k);
  return 1.0f / std::sqrt(width);
}

void gemma_hf_settings(const JsonSettings& config, DecoderConfig& c, int period, long window, double attn_cap, double final_cap) {
  c.gelu = hf_gelu(config, "/hidden_activation", "gelu_pytorch_tanh");
  config.consider("/hidden_act");  // Gemma 1's name, which Gemma2Config and Gemma3TextConfig do not read
  const double scalar = config.number("/query_pre_attn_scalar", 256.0);
  c.attention_scale = 1.0 / std::sqrt(require_positive_setting(scalar, config.file(), "/query_pre_attn_scalar"));
  // A cap written as null is transformers' None (no cap); an absent one takes the config class's default.
  c.attention_softcap = config.find("/attn_logit_softcapping") ? hf_cap(config, "/attn_logit_softcapping") : attn_cap;
  c.final_softcap = config.find("/final_logit_softcapping") ? hf_cap(config, "/final_logit_softcapping") : final_cap;
  const long w = hf_window(config, "/sliding_window").value_or(window);
  if (std::optional<std::vector<long>> types = hf_layer_types(config, c.num_layers, w)) {
    config.consider("/sliding_window_pattern");  // transformers derives layer_types from it when absent only
    c.sliding_window = std::move(*types);
    return;
  }
  if (const nlohmann::json* pattern = config.find("/sliding_window_pattern", JsonNull::Absent))
    period = static_cast<int>(read_integer(*pattern, config.file(), "/sliding_window_pattern", 1, 1 << 20));
  c.sliding_window = periodic_windows(c.num_layers, w, period);
}

std::map<std::string, std::string> gemma_hf_names() {
  return {{"post_attention_norm.weight", "post_attention_layernorm.weight"},
          {"ffn_norm.weight", "pre_feedforward_layernorm.weight"},
          {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"}};
}

}  // namespace attnviz
