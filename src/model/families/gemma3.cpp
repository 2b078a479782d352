// Gemma 3, text (Gemma3ForCausalLM; llama.cpp's gemma3): Gemma 2's block with an RMSNorm of
// each head's q and k, no soft-caps, five local layers to one global, and RoPE of their own
// for local layers (base 10 000, unscaled) and global ones (the file's base and scaling).
#include <cmath>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"
#include "model/families/gemma_settings.hpp"
#include "model/families/local_rope.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {

// llama.cpp (LLM_ARCH_GEMMA3): the window from the file (required), pattern 6 (layer l is
// local when l % 6 < 5) unless attention.sliding_window_pattern says, local layers at
// rope.freq_base_swa or 10 000 and unscaled (rope_freq_scale_train_swa = 1) whatever the file's
// scaling gives the global ones (measured: llama.cpp applies both keys), the 27B's scale rule
// (62 layers) as for Gemma 2; the graph with windows (gemma3<iswa = true>) has no soft-cap.
void gemma3_gguf(const GgufFile& file, DecoderConfig& c) {
  const std::string a = "gemma3.";
  if (!file.has(a + "attention.sliding_window"))
    throw InputError::inconsistent(file.path(), "missing metadata " + a + "attention.sliding_window (llama.cpp requires it for gemma3)");
  const long window = *gguf_window(file, a + "attention.sliding_window", std::nullopt);
  c.sliding_window = gguf_window_pattern(file, a + "attention.sliding_window_pattern", c.num_layers, window, 6);
  gguf_local_rope(file, "gemma3", GgufLocalRope{.default_theta = 10000.0, .file_scale = false}, c);
  c.attention_scale = gemma_gguf_scale(c);
}

void gemma3_hf(const JsonSettings& config, DecoderConfig& c) {
  gemma_hf_settings(config, c, 6, 4096, 0.0, 0.0);
  if (config.flag("/use_bidirectional_attention", false))  // EmbeddingGemma's: no causal mask
    throw InputError::bad_value(config.file(), "/use_bidirectional_attention", "false (attnviz runs Gemma 3 causally)", "true");
  hf_gemma3_local_rope(config, c);
}

}  // namespace

const DecoderFamily& gemma3_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "gemma3";
    f.hf_architecture = "Gemma3ForCausalLM";
    f.block.post_attention_norm = true;
    f.block.post_ffn_norm = true;
    f.block.ffn = FeedForwardKind::GeGlu;
    f.block.embedding_scale = true;
    f.block.qk_norm = true;
    f.gguf_keys = {"attention.sliding_window", "attention.sliding_window_pattern", "rope.freq_base_swa"};
    f.gguf_settings = gemma3_gguf;
    f.hf_settings = gemma3_hf;
    f.hf_names = gemma_hf_names();
    f.hf_names["attn_q_norm.weight"] = "self_attn.q_norm.weight";
    f.hf_names["attn_k_norm.weight"] = "self_attn.k_norm.weight";
    f.hf_norm_plus_one = true;
    f.hf_tied_default = true;
    return f;
  }();
  return family;
}

}  // namespace attnviz
