// What one decoder family's block computes, as data: the one forward pass (DecoderModel's
// run_layer) reads these and nothing else to tell Qwen 2 from Gemma 2 from GPT-2. Each family
// file (model/families/<family>.cpp) fills one; the per-file settings that vary between models
// of a family (window, caps, scales, θ) are in DecoderConfig.
#pragma once

namespace attnviz {

/// The norm each block and the output apply.
enum class NormKind {
  Rms,    ///< RMSNorm (Zhang & Sennrich 2019): x / √(mean(x²) + ε) · g
  Layer,  ///< LayerNorm (Ba et al. 2016): (x − mean) / √(var + ε) · g + b
};

/// The feed-forward network after attention.
enum class FeedForwardKind {
  SwiGlu,  ///< (SiLU(h·W_gate) ⊙ h·W_up)·W_down (Shazeer 2020): LLaMA, Qwen, Mistral, Phi-3
  GeGlu,   ///< (GELU(h·W_gate) ⊙ h·W_up)·W_down, the tanh GELU as DecoderConfig::gelu computes it: Gemma 2/3
  Gelu,    ///< GELU(h·W_up + b_up)·W_down + b_down, the GELU as for GeGlu: GPT-2
};

/// How a token's position enters the model.
enum class PositionKind {
  Rope,     ///< rotary embedding of q and k in every layer (Su et al. 2021)
  Learned,  ///< a learned absolute embedding added to the token embedding (position_embd.weight): GPT-2
};

/// One family's block, as llama.cpp's src/models/<arch>.cpp and transformers'
/// modeling_<family>.py build it. Tensor names are llama.cpp's (blk.L.…).
struct BlockTraits {
  NormKind norm = NormKind::Rms;
  /// blk.L.attn_norm and blk.L.ffn_norm on each sublayer's input (pre-norm, every family but
  /// OLMo 2); false: the sublayers read the residual stream itself and only their post-norms
  /// (post_attention_norm, post_ffn_norm) normalise: OLMo 2.
  bool pre_norm = true;
  bool norm_bias = false;            ///< LayerNorm biases (blk.L.attn_norm.bias …): GPT-2
  bool post_attention_norm = false;  ///< blk.L.post_attention_norm on the attention output before the residual: Gemma 2/3
  bool post_ffn_norm = false;        ///< blk.L.post_ffw_norm on the feed-forward output before the residual: Gemma 2/3
  FeedForwardKind ffn = FeedForwardKind::SwiGlu;
  bool fused_gate_up = false;  ///< blk.L.ffn_up holds [gate; up] as [2·d_ff, d_model] (gate first): Phi-3
  bool ffn_bias = false;       ///< blk.L.ffn_{up,down}.bias: GPT-2
  bool fused_qkv = false;      ///< blk.L.attn_qkv holds [Q; K; V] rows: Phi-3, GPT-2
  bool output_bias = false;    ///< blk.L.attn_output.bias: GPT-2
  bool qk_norm = false;        ///< RMSNorm of each head's q and k (blk.L.attn_{q,k}_norm, [d_k]) before RoPE: Qwen 3, Gemma 3
  /// With qk_norm: one RMSNorm over the whole q [h·d_k] and the whole k [h_kv·d_k] before they
  /// are split into heads (attn_q_norm [h·d_k], attn_k_norm [h_kv·d_k]): OLMo 2.
  bool qk_norm_whole = false;
  PositionKind positions = PositionKind::Rope;
  bool embedding_scale = false;  ///< embeddings × √d_model: Gemma 2/3
};

}  // namespace attnviz
