// GPT-2 (Radford et al. 2019; GPT2LMHeadModel; llama.cpp's gpt2): learned absolute positions
// added to the embeddings, LayerNorm with biases, Q, K, V fused with biases, the attention
// output and both feed-forward matrices with biases, GELU (tanh), the output tied to the
// embedding when output.weight is absent. No RoPE.
#include "model/families/family.hpp"

namespace attnviz {

const DecoderFamily& gpt2_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "gpt2";
    // Its Hugging Face folders (Conv1D [in, out] weights, transformer.h.L names) are not read yet.
    f.block.norm = NormKind::Layer;
    f.block.norm_bias = true;
    f.block.ffn = FeedForwardKind::Gelu;
    f.block.ffn_bias = true;
    f.block.fused_qkv = true;
    f.block.output_bias = true;
    f.block.positions = PositionKind::Learned;
    f.qkv_bias = true;
    f.gguf_epsilon_key = "attention.layer_norm_epsilon";
    return f;
  }();
  return family;
}

}  // namespace attnviz
