// Qwen 2 / 2.5 (Qwen2ForCausalLM; llama.cpp's qwen2): LLaMA with biases on Q, K and V, RoPE
// in halves (NEOX), θ from the file (1 000 000 in the released models).
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"

namespace attnviz {

const DecoderFamily& qwen2_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "qwen2";
    f.hf_architecture = "Qwen2ForCausalLM";
    f.qkv_bias = true;
    f.hf_settings = refuse_qwen_sliding_window;
    return f;
  }();
  return family;
}

}  // namespace attnviz
