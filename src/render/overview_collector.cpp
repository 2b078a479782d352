#include "render/overview_collector.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <thread>

#include "core/counted.hpp"
#include "core/parallel_for.hpp"
#include "core/product_threads.hpp"
#include "core/utf8.hpp"
#include "render/font.hpp"
#include "render/overview.hpp"
#include "render/picture_fonts.hpp"
#include "render/png.hpp"

namespace attnviz {

std::string title_text(const std::string& text, std::size_t max) {
  std::u32string code_points = decode_utf8(text);
  const bool cut = code_points.size() > max;
  if (cut) code_points.resize(max);
  // A title is one line: line breaks and tabs are shown as the labels show them, other control
  // characters as spaces.
  std::u32string shown;
  for (const char32_t c : code_points) {
    if (c == U'\n') shown += U'\u21B5';
    else if (c == U'\t') shown += U'\u21E5';
    else shown += c < 0x20 || c == 0x7f ? U' ' : c;
  }
  return "\u201C" + encode_utf8(shown) + (cut ? "\u2026\u201D" : "\u201D");
}

std::string run_text_title(const ModelRunInfo& info) {
  if (!info.source_tokens.empty()) {
    return (info.source_text.empty() ? std::string() : title_text(info.source_text) + " \u2192 ") + title_text(info.text);
  }
  return info.text.empty() ? "empty text" : title_text(info.text);
}

namespace {

// The max over block × block blocks of `w`, as aggregate_cells draws it but 10× faster, without
// looking at the mask: a record's weights are ≥ 0 and exactly 0 on masked cells (its
// invariant), so the max over every cell of a block is the max over its allowed cells.
Matrix max_pool(const Matrix& w, int block) {
  const Eigen::Index rows = (w.rows() + block - 1) / block, cols = (w.cols() + block - 1) / block;
  Matrix pooled(rows, cols);                                                   // [⌈n_q/b⌉, ⌈n_k/b⌉]
  for (Eigen::Index bi = 0; bi < rows; ++bi) {
    const Eigen::Index r0 = bi * block, r_count = std::min<Eigen::Index>(block, w.rows() - r0);
    for (Eigen::Index bj = 0; bj < cols; ++bj) {
      const Eigen::Index c0 = bj * block, c_count = std::min<Eigen::Index>(block, w.cols() - c0);
      pooled(bi, bj) = w.block(r0, c0, r_count, c_count).maxCoeff();
    }
  }
  return pooled;
}

}  // namespace

Matrix max_pool_cells(const Matrix& w, int block) { return max_pool(w, block); }

double OverviewCollector::kept_bytes(const ModelPictureSettings& options, long tokens, int layers, int heads) {
  constexpr double kCellBytes = sizeof(Scalar) + sizeof(std::uint8_t);
  const long side = std::min<long>(tokens, overview_cells_per_side(heads + 1, options.max_size_px));
  return 2.0 * layers * (heads + 1) * static_cast<double>(side) * static_cast<double>(side) * kCellBytes;
}

bool OverviewCollector::accepts(const AttentionBlock& block) {
  const AttentionRecord& record = block.record;
  if (maps_.empty() && pending_.empty()) {
    stack_ = block.stack;
    kind_ = block.kind;
    n_q_ = static_cast<long>(record.query_tokens.size());
    n_k_ = static_cast<long>(record.key_tokens.size());
    num_heads_ = record.num_heads;
    const int per_side = overview_cells_per_side(num_heads_ + 1, options_.max_size_px);
    base_block_ = static_cast<int>((std::max(n_q_, n_k_) + per_side - 1) / per_side);
  }
  return block.stack == stack_ && block.kind == kind_ && record.num_heads == num_heads_;
}

void OverviewCollector::skip(const AttentionBlock& block) {
  skipped_.push_back(block.stack + " layer " + std::to_string(block.layer) + " " + block.kind + "-attention");
}

void OverviewCollector::add_head(const AttentionBlock& block, int head, const Matrix& weights) {
  if (head == 0) pending_.clear();
  if (!accepts(block)) return;
  // As add() folds them: the sum over heads in head order, each head's max over blocks.
  if (head == 0) head_sum_ = weights;
  else head_sum_ += weights;
  pending_.push_back({max_pool(weights, base_block_), MaskMatrix()});
}

void OverviewCollector::add(const AttentionBlock& block) {
  const AttentionRecord& record = block.record;
  if (record.weights.empty()) return close_heads(block);
  if (!accepts(block)) return skip(block);
  // The mean first: aggregate_cells also tells which blocks have an allowed cell, the same
  // blocks for every head of the layer.
  Matrix sum = record.weights.front();
  for (std::size_t h = 1; h < record.weights.size(); ++h) sum += record.weights[h];
  DrawnCells mean = aggregate_cells(sum / static_cast<Scalar>(record.weights.size()), record.allowed(), base_block_, false);
  // Folding 32 heads of 2048² cells takes seconds on one core: heads go to all of them.
  std::vector<DrawnCells> heads(record.weights.size());
  std::exception_ptr failure;
  std::mutex failure_lock;
  // A thread per million cells folded (~10 ms on one core) at most: a short text's heads fold
  // faster than a thread starts.
  constexpr double kCellsPerThread = 1e6;
  const int budget = options_.threads > 0 ? options_.threads : static_cast<int>(std::thread::hardware_concurrency());
  const double cells = static_cast<double>(record.weights.size()) * static_cast<double>(record.weights.front().size());
  const int threads = threads_for_work(cells, budget, kCellsPerThread);
  parallel_for_blocks(heads.size(), threads, [&](std::size_t begin, std::size_t end) {
    try {
      for (std::size_t h = begin; h < end; ++h) heads[h] = {max_pool(record.weights[h], base_block_), mean.allowed};
    } catch (...) {  // bad_alloc: rethrown on the caller's thread
      const std::lock_guard<std::mutex> lock(failure_lock);
      failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
  keep(block, std::move(heads), std::move(mean));
}

void OverviewCollector::close_heads(const AttentionBlock& block) {
  const AttentionRecord& record = block.record;
  if (pending_.empty() || !accepts(block)) return skip(block);
  head_sum_ /= static_cast<Scalar>(pending_.size());  // in place: no second n² matrix (add()'s quotient, the same bits)
  DrawnCells mean = aggregate_cells(head_sum_, record.allowed(), base_block_, false);
  head_sum_ = Matrix();
  for (DrawnCells& head : pending_) head.allowed = mean.allowed;
  keep(block, std::move(pending_), std::move(mean));
  pending_.clear();
}

void OverviewCollector::keep(const AttentionBlock& block, std::vector<DrawnCells> heads, DrawnCells mean) {
  maps_.push_back(std::move(heads));
  means_.push_back(std::move(mean));
  row_labels_.push_back("L" + std::to_string(block.layer));
  if (block.record.sliding_window > 0)
    window_layers_.push_back("L" + std::to_string(block.layer) + " (" + std::to_string(block.record.sliding_window) + ")");
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
  request.figure_title = info.model.name + " \u00B7 " + counted(static_cast<long long>(maps_.size()), "layer") +
                         " \u00D7 " + counted(num_heads_, "head") + " \u00B7 " + kind_ + "-attention \u00B7 " +
                         (options_.measure == "norms" ? "norms \u2016\u03B1\u00B7f(x)\u2016, each row normalised to sum 1 \u00B7 " : "") +
                         run_text_title(info);
  request.cmap = options_.cmap.empty() ? "viridis" : options_.cmap;
  if (options_.measure == "norms") request.colorbar_label = "share of the row's \u2016\u03B1\u00B7f(x)\u2016";
  request.max_size_px = options_.max_size_px;
  request.max_memory_bytes = memory_budget;
  if (!window_layers_.empty()) {
    std::string layers;
    for (const std::string& l : window_layers_) layers += (layers.empty() ? "" : ", ") + l;
    request.mask_note = "sliding-window layers (window in tokens): " + layers + "; their cells outside the window are masked too";
  }
  const FontSet fonts = picture_fonts(options_);
  const RenderedOverview overview = render_overview(request, fonts);
  for (const std::string& warning : overview.warnings) warnings.push_back("overview.png: " + warning);
  if (!skipped_.empty()) {
    warnings.push_back("overview.png shows the " + stack_ + "'s " + kind_ + "-attention only (not " + skipped_.front() +
                       (skipped_.size() > 1 ? " and " + std::to_string(skipped_.size() - 1) + " more" : "") + ")");
  }
  return encode_png(overview.image, "overview.png");
}

}  // namespace attnviz
