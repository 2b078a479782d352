// Which heads push a decoder towards a token (issue 20 §3): direct logit attribution of every
// part of the residual stream at a position, and the change in log p(target) when each head's
// output is zeroed (z^h = 0 before W_O at every position, the model rerun from that layer).
// Runs the model itself (the ablation is a rerun by definition); draws and writes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/logit_attribution.hpp"
#include "model/decoder_model.hpp"

namespace attnviz {

struct HeadAttributionRequest {
  std::vector<std::int32_t> token_ids;  ///< the whole input (BOS included when wanted)
  long position = -1;                   ///< 0-based, BOS at 0; -1: the last
  std::optional<std::int32_t> target;   ///< default: the model's top prediction at `position`
  bool ablation = true;                 ///< false: DLA only (one forward pass)
  int threads = 1;                      ///< threads for the ablated reruns (each rerun is independent)
};

/// What an encoder-decoder adds to the decoder's attribution (analysis/ct2_attribution): the
/// decoder's cross-attention heads (named cross.LlHh; the decoder's self-attention heads, dec.LlHh,
/// are HeadAttribution::dla.heads and ::ablation) and the encoder's heads (enc.LlHh), ablated only.
struct EncoderDecoderAttribution {
  std::vector<std::vector<double>> dla_cross;         ///< [layer][head]: cross-attention head h's share
  std::vector<double> dla_cross_bias;                 ///< [layer]: the cross-attention's b_O
  double dla_output_bias = 0;                         ///< the output projection's bias at the target
  std::vector<std::vector<double>> ablation_cross;    ///< [layer][head], as HeadAttribution::ablation
  /// [encoder layer][head]: the encoder rerun with the head zeroed, then the decoder.
  std::vector<std::vector<double>> ablation_encoder;
  Tokens source_tokens;                               ///< the encoder's input, as labelled
  std::vector<std::int32_t> source_ids;
};

struct HeadAttribution {
  std::int32_t target_id = 0;
  long position = 0;
  double logit = 0;         ///< the model's logit of the target at `position` (before any soft-cap)
  std::optional<double> logit_capped;  ///< the logit after the model's final soft-cap (only where it has one)
  double log_prob = 0;      ///< log softmax of the (capped) logits at `position`, at the target
  LogitAttribution dla;     ///< shares of `logit`; dla.total() equals it to float32 rounding
  /// [layer][head]: log p(target) with z^h = 0 at every position, minus log_prob (empty
  /// without request.ablation).
  std::vector<std::vector<double>> ablation;
  /// Encoder-decoder models only: the cross-attention and encoder parts. With it, Σ dla* is
  /// dla.total() + Σ dla_cross + Σ dla_cross_bias + dla_output_bias.
  std::optional<EncoderDecoderAttribution> encoder_decoder;
};

/// Runs `model` on token_ids[0 … position] (the rows after it cannot change it under the causal
/// mask), traces the residual at `position` and, when asked, reruns every layer l from the
/// residual entering it once per head of l with that head zeroed: L·h reruns of L − l layers each,
/// the last layer of each on the position's row alone, on request.threads threads.
/// Requires position in [0, ids.size()) and target in [0, n_vocab) (the CLI checks them with
/// messages). Throws std::logic_error when the shares do not add up to the logit within
/// kAttributionTolerance (a family whose forward pass the trace does not take apart): a wrong
/// attribution is never returned.
HeadAttribution attribute_heads(const DecoderModel& model, const HeadAttributionRequest& request);

/// |Σ shares − logit| allowed, relative to max(1, |logit|): float32 rounding of d_model-long
/// sums over a few dozen layers stays orders of magnitude below it.
inline constexpr double kAttributionTolerance = 1e-3;

/// log softmax(logits)[index] in double (max subtracted first). Requires index in range.
double log_softmax_at(const std::vector<float>& logits, std::int32_t index);

}  // namespace attnviz
