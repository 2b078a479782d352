// Phi-3 (Phi3ForCausalLM; llama.cpp's phi3): LLaMA's block with Q, K, V fused in one matrix
// (attn_qkv, rows [Q; K; V]) and gate and up fused (ffn_up, rows [gate; up]), RoPE in halves
// over the first rope.dimension_count components of each head (partial rotary). llama.cpp
// turns the sliding window off for Phi-3 (llama-model.cpp: "Phi SWA is currently disabled");
// transformers applies it in every layer.
#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {

void phi3_gguf(const GgufFile& file, DecoderConfig& c) {
  const std::string key = "phi3.attention.sliding_window";
  if (const std::optional<long> window = gguf_window(file, key, std::nullopt))
    c.warnings.push_back(file.path() + ": metadata " + key + " = " + std::to_string(*window) +
                         ": llama.cpp applies no sliding window for architecture phi3, and neither does attnviz: every query sees all "
                         "earlier keys");
  for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"})
    if (file.find_tensor(name))
      throw InputError::inconsistent(file.path(), std::string("tensor ") + name + ": LongRoPE frequency factors, which attnviz does not apply");
}

void phi3_hf(const JsonSettings& config, DecoderConfig& c) {
  // Read by LongRoPE only, whose rope_scaling the common reader refuses.
  config.consider("/original_max_position_embeddings");
  if (const std::optional<long> window = hf_window(config, "/sliding_window"))
    c.sliding_window.assign(static_cast<std::size_t>(c.num_layers), *window);
}

}  // namespace

const DecoderFamily& phi3_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "phi3";
    f.hf_architecture = "Phi3ForCausalLM";
    f.block.fused_qkv = true;
    f.block.fused_gate_up = true;
    f.gguf_keys = {"attention.sliding_window"};
    f.gguf_settings = phi3_gguf;
    f.hf_settings = phi3_hf;
    f.hf_names = {{"attn_qkv.weight", "self_attn.qkv_proj.weight"}, {"ffn_up.weight", "mlp.gate_up_proj.weight"}};
    return f;
  }();
  return family;
}

}  // namespace attnviz
