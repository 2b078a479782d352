// attribution.json, the file `attnviz attribute` writes (docs/output-formats.md): the target,
// its logit and log-probability at the position, the direct logit attribution of every part of
// the residual stream, and each head's ablation effect.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/head_attribution.hpp"
#include "core/types.hpp"

namespace attnviz {

/// What the document says besides the numbers: the run's model, tokens and the target's label.
struct AttributionContext {
  std::string model;                    ///< the model's name
  Tokens tokens;                        ///< the input's labels, every position
  std::vector<std::int32_t> token_ids;  ///< the input, every position
  std::string target_token;             ///< the target's label (as the pictures show it)
};

/// One JSON document (ending in a newline), numbers at full double precision. Fields:
/// format "attnviz.attribution", model, tokens, token_ids, position, position_token, target_id,
/// target_token, logit, logit_capped (a soft-capping model only), log_prob, dla [layer][head], dla_mlp [layer], dla_embedding,
/// dla_position (learned positions only), dla_attn_bias [layer], dla_mlp_bias [layer],
/// dla_final_norm_bias, ablation [layer][head]; for an encoder-decoder (the decoder's self-attention
/// heads in dla and ablation) also source_tokens, source_ids, dla_cross [layer][head],
/// dla_cross_bias [layer], dla_output_bias, ablation_cross [layer][head] and
/// ablation_encoder [encoder layer][head].
std::string attribution_to_json(const HeadAttribution& attribution, const AttributionContext& context);

}  // namespace attnviz
