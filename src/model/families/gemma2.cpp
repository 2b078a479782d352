// Gemma 2 (Gemma2ForCausalLM; llama.cpp's gemma2, graph gemma2-iswa.cpp): embeddings × √d_model;
// RMSNorm before and after attention and before and after the feed-forward (weights 1 + w);
// GeGLU with tanh GELU (llama.cpp: its float16 table); attention scores soft-capped c·tanh(s/c)
// before the mask; final logits soft-capped; sliding-window layers (even ones) alternating with
// global ones.
#include <cmath>

#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"
#include "model/families/gemma_settings.hpp"
#include "model/families/local_rope.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {

// llama.cpp (llama-model.cpp, LLM_ARCH_GEMMA2): window 4096 and caps 50 / 30 unless the file
// says; pattern 2 (layer l is local when l % 2 == 0) unless attention.sliding_window_pattern
// says; local layers turn at rope.freq_base_swa when given, else at the global θ, and keep the
// file's linear scale (rope_freq_scale_train_swa = rope_freq_scale_train, even where
// rope.scaling.type "none" unscales the global layers; measured against llama.cpp, unlike Gemma
// 3's rule); the scale 1/√head_dim except for the 27B model (46 layers), where it is
// 1/√(d_model / heads), as gemma_pytorch's config has it.
void gemma2_gguf(const GgufFile& file, DecoderConfig& c) {
  const std::string a = "gemma2.";
  const long window = *gguf_window(file, a + "attention.sliding_window", 4096);
  c.sliding_window = gguf_window_pattern(file, a + "attention.sliding_window_pattern", c.num_layers, window, 2);
  gguf_local_rope(file, "gemma2", GgufLocalRope{.default_theta = std::nullopt, .file_scale = true}, c);
  c.attention_softcap = gguf_cap(file, a + "attn_logit_softcapping", 50.0);
  c.final_softcap = gguf_cap(file, a + "final_logit_softcapping", 30.0);
  c.attention_scale = gemma_gguf_scale(c);
}

// transformers' Gemma2Config: query_pre_attn_scalar (default 256) gives the scale
// query_pre_attn_scalar^-½; the caps apply when not null; layer_types, else every even layer
// sliding. One rotary embedding (Gemma2RotaryEmbedding, rope_theta and rope_scaling) turns every
// layer: Gemma2Config has no local base.
void gemma2_hf(const JsonSettings& config, DecoderConfig& c) { gemma_hf_settings(config, c, 2, 4096, 50.0, 30.0); }

}  // namespace

const DecoderFamily& gemma2_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "gemma2";
    f.hf_architecture = "Gemma2ForCausalLM";
    f.block.post_attention_norm = true;
    f.block.post_ffn_norm = true;
    f.block.ffn = FeedForwardKind::GeGlu;
    f.block.embedding_scale = true;
    f.gguf_keys = {"attention.sliding_window", "attention.sliding_window_pattern", "rope.freq_base_swa",
                   "attn_logit_softcapping", "final_logit_softcapping"};
    f.gguf_settings = gemma2_gguf;
    f.hf_settings = gemma2_hf;
    f.hf_names = gemma_hf_names();
    f.hf_norm_plus_one = true;
    f.hf_tied_default = true;
    return f;
  }();
  return family;
}

}  // namespace attnviz
