// LLaMA (Touvron et al. 2023): RMSNorm, RoPE, grouped-query attention, SwiGLU; the block
// every other family is told apart from. GGUF files of LLaMA 1/2/3, Mistral, TinyLlama, SmolLM.
#include "model/families/family.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/llama_metadata.hpp"

namespace attnviz {

namespace {
// llama.cpp's LLM_ARCH_LLAMA graph has no window, cap or extra scale: keys that would ask for
// one are refused or named by check_llama_metadata.
void llama_gguf(const GgufFile& file, DecoderConfig& c) { c.warnings = check_llama_metadata(file, c.d_k); }
}  // namespace

const DecoderFamily& llama_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "llama";
    f.hf_architecture = "LlamaForCausalLM";
    // The converter permutes Hugging Face's rotate-half rows of W_Q and W_K into adjacent
    // pairs, and llama.cpp turns them as LLAMA_ROPE_TYPE_NORM.
    f.gguf_rope_style = RopeStyle::Interleaved;
    f.gguf_rope_frequency_factors = true;
    f.gguf_settings = llama_gguf;
    f.gguf_checks_all_keys = true;
    return f;
  }();
  return family;
}

}  // namespace attnviz
