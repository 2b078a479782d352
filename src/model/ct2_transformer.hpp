// The encoder-decoder Transformer of a CTranslate2 model.bin (spec TransformerBase,
// TransformerBig or TransformerSpec: Vaswani et al. 2017, by default OpenNMT's pre-norm variant
// with the layer norm before each sublayer) and its forward computation, row-vector convention:
//
//   LN(x)  = (x - mean) / sqrt(var + eps) · gamma + beta              (biased variance, per row)
//   encoder: x = E_src[ids] · sqrt(d_model) + PE(1…S)
//            per layer: x += MHA(LN(x), LN(x));  x += FFN(LN(x)),  FFN(h) = act(h·W1 + b1)·W2 + b2
//            M = LN_enc(x)                                             (the memory, [S, d_model])
//   decoder: y = E_tgt[<s>, t1, …] · sqrt(d_model) + PE(1…T)
//            per layer: y += MHA(LN(y), LN(y), causal);  y += MHA(LN(y), M);  y += FFN(LN(y))
//            logits = LN_dec(y)·W_proj + b_proj
//
// A post-norm model (pre_norm 0; Marian's OPUS-MT models) has x = LN(x + f(x)) for each sublayer
// f instead; the final LN_enc and LN_dec are applied when the file has them (a pre-norm model
// always does unless converted with no_final_norm). act is ReLU unless the file says otherwise.
//
// (CTranslate2 src/layers/transformer.cc and attention.cc; tests/ct2_model_test.cpp checks this on the
// aren-transliteration test model against the log-probabilities CTranslate2's own tests record.)
// Every attention block is attention/multi_head_attention; PE is sinusoidal_encoding_halves.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "core/types.hpp"
#include "model/block_pieces.hpp"
#include "model/block_probe.hpp"

