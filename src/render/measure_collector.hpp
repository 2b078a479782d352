// What --measure alti --rollout and --flow keep across a whole model's layers (issue 20): the
// running ALTI product R_l = C_l ⋯ C_0 (every layer's, for the dump's `alti_rollout`) and the
// layers' Â_l for attention flow (computed once all layers are in). Fed one block at a time,
// as RolloutCollector is; never every layer's weights.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "analysis/alti.hpp"
#include "analysis/attention_flow.hpp"
#include "model/model_run.hpp"
#include "render/picture_settings.hpp"

namespace attnviz {

class MeasureCollector {
 public:
  explicit MeasureCollector(const ModelPictureSettings& options);

  /// Whether the options ask for anything this collects.
  bool active() const { return alti_rollout_ || flow_; }
  /// Takes `block`'s ALTI (into the product) and head-mean weights (for the flow). Throws
  /// UsageError naming --flow or --rollout for a cross-attention block, an encoder-decoder, a
  /// layer out of order, or (--flow) more than kMaxFlowTokens tokens.
  void add(const AttentionBlock& block);
  /// Bytes kept over `tokens` tokens and `layers` layers: Â_l for flow, every R_l as text.
  static double kept_bytes(const ModelPictureSettings& options, long tokens, int layers);

  /// The dump's top-level fields, name and JSON text: `alti_rollout` [layer][query][key] and
  /// `attention_flow` [query][key], as asked. Computes the flow (n² max-flows).
  std::vector<std::pair<std::string, std::string>> dump_fields() const;
  /// flow.png: the flow from each input token to each position after the last layer. PNG bytes.
  std::string render_flow_png(const ModelRunInfo& info, const ModelPictureSettings& options, double memory_budget,
                              std::vector<std::string>& warnings) const;

 private:
  void check_block(const AttentionBlock& block, const char* flag, int expected_layer) const;

  bool alti_rollout_, flow_;
  AltiRollout rollout_;
  std::vector<Eigen::MatrixXd> alti_rollouts_;  ///< R_l of every layer so far
  AttentionFlow attention_flow_;
  Tokens tokens_;
  MaskMatrix allowed_;
};

}  // namespace attnviz
