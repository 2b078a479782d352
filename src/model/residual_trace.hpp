// What a decoder's forward pass can hand on for head attribution (issue 20 §3): the residual
// stream at the last position taken apart into what wrote it (the embedding, each head's
// output through its rows of W_O, each block's biases, each MLP), the final norm's statistics
// taken from the real residual, and optionally the residual entering every layer, from which
// an ablated rerun starts. Filled by DecoderModel::forward when ForwardRequest::trace is set;
// read by analysis/logit_attribution. The position traced is always the last one: under a
// causal mask the rows after p do not change row p, so a caller traces p by running ids[0..p].
#pragma once

#include <vector>

#include "attention/attention.hpp"
#include "core/types.hpp"

namespace attnviz {

/// The final normalisation at the traced position as a map that is linear in the residual once
/// its statistic is fixed (TransformerLens's cached scale, ln_final.hook_scale):
///   norm(x) = ((x − centre·mean(x)) · scale) ⊙ gain + bias.
/// RMSNorm: centre false, scale = 1/sqrt(mean(x²) + ε); LayerNorm: centre true, scale = 1/σ.
struct FinalNormTrace {
  bool centre = false;
  double scale = 1.0;  ///< from the real residual at the position
  Vector gain;         ///< [d_model], the gain as applied (a family's 1 + w already added)
  Vector bias;         ///< [d_model], or empty when the norm has none
};

/// The residual stream at the last position and what wrote it. Every vector is [d_model].
/// Sum of the parts: embedding + position + Σ_l (Σ_h head_writes[l].row(h) + attn_bias[l] +
/// mlp_writes[l] + mlp_bias[l]) = final_residual, up to float32 rounding.
struct ResidualTrace {
  /// Set by the caller: also keep layer_inputs (n × d_model floats a layer).
  bool keep_layer_inputs = false;

  Vector embedding;                 ///< the token's embedding row (scaled as the family scales it)
  Vector position;                  ///< a learned position embedding; empty for RoPE models
  std::vector<Matrix> head_writes;  ///< [layer] × [h, d_model]: z^h W_O^h, z^h = Σ_j α_ij v^h_j
  std::vector<Vector> attn_bias;    ///< [layer]: b_O (zeros when the model has none)
  std::vector<Vector> attn_updates; ///< [layer]: the block's attention update as added (Σ_h head_writes + b_O)
  std::vector<Vector> mlp_writes;   ///< [layer]: the MLP's update less its output bias
  std::vector<Vector> mlp_bias;     ///< [layer]: the MLP's output bias (zeros when none)
  Vector final_residual;            ///< x after the last layer
  FinalNormTrace final_norm;
  /// The final logits' soft-cap c (Gemma 2: logits = c·tanh(z / c)); 0 when none. DLA explains z.
  double final_softcap = 0;
  /// [layer] × [n, d_model]: the residual entering each layer, every position (keep_layer_inputs).
  std::vector<Matrix> layer_inputs;

  /// Called by the forward pass. `x` is the residual [n, d_model] at each point. `positions`
  /// [n, d_model]: the learned position rows already added into `embedded`, or null.
  void begin(const Matrix& embedded, const Matrix* positions = nullptr);
  void enter_layer(const Matrix& x);
  /// After layer `layer` ran: `result` holds its head outputs (AttentionWants::outputs), `x`
  /// the residual after the whole block. `write_gain` [d_model], when not empty, is what
  /// multiplies the attention output at the last row before it joins the residual (a
  /// post-attention RMSNorm's s·γ with its statistic fixed, Gemma 2); `mlp_bias` [d_model],
  /// when not empty, the MLP's output bias (counted apart from mlp_writes).
  void leave_layer(const AttentionLayer& layer, const AttentionResult& result, const Matrix& x,
                   const Vector& write_gain = Vector(), const Vector& mlp_output_bias = Vector());

 private:
  Vector before_;  ///< the last row entering the current layer
};

}  // namespace attnviz