namespace attnviz {

class Ct2File;

// The residual stream and everything outside the attention blocks (embeddings, layer norms,
// feed-forward, output layer) is computed in float64 (WideMatrix, model/block_pieces); only the
// attention blocks run in float32 (attention/multi_head_attention, on float32-rounded inputs).
// Through 12 layers a float32 residual stream drifted 1.2e-6 from the float64 references in
// cross-attention weights; in float64 it stays within the attention block's own float32
// rounding (about 8e-7).

/// LayerNorm parameters, each [d_model].
struct Ct2LayerNorm {
  WideVector gamma, beta;
};

/// The position-wise feed-forward sublayer with its pre-norm; w1 [d_model, d_ff], w2 [d_ff,
/// d_model] (the file's [out, in] Dense weights transposed).
struct Ct2FeedForward {
  Ct2LayerNorm norm;
  WideMatrix w1, w2;
  WideVector b1, b2;
};

/// One encoder layer: encoder/layer_N/{self_attention, ffn}.
struct Ct2EncoderLayer {
  Ct2LayerNorm self_norm;
  AttentionLayer self_attention;  ///< from self_attention/linear_0 (fused Q,K,V) and linear_1 (W_O)
  Ct2FeedForward ffn;
};

/// One decoder layer: decoder/layer_N/{self_attention, attention, ffn}.
struct Ct2DecoderLayer {
  Ct2LayerNorm self_norm;
  AttentionLayer self_attention;   ///< causal
  Ct2LayerNorm cross_norm;         ///< applied to the queries' side only
  AttentionLayer cross_attention;  ///< attention/linear_0 (Q), linear_1 (fused K,V), linear_2 (W_O)
  Ct2FeedForward ffn;
};

/// The feed-forward activation, common_spec.Activation ids (CTranslate2 ops/activation.h).
enum class Ct2Activation : int {
  Relu = 0,
  GeluTanh = 1,     ///< 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))
  Swish = 2,        ///< x·sigmoid(x)
  Gelu = 3,         ///< 0.5·x·(1 + erf(x/√2))
  GeluSigmoid = 4,  ///< x·sigmoid(1.702·x)
  Tanh = 5,
};

/// The weights and settings of the whole model, decoded to float32.
struct Ct2Transformer {
  std::string file;                   ///< model.bin's path
  std::string spec_name;
  std::uint32_t binary_version = 0, spec_revision = 0;
  int num_heads = 0;
  long d_model = 0;
  double layer_norm_epsilon = 1e-5;
  bool scale_embeddings = true;       ///< multiply embeddings by sqrt(d_model)
  bool pre_norm = true;               ///< LN before each sublayer (else after the residual add)
  Ct2Activation activation = Ct2Activation::Relu;
  Matrix source_embeddings;           ///< [source vocabulary, d_model]
  Matrix target_embeddings;           ///< [target vocabulary, d_model]
  Matrix source_positions, target_positions;  ///< learned [max_length, d_model], or empty = sinusoidal
  std::vector<Ct2EncoderLayer> encoder;
  std::optional<Ct2LayerNorm> encoder_norm;  ///< encoder/layer_norm, when the file has it
  std::vector<Ct2DecoderLayer> decoder;
  std::optional<Ct2LayerNorm> decoder_norm;  ///< decoder/layer_norm, when the file has it
  WideMatrix projection;              ///< [d_model, target vocabulary]
  WideVector projection_bias;         ///< [target vocabulary]
};

/// Reads the Transformer from `file`. `layer_norm_epsilon` comes from config.json when it gives
/// one (CTranslate2's default is 1e-5). Spec settings are read as CTranslate2 does for each
/// revision: from revision 5 encoder/num_heads, decoder/num_heads…; revisions 3–4 the root
/// num_heads, pre_norm, activation; revision 2 the heads of the spec name (Base 8, Big 16).
/// Throws InputError ("FILE: …", one line) for another spec name, revision 1, encoder and
/// decoder settings that differ, an unknown activation, an extended model (relative positions,
/// extra layer norms…, named), a missing variable (named), or a variable of the wrong shape
/// (name, expected and found shape).
Ct2Transformer load_ct2_transformer(const Ct2File& file, double layer_norm_epsilon);

/// Called once per attention block in order (encoder layers, then per decoder layer its self-
/// then cross-attention) with that block's result (weights and outputs) when capturing.
/// stack is "encoder" or "decoder", kind "self" or "cross".
using Ct2AttentionHook =
    std::function<void(const std::string& stack, const std::string& kind, int layer, AttentionResult& result)>;

/// What a capturing pass keeps of each block beside its weights and outputs (issue 20): scores,
/// f^h(x_j) (wants.value_vectors), and for self-attention the residual stream entering the block
/// [n, d_model] (float32) with, for a post-norm model, its LayerNorm (nullptr pre-norm), handed
/// to `residual` just before the hook is called for that block.
struct Ct2Capture {
  AttentionWants wants{false, true, false};
  std::function<void(const Matrix& residual, const Ct2LayerNorm* post_norm)> residual;
  /// The decoder's residual stream y [T, d_model] in float64 entering decoder layer `layer`, and
  /// with layer = the number of decoder layers after the last one (before LN_dec): what
  /// `attribute` takes apart (analysis/ct2_attribution). Called whatever `wants` says.
  std::function<void(int layer, const WideMatrix& y)> decoder_residual;
};

/// The encoder's output M (LN_enc(x), or x without a final norm) for source ids, rounded to
/// float32 as the input of every
/// cross-attention: [S, d_model]. Requires valid ids.
/// `probe`, when given, sees every attention block's inputs before it runs (explain).
Matrix ct2_encode(const Ct2Transformer& model, const std::vector<std::int32_t>& source_ids,
                  const Ct2AttentionHook& hook = {}, const Ct2Capture& capture = {}, const BlockProbe* probe = nullptr);

/// Teacher-forced decoder pass over `input_ids` (from the start token): [T, target vocabulary]
/// logits, row t predicting token t+1. Requires valid ids.
WideMatrix ct2_decoder_logits(const Ct2Transformer& model, const Matrix& memory,
                          const std::vector<std::int32_t>& input_ids, const Ct2AttentionHook& hook = {},
                          const Ct2Capture& capture = {}, const BlockProbe* probe = nullptr);

/// Greedy decoding: from `start_id`, one position at a time (each layer keeps the inputs of its
/// self-attention so far, so step t costs one row), the argmax token (the first
/// on ties) until `end_id` or `max_steps` tokens. Returns the generated ids, `end_id` included
/// when reached.
std::vector<std::int32_t> ct2_greedy_decode(const Ct2Transformer& model, const Matrix& memory,
                                            std::int32_t start_id, std::int32_t end_id, int max_steps);

}  // namespace attnviz
