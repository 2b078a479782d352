// Head attribution for an encoder-decoder (CTranslate2) model (issue 20 §3): the decoder's next
// token at one decoder position, taken apart as analysis/head_attribution does for a decoder —
// direct logit attribution over the decoder's self- and cross-attention heads, MLPs, embedding,
// positions and biases, and the change in log p(target) when each head of the encoder, the
// decoder's self-attention or its cross-attention is zeroed. Runs the model; draws nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/head_attribution.hpp"
#include "model/ct2_transformer.hpp"

namespace attnviz {

struct Ct2AttributionRequest {
  std::vector<std::int32_t> source_ids;   ///< the encoder's input
  std::vector<std::int32_t> decoder_ids;  ///< the decoder's input, from the start token <s>
  long position = -1;                     ///< index into decoder_ids (0: <s>); -1: the last
  std::optional<std::int32_t> target;     ///< default: the model's top prediction at `position`
  bool ablation = true;                   ///< false: DLA only
};

/// Runs the encoder on source_ids and the decoder teacher-forced on decoder_ids[0 … position]
/// (rows after it cannot change it: causal self-attention, and cross-attention queries are
/// per row), and attributes the logit of `target` at `position`:
///   logit = LN_dec(y_p)·W_proj[:, t] + b_proj[t], with y_p = E[t_p]·√d + PE(p + 1)
///           + Σ_l (Σ_h self_h + b_O^self + Σ_h cross_h + b_O^cross + mlp_l + b_2,l)
/// and LN_dec's statistic fixed at its real value (as for decoders). The returned
/// HeadAttribution holds the decoder's self-attention heads in dla.heads / ablation and the rest
/// in encoder_decoder; its dla.attn_bias is the self-attention's b_O. Ablation zeroes z^h before
/// W_O at every position of the block (Michel et al. 2019) and reruns what follows: the decoder
/// for a decoder head, the encoder then the decoder for an encoder head; reruns run on `threads`
/// threads. Requires a pre-norm model (post-norm: see ct2_attribution_refusal), valid ids,
/// position in range and target in [0, target vocabulary). Throws std::logic_error when the
/// shares do not add up to the logit within kAttributionTolerance.
HeadAttribution attribute_ct2_heads(const Ct2Transformer& model, const Ct2AttributionRequest& request, int threads = 1);

/// Why `model` cannot be attributed, or "" when it can: a post-norm model (pre_norm 0: every
/// sublayer's LayerNorm rescales what was written before it, so the residual is not a sum of
/// the parts).
std::string ct2_attribution_refusal(const Ct2Transformer& model);

}  // namespace attnviz
