#include "cli/overview_job.hpp"

#include <algorithm>

#include "attention/head_stats.hpp"
#include "render/font.hpp"
#include "render/overview.hpp"
#include "render/png.hpp"
#include "render/utf8.hpp"

namespace attnviz {

std::string title_text(const std::string& text, std::size_t max) {
  const std::u32string code_points = decode_utf8(text);
  if (code_points.size() <= max) return "\u201C" + text + "\u201D";
  return "\u201C" + encode_utf8(std::u32string_view(code_points).substr(0, max)) + "\u2026\u201D";
}

void OverviewCollector::add(const AttentionBlock& block) {
  const AttentionRecord& record = block.record;
  if (maps_.empty()) {
    stack_ = block.stack;
    kind_ = block.kind;
    n_q_ = static_cast<long>(record.query_tokens.size());
    n_k_ = static_cast<long>(record.key_tokens.size());
    num_heads_ = record.num_heads;
    const int per_side = overview_cells_per_side(num_heads_ + 1, options_.max_size_px);
    base_block_ = static_cast<int>((std::max(n_q_, n_k_) + per_side - 1) / per_side);
  }
  if (block.stack != stack_ || block.kind != kind_ || record.num_heads != num_heads_) {
    skipped_.push_back(block.stack + " layer " + std::to_string(block.layer) + " " + block.kind + "-attention");
    return;
  }
  const MaskMatrix allowed = record.allowed();
  std::vector<DrawnCells> heads;
  for (const Matrix& w : record.weights) heads.push_back(aggregate_cells(w, allowed, base_block_, false));
  maps_.push_back(std::move(heads));
  means_.push_back(aggregate_cells(mean_over_heads(record.weights), allowed, base_block_, false));
  row_labels_.push_back("L" + std::to_string(block.layer));
}

std::string OverviewCollector::render_png(const ModelRunInfo& info, double memory_budget,
                                          std::vector<std::string>& warnings) const {
  OverviewRequest request;
  request.row_labels = row_labels_;
  for (int h = 0; h < num_heads_; ++h) request.column_labels.push_back("H" + std::to_string(h));
  request.maps = maps_;
  request.means = means_;
  request.mean_label = "mean of " + std::to_string(num_heads_) + (num_heads_ == 1 ? " head" : " heads");
  request.n_q = n_q_;
  request.n_k = n_k_;
  request.base_block = base_block_;
  request.figure_title = info.model.name + " \u00B7 " + std::to_string(maps_.size()) + " layers \u00D7 " +
                         std::to_string(num_heads_) + " heads \u00B7 " + kind_ + "-attention \u00B7 " +
                         title_text(info.text.empty() ? info.model.name : info.text);
  request.cmap = options_.cmap.empty() ? "viridis" : options_.cmap;
  request.max_size_px = options_.max_size_px;
  request.max_memory_bytes = memory_budget;
  const FontSet fonts = options_.fonts.empty() ? FontSet() : FontSet(options_.fonts);
  const RenderedOverview overview = render_overview(request, fonts);
  if (overview.block > 1) warnings.push_back("overview.png: " + overview.notes[1]);
  if (!skipped_.empty()) {
    warnings.push_back("overview.png shows the " + stack_ + "'s " + kind_ + "-attention only (not " + skipped_.front() +
                       (skipped_.size() > 1 ? " and " + std::to_string(skipped_.size() - 1) + " more" : "") + ")");
  }
  return encode_png(overview.image, "overview.png");
}

}  // namespace attnviz
