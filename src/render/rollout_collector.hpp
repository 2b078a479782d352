// --rollout for a whole-model run (issue 13): fed one block at a time, it keeps the running
// product R (n × n, attention/rollout), each layer's R as dump text when asked, and each
// layer's last-query row for the picture; never every layer's weights.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attention/rollout.hpp"
#include "model/model_run.hpp"
#include "render/head_grid.hpp"
#include "render/picture_settings.hpp"

namespace attnviz {

class RolloutCollector {
 public:
  /// keep_json: also build the dump's `rollout` [layer][query][key] text as layers arrive.
  RolloutCollector(const ModelPictureSettings& options, bool keep_json);

  /// R ← Â_l · R for the mean over `block`'s heads. Throws UsageError naming --rollout for a
  /// cross-attention block or a layer out of order (--layers leaving layers out).
  void add(const AttentionBlock& block);
  int layers() const { return rollout_.layers(); }

  /// What add() keeps over `tokens` tokens: R, Â, their product and the head mean (float64,
  /// n² each), and with keep_json the dump text of every layer's R (16 bytes a number at most).
  static double kept_bytes(long tokens, int layers, bool keep_json);

  /// The dump's `rollout_residual` value: α as the shortest text that reads back the same.
  std::string residual_json() const;
  /// The dump's `rollout` value: R_l for every layer, [layer][query][key].
  std::string json_text() const { return json_ + "\n  ]"; }
  /// The cells rollout.png shows (1) or masks (0): what the last layer masks except its sliding
  /// window (causal, padding), since flow through earlier layers reaches keys outside it.
  const MaskMatrix& picture_allowed() const { return allowed_; }

  /// rollout.png: the last layer's R over the tokens, and below it a strip of every layer's
  /// last-query row (how the final position's input mixes, layer by layer). PNG bytes.
  std::string render_png(const ModelRunInfo& info, double memory_budget, std::vector<std::string>& warnings) const;
  /// What rollout.png draws, as two grids: the last layer's R [n, n] and the strip [layers, n]
  /// of every layer's last-query row (the HTML report shows them as views). Requires layers() > 0.
  std::pair<GridRequest, GridRequest> requests(const ModelRunInfo& info, double memory_budget) const;

 private:
  ModelPictureSettings options_;
  bool keep_json_;
  Rollout rollout_;
  std::string json_;
  Tokens tokens_;
  MaskMatrix allowed_;
  std::vector<Eigen::RowVectorXd> last_rows_;  // [layer] R_l's last query row
};

}  // namespace attnviz
