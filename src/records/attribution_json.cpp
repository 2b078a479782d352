#include "records/attribution_json.hpp"

#include <nlohmann/json.hpp>

namespace attnviz {

namespace {

constexpr const char* kFormatName = "attnviz.attribution";

}  // namespace

std::string attribution_to_json(const HeadAttribution& a, const AttributionContext& context) {
  const auto position = static_cast<std::size_t>(a.position);
  nlohmann::ordered_json doc = {{"format", kFormatName},
                                {"model", context.model},
                                {"tokens", context.tokens},
                                {"token_ids", context.token_ids},
                                {"position", a.position},
                                {"position_token", position < context.tokens.size() ? context.tokens[position] : ""},
                                {"target_id", a.target_id},
                                {"target_token", context.target_token},
                                {"logit", a.logit}};
  if (a.logit_capped) doc["logit_capped"] = *a.logit_capped;
  doc["log_prob"] = a.log_prob;
  doc["dla"] = a.dla.heads;
  doc["dla_mlp"] = a.dla.mlp;
  doc["dla_embedding"] = a.dla.embedding;
  if (a.dla.position) doc["dla_position"] = *a.dla.position;
  doc["dla_attn_bias"] = a.dla.attn_bias;
  doc["dla_mlp_bias"] = a.dla.mlp_bias;
  doc["dla_final_norm_bias"] = a.dla.final_norm_bias;
  doc["ablation"] = a.ablation;
  if (a.encoder_decoder) {
    // The decoder's self-attention heads are dla and ablation above (dec.LlHh); its
    // cross-attention heads (cross.LlHh) and the encoder's (enc.LlHh) follow.
    const EncoderDecoderAttribution& e = *a.encoder_decoder;
    doc["source_tokens"] = e.source_tokens;
    doc["source_ids"] = e.source_ids;
    doc["dla_cross"] = e.dla_cross;
    doc["dla_cross_bias"] = e.dla_cross_bias;
    doc["dla_output_bias"] = e.dla_output_bias;
    doc["ablation_cross"] = e.ablation_cross;
    doc["ablation_encoder"] = e.ablation_encoder;
  }
  return doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace attnviz
