// A whole model's run as plain data: the model's summary, the tokens it saw, and its attention
// blocks, as the model path produces them (model/model_run) and the model dump writes and reads
// them (records/model_dump). No computation here; which layers a run captures is model/model_run's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention_record.hpp"
#include "attention/rope.hpp"
#include "model/post_layer_norm.hpp"

namespace attnviz {

/// The model's shape and provenance, as the model dump's `model` object writes it.
struct ModelSummary {
  std::string file;            ///< the path given
  std::string architecture;    ///< "llama", "transformer" (CTranslate2)…
  std::string name;            ///< general.name, or the file's stem
  int num_layers = 0;          ///< layers per stack
  int num_heads = 0;
  int num_kv_heads = 0;
  long d_model = 0, d_k = 0;
  long context_length = 0;     ///< 0 when the file does not say
  std::optional<RopeSettings> rope;
  std::string rope_scaling;    ///< "none", "linear ×4", "llama3"… (for the dump and titles)
  std::optional<double> partial_rotary_factor;  ///< config.json's, when given (rope.dim = int(d_k · factor))
  /// The family's settings as applied (decoder families; issue 25): each layer's sliding window
  /// (empty: none), the attention scale when not 1/√d_k, the soft-caps (0: none), the RoPE base
  /// and scaling of sliding-window layers when they turn otherwise than the others.
  std::vector<long> sliding_window;
  std::optional<double> attention_scale;
  double attention_softcap = 0, final_softcap = 0;
  std::optional<double> local_rope_theta;
  std::string local_rope_scaling;  ///< the sliding-window layers' scaling as rope_scaling says it, when local_rope_theta is set
  std::vector<int> no_rope_layers;  ///< NoPE layers of a RoPE model (SmolLM3, Granite without RoPE), ascending; empty: none
  /// Granite's multipliers (1: none): embeddings ×, each sublayer's output × before the residual, logits ÷.
  double embedding_multiplier = 1.0, residual_multiplier = 1.0, logit_divisor = 1.0;
  std::vector<std::int32_t> end_tokens;  ///< ids greedy decoding stops at (EOS, EOT, …), ascending; may be empty
  /// Decoders with Q8_0 weights: how they were multiplied (DecoderModel::matmul); "" otherwise.
  std::string matmul;
  std::string activation;      ///< the feed-forward's GELU as the file's engine computes it ("gelu (erf)"): encoders, GPT-2, Gemma; "" otherwise
};

/// The names of an encoder-decoder model's kinds of block, as head names and --heads carry them
/// ("enc.L2H5"), with what each is: {"enc", "encoder self-attention"}, {"dec", "decoder
/// self-attention"}, {"cross", "decoder cross-attention"}, in the order the model runs them.
struct BlockName {
  const char* name;
  const char* stack;
  const char* kind;
  const char* description;
};
const std::vector<BlockName>& block_names();

/// "enc", "dec" or "cross" for a (stack, kind) of an encoder-decoder model (see block_names).
/// Requires: stack "encoder" or "decoder", kind "self" or "cross".
std::string block_name(const std::string& stack, const std::string& kind);

/// What a block name stands for, for pictures' titles: "encoder self-attention" for "enc"
/// (block_names); any other name as it is.
std::string block_description(const std::string& block);

/// "L2H5", or with a block name "enc.L2H5", "dec.L2H5", "cross.L2H5".
std::string model_head_name(const std::string& block, int layer, int head);

/// `dump --activations` (issue 36): the residual stream around a block and what its sublayers
/// add to it, at every position, each [n, d_model] (empty when not asked for), as
/// TransformerLens's hook points name them: resid_pre enters the block, attn_out is what the
/// attention sublayer adds (after a post-attention norm, Gemma's), resid_mid = resid_pre +
/// attn_out, mlp_out what the MLP adds, resid_post = resid_mid + mlp_out leaves it.
struct BlockActivations {
  Matrix resid_pre, resid_mid, resid_post, attn_out, mlp_out;
};

/// The hook points `dump --activations` names (BlockActivations' fields, and z: the heads'
/// outputs before W_O, TransformerLens's attn.hook_z).
inline const std::vector<std::string> kActivationNames = {"resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out", "z"};

/// Which BlockActivations a forward pass keeps for its selected layers (from kActivationNames;
/// z is AttentionWants::outputs' head outputs).
struct ActivationWants {
  bool resid_pre = false, resid_mid = false, resid_post = false, attn_out = false, mlp_out = false;
  bool any() const { return resid_pre || resid_mid || resid_post || attn_out || mlp_out; }
  /// From names of kActivationNames ("z" ignored here). Requires: known names.
  static ActivationWants of(const std::vector<std::string>& names);
};

/// One attention block of the run: a layer of a stack, self- or cross-attention.
/// record.layer is `layer`; record.weights holds [head][query][key].
struct AttentionBlock {
  int layer = 0;
  std::string stack = "decoder";  ///< "encoder" or "decoder"
  std::string kind = "self";      ///< "self" or "cross"
  bool encoder_decoder = false;   ///< the model has both stacks: heads need their block named
  AttentionRecord record;
  /// What analyses of the block read (issue 20), handed on only when asked (ForwardRequest::wants,
  /// value_vectors): f^h(x_j) h × [n_k, d_out]; the residual stream entering the block
  /// [n_q, d_model] (self-attention); b_O [d_out] or empty; for a post-LN block, its LayerNorm.
  std::vector<Matrix> value_vectors;
  Matrix residual;
  Vector b_o;
  std::optional<PostLayerNorm> post_norm;
  BlockActivations activations;  ///< ForwardRequest::activations: the hook points asked for
  /// "" for a model with one kind of block (decoder-only), else block_name(stack, kind).
  std::string block_name() const;
  /// "L2H5" (decoder-only models); "enc.L2H5", "dec.L2H5" or "cross.L2H5" (encoder-decoder).
  std::string head_name(int head) const;
};

/// Receives each computed block; the producer keeps nothing of it afterwards.
using BlockSink = std::function<void(AttentionBlock&&)>;

/// Everything about the run except the blocks.
/// One turn of a chat conversation (--chat/--messages) among the prompt's tokens: its role and
/// the positions [first, end) its rendering spans (from 0, the BOS and the template's preamble in
/// the first turn).
struct ChatTurnSpan {
  std::string role;
  int first = 0;
  int end = 0;
};

struct ModelRunInfo {
  ModelSummary model;
  Tokens tokens;                       ///< pieces of the decoder input, byte for byte
  Tokens token_texts;                  ///< what each reads as (token_display_text); empty when unknown
  std::vector<std::int32_t> token_ids;
  std::string text;                    ///< decoded text of every token after BOS
  std::string chat_prompt;             ///< the chat template's rendering of --chat/--messages ("" without)
  std::vector<ChatTurnSpan> chat_turns;  ///< the conversation's turns among the tokens (empty without)
  std::string chat_turns_note;         ///< why a conversation's turns are not marked ("" when they are)
  int prompt_length = 0;               ///< tokens that came from the input, BOS included
  std::string generated_text;          ///< decoded continuation ("" without --generate)
  std::vector<float> last_logits;      ///< the final position's n_vocab logits, when asked
  // Encoder-decoder models only.
  Tokens source_tokens;                ///< encoder input
  std::string source_text;             ///< the source, its tokens joined as the source vocabulary
                                       ///< says (specials left out): what pictures quote
  Tokens target_tokens;                ///< decoder input, from <s>
};

}  // namespace attnviz
