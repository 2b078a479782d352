#include "io/attribution_json.hpp"

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
  return doc.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace attnviz
