// The HTML report of a model run taken head by head (issue 23: "the HTML report must finish" at
// 8192 tokens in 1 GiB): each head is kept as the page will show it, exactly when the text has
// at most kReportMaxSide tokens, else max-pooled in b × b blocks (b = ⌈n / kReportMaxSide⌉) with
// the page's title saying so, and the layer's views are made when it closes.
#pragma once

#include <string>
#include <vector>

#include "attention/attention_record.hpp"
#include "cli/options.hpp"
#include "render/html_report.hpp"

namespace attnviz {

/// Longest side, in cells, of a matrix the HTML report embeds from a model run taken head by
/// head: beyond it the page shows b × b blocks (8192 tokens: 16 × 16 tokens a cell).
inline constexpr long kReportMaxSide = 512;

/// The tokens' block that pooled cell `i` stands for, as its label: "#16–31 ▁the…" names the first
/// and last position and the first token's text.
std::string pooled_label(const Tokens& tokens, long i, long block);

/// A record of ⌈n_q/b⌉ × ⌈n_k/b⌉ cells from `record` (weights empty) and its heads' pooled
/// weights: block labels as tokens, the causal mask on blocks (a block is allowed when any of its
/// cells is), the prompt's end at the block that holds it; no sliding window (its cells are 0
/// inside the blocks they share).
AttentionRecord pooled_record(const AttentionRecord& record, std::vector<Matrix> pooled, long block);

class ReportHeads {
 public:
  /// `max_side`: kReportMaxSide, smaller in tests.
  explicit ReportHeads(long max_side = kReportMaxSide) : max_side_(max_side) {}
  /// Head `head` of `record` (heads in order from 0), kept exactly or max-pooled.
  void add_head(const AttentionRecord& record, int head, const Matrix& weights);
  /// The block's views (heatmap_report_views) from what add_head kept; a pooled view's title
  /// ends with what a cell is. Throws as heatmap_report_views.
  std::vector<ReportView> finish(const AttentionRecord& record, const Options& options, const std::string& name,
                                 double memory_budget, const std::string& block);
  /// Values the page holds for a run of `tokens` tokens, `layers` × `heads` heads.
  static double kept_values(long tokens, int layers, int heads, long max_side = kReportMaxSide);
  /// The side b of the blocks the last block's heads were pooled in (1: exact).
  long pooled_block() const { return block_; }
  long max_side() const { return max_side_; }

 private:
  long max_side_;
  long block_ = 1;
  std::vector<Matrix> heads_;
};

}  // namespace attnviz
