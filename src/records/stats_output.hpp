// Saving `compare` statistics: --stats FILE.json (everything, including each row's argmax
// key and the divergence matrix) or FILE.csv (one line per head). Formatting only.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "attention/head_stats.hpp"
#include "core/types.hpp"

namespace attnviz {

/// The statistics of one compare run, as saved.
struct StatsReport {
  std::vector<std::string> head_names;  ///< e.g. "L0H3", or "A:L0H3" / "B:L0H3" for two runs
  std::vector<HeadStats> stats;         ///< one per head, same order
  Eigen::MatrixXd divergence;           ///< JS divergence in nats, heads × heads
  Tokens query_tokens, key_tokens;      ///< for naming argmax keys
};

/// JSON: {"units": …, "heads": [{"head": "L0H3", "entropy_mean": …, "argmax_keys": [...]}, …],
/// "js_divergence": {"heads": [...], "matrix": [[...]]}}.
std::string stats_to_json(const StatsReport& report);

/// CSV with a header line; one line per head; self-attention columns empty for cross-attention,
/// and a statistic empty where it is undefined (see head_stat_fields);
/// then one js_<head> column per head.
std::string stats_to_csv(const StatsReport& report);

}  // namespace attnviz
