#include "cli/report_heads.hpp"

#include <algorithm>

#include "cli/heatmap_job.hpp"
#include "render/overview_collector.hpp"

namespace attnviz {

namespace {

long pooled_side(long n, long block) { return (n + block - 1) / block; }

}  // namespace

std::string pooled_label(const Tokens& tokens, long i, long block) {
  const long first = i * block, last = std::min<long>(static_cast<long>(tokens.size()), first + block) - 1;
  return "#" + std::to_string(first) + "\u2013" + std::to_string(last) + " " + tokens[static_cast<std::size_t>(first)] + "\u2026";
}

AttentionRecord pooled_record(const AttentionRecord& record, std::vector<Matrix> pooled, long block) {
  AttentionRecord r = record;
  r.query_tokens.clear();
  r.key_tokens.clear();
  for (long i = 0; i < pooled_side(static_cast<long>(record.query_tokens.size()), block); ++i)
    r.query_tokens.push_back(pooled_label(record.query_tokens, i, block));
  for (long j = 0; j < pooled_side(static_cast<long>(record.key_tokens.size()), block); ++j)
    r.key_tokens.push_back(pooled_label(record.key_tokens, j, block));
  r.query_mask.clear();
  r.key_mask.clear();
  r.fully_masked_rows.clear();
  r.sliding_window = 0;
  // The prompt's end falls inside block ⌊p / b⌋ or at its start: marked after the blocks wholly in it.
  r.prompt_length = static_cast<int>(record.prompt_length / block);
  r.weights = std::move(pooled);
  r.num_heads = static_cast<int>(r.weights.size());
  return r;
}

void ReportHeads::add_head(const AttentionRecord& record, int head, const Matrix& weights) {
  if (head == 0) {
    heads_.clear();
    const long n = std::max<long>(static_cast<long>(record.query_tokens.size()), static_cast<long>(record.key_tokens.size()));
    block_ = pooled_side(n, max_side_);
  }
  heads_.push_back(block_ == 1 ? weights : max_pool_cells(weights, static_cast<int>(block_)));
}

std::vector<ReportView> ReportHeads::finish(const AttentionRecord& record, const Options& options, const std::string& name,
                                            double memory_budget, const std::string& block) {
  std::vector<ReportView> views;
  if (block_ == 1) {
    AttentionRecord whole = record;
    whole.weights = std::move(heads_);
    views = heatmap_report_views(whole, options, name, memory_budget, block);
  } else {
    const AttentionRecord pooled = pooled_record(record, std::move(heads_), block_);
    views = heatmap_report_views(pooled, options, name, memory_budget, block);
    const std::string b = std::to_string(block_);
    for (ReportView& view : views)
      view.figure_title += " \u00B7 each cell: the max over " + b + " \u00D7 " + b + " tokens (" +
                           std::to_string(record.query_tokens.size()) + " tokens; the page shows at most " +
                           std::to_string(max_side_) + " cells a side)";
  }
  heads_.clear();
  return views;
}

double ReportHeads::kept_values(long tokens, int layers, int heads, long max_side) {
  const double side = static_cast<double>(pooled_side(tokens, pooled_side(tokens, max_side)));
  return static_cast<double>(layers) * heads * side * side;
}

}  // namespace attnviz
