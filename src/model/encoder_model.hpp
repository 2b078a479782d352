// A post-norm bidirectional Transformer encoder (BERT: Devlin et al. 2019) run from its real
// weights, layer by layer, handing each layer's attention to a sink (as DecoderModel does):
//
//   x = LN(E_tok[ids] + E_type[types] + E_pos[0 … n−1])                 (learned positions)
//   per layer:  x = LN(x + MHA(x));  x = LN(x + W_down·GELU(W_up·x + b_up) + b_down)
//
// with every projection biased, attention over all positions (no causal mask), and LN the
// biased-variance LayerNorm. The residual stream is float64 (model/block_pieces); attention is
// the engine's multi_head_attention in float32. Tensor names are llama.cpp's for architecture
// bert (token_embd, token_types, position_embd, token_embd_norm, blk.L.attn_{q,k,v,output},
// blk.L.attn_output_norm, blk.L.ffn_{up,down}, blk.L.layer_output_norm; .weight and .bias).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/block_pieces.hpp"
#include "model/block_probe.hpp"
#include "model/decoder_model.hpp"

namespace attnviz {

/// Shapes and settings of an encoder.
struct EncoderConfig {
  std::string architecture = "bert";
  std::string name;
  std::string file;             ///< the model file or folder, for messages
  std::string family = "bert";  ///< named in messages about missing tensors
  int num_layers = 0;
  long d_model = 0;
  int num_heads = 0;
  long d_ff = 0;
  long n_vocab = 0;
  long n_positions = 0;         ///< rows of the learned position table (the context length)
  long n_token_types = 0;       ///< rows of the token-type table
  double layer_norm_epsilon = 1e-12;
  GeluKind gelu = GeluKind::Tanh;  ///< the feed-forward's GELU, as the file's engine computes it
  std::vector<std::string> warnings;
};

/// What one forward pass reads and keeps.
struct EncoderRequest {
  std::vector<std::int32_t> token_ids;
  std::vector<std::int32_t> token_types;  ///< one per token (segment A = 0); empty: all 0
  Tokens tokens;                          ///< labels for the records
  LayerSelection layers;
  const BlockSink* sink = nullptr;
  /// Sees each selected layer's attention inputs (explain), with the gain of the LayerNorm that
  /// made them (post-norm: the embedding's norm for layer 0, the previous layer's output norm).
  const BlockProbe* probe = nullptr;
  /// --measure norms|alti (issue 20): each selected block also hands on f^h(x_j), the residual
  /// entering it (the layer's input), b_O and its attention output LayerNorm (post-LN), as
  /// AttentionBlock documents.
  bool value_vectors = false;
};

class EncoderModel {
 public:
  /// Checks that every tensor the config needs exists with its shape (without decoding any).
  /// Throws InputError naming the family, the file and the first missing or misshapen tensor.
  EncoderModel(EncoderConfig config, std::unique_ptr<WeightSource> weights);

  /// The token embeddings W_E [n_vocab, d_model] for explain's circuits; `output` stays empty
  /// (the encoder has no unembedding, so no copying score).
  OutputWeights output_weights() const;

  const EncoderConfig& config() const { return config_; }

  /// Runs every layer; each selected layer's attention [head][query][key] (no mask: every query
  /// sees every key) goes to the sink. Throws InputError for no ids, an id or token type outside
  /// its table, more tokens than positions, token_types of another length, or a non-finite
  /// residual stream (naming the layer).
  void forward(const EncoderRequest& request) const;

  /// Bytes of float32 weights of one layer and of the embedding tables: the memory estimate.
  double layer_float_bytes() const;

  /// On: every layer weight the source stores in ggml blocks is multiplied as llama.cpp's CPU
  /// backend multiplies it, the activations converted to the type's vec_dot_type
  /// (model/ggml_products: the Q, K, V and output projections and the feed-forward). Off: decoded
  /// to float32 and multiplied exactly (--exact-matmul). encoder_from_gguf turns it on.
  void set_quantized_matmul(bool on) { quantized_matmul_ = on; }
  /// For the dump's model block, per weight type of the layer products (DecoderModel::matmul's
  /// form): "q8_0: q8_0 activations, as llama.cpp"; "" when all are f32.
  std::string matmul() const;

 private:
  /// Layer l's attention parameters; ggml-block weights under quantized matmul become Projections,
  /// their float32 matrices left empty unless `keep_float` (explain's probe reads them).
  AttentionLayer attention_layer(int layer, bool keep_float) const;
  /// X·Wᵀ as llama.cpp computes it (ggml_projection) for the [rows, cols] tensor `name` when
  /// quantized matmul is on and its type has such a product; empty otherwise.
  Projection quantized_projection(const std::string& name, long rows, long cols) const;
  /// X [m, cols]·Wᵀ for layer l's tensor `name` [rows, cols]: quantized_projection, or decoded.
  Matrix linear(int l, const char* name, long rows, long cols, const Matrix& x) const;
  WideVector wide(const std::string& name, long n) const;
  WideMatrix embed(const EncoderRequest& request) const;
  AttentionBlock block_of(int layer, Scalar scale, const Tokens& tokens, AttentionResult&& result) const;

  EncoderConfig config_;
  std::unique_ptr<WeightSource> weights_;
  bool quantized_matmul_ = false;
};

}  // namespace attnviz
