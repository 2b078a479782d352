// Qwen 3 (Qwen3ForCausalLM; llama.cpp's qwen3): LLaMA without biases, with an RMSNorm of
// each head's q and k (attn_q_norm, attn_k_norm, [d_k]) before RoPE (halves, NEOX).
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"

namespace attnviz {

const DecoderFamily& qwen3_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "qwen3";
    f.hf_architecture = "Qwen3ForCausalLM";
    f.block.qk_norm = true;
    f.hf_settings = refuse_qwen_sliding_window;
    f.hf_names = {{"attn_q_norm.weight", "self_attn.q_norm.weight"}, {"attn_k_norm.weight", "self_attn.k_norm.weight"}};
    return f;
  }();
  return family;
}

}  // namespace attnviz
