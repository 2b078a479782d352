// Mistral (Jiang et al. 2023): LLaMA with a sliding window in every layer. llama.cpp's
// converter writes Mistral as architecture llama and its graph applies no window, so a GGUF
// Mistral runs as llama (with a warning naming the window); transformers applies
// config.json's sliding_window in every layer (query i sees keys i − W < j ≤ i).
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"

namespace attnviz {

namespace {
void mistral_hf(const JsonSettings& config, DecoderConfig& c) {
  if (const std::optional<long> window = hf_window(config, "/sliding_window"))
    c.sliding_window.assign(static_cast<std::size_t>(c.num_layers), *window);
}
}  // namespace

const DecoderFamily& mistral_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.hf_architecture = "MistralForCausalLM";
    f.hf_settings = mistral_hf;
    return f;
  }();
  return family;
}

}  // namespace attnviz
