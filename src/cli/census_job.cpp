#include "cli/census_job.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>

#include "cli/measure_job.hpp"
#include "cli/overview_job.hpp"
#include "cli/picture_fonts.hpp"
#include "cli/picture_formats.hpp"
#include "core/error.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/html_report.hpp"
#include "render/png.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

namespace attnviz {

namespace {

// The query rows statistics use: not padding, not fully masked.
std::vector<long> statistic_rows(const AttentionRecord& record, const MaskMatrix& allowed) {
  std::vector<long> skipped = record.fully_masked_rows;
  for (std::size_t i = 0; i < record.query_mask.size(); ++i)
    if (record.query_mask[i] == 0) skipped.push_back(static_cast<long>(i));
  return rows_for_statistics(static_cast<long>(record.query_tokens.size()), allowed, skipped);
}

// A statistic of the picture: its title and how to read it from a row.
struct Statistic {
  const char* title;
  std::function<std::optional<double>(const CensusRow&)> value;
};

std::vector<Statistic> statistics(bool induction) {
  std::vector<Statistic> list = {
      {"entropy (nats)", [](const CensusRow& r) { return std::optional<double>(r.stats.entropy_mean); }},
      {"H / ln k", [](const CensusRow& r) { return r.stats.entropy_normalised_mean; }},
      {"max weight", [](const CensusRow& r) { return std::optional<double>(r.stats.max_weight_mean); }},
      {"mean distance (tokens)", [](const CensusRow& r) { return r.stats.mean_distance; }},
      {"diagonal (self) mass", [](const CensusRow& r) { return r.stats.diagonal_mass; }},
      {"previous-token mass", [](const CensusRow& r) { return r.stats.previous_mass; }},
      {"first-token mass", [](const CensusRow& r) { return r.stats.first_token_mass; }}};
  if (induction) list.push_back({"induction score", [](const CensusRow& r) { return r.induction; }});
  return list;
}

// The block of a row: "" (decoder-only), "enc", "dec" or "cross".
std::string block_of(const CensusRow& row) { return row.stack.empty() ? "" : block_name(row.stack, row.kind); }

// What a block name stands for ("encoder self-attention"), for the picture's titles.
std::string block_description(const std::string& block) {
  for (const BlockName& b : block_names())
    if (block == b.name) return b.description;
  return block;
}

const Rgb kBackground{255, 255, 255};  // between stacked parts, as the grids' own background

}  // namespace

std::vector<CensusRow> census_of_block(const AttentionBlock& block) {
  const AttentionRecord& record = block.record;
  const MaskMatrix allowed = record.allowed();
  const std::vector<long> rows = statistic_rows(record, allowed);
  std::vector<CensusRow> census;
  if (rows.empty()) return census;
  for (int h = 0; h < record.num_heads; ++h)
    census.push_back(census_of_head(block, h, record.weights[static_cast<std::size_t>(h)], allowed, rows));
  return census;
}

CensusRow census_of_head(const AttentionBlock& block, int head, const Matrix& weights, const MaskMatrix& allowed,
                         const std::vector<long>& rows) {
  return census_row(block, head, {weights}, allowed, rows);
}

CensusRow census_row(const AttentionBlock& block, int head, const std::vector<Matrix>& one_head, const MaskMatrix& allowed,
                     const std::vector<long>& rows) {
  const Matrix& weights = one_head.front();
  const bool self = block.record.mode == "self";
  CensusRow row;
  if (block.encoder_decoder) {
    row.stack = block.stack;
    row.kind = block.kind;
  }
  row.layer = block.layer;
  row.head = head;
  row.stats = head_statistics(one_head, allowed, rows, self).front();
  row.stats.argmax_keys.clear();
  if (self) row.induction = induction_score(weights, block.record.query_tokens, rows);
  return row;
}

std::string census_head_name(const CensusRow& row) { return model_head_name(block_of(row), row.layer, row.head); }

void CensusCollector::add(const AttentionBlock& block) {
  if (block.record.weights.empty()) {  // its heads came one at a time (add_head)
    head_rows_.reset();
    head_allowed_ = MaskMatrix();
  } else {
    std::vector<CensusRow> rows = census_of_block(block);
    rows_.insert(rows_.end(), rows.begin(), rows.end());
  }
  num_heads_ = std::max(num_heads_, block.record.num_heads);
  blocks_.push_back({block.block_name(), block.layer});
}

void CensusCollector::add_head(const AttentionBlock& block, int head, Matrix& weights) {
  if (head == 0 || !head_rows_) {  // the block's mask and rows, once for its heads
    head_allowed_ = block.record.allowed();
    head_rows_ = statistic_rows(block.record, head_allowed_);
  }
  if (head_rows_->empty()) return;
  // Lent to the statistics as a one-head stack and given back: no copy of n² weights.
  std::vector<Matrix> one_head(1);
  one_head.front().swap(weights);
  rows_.push_back(census_row(block, head, one_head, head_allowed_, *head_rows_));
  weights.swap(one_head.front());
}

bool CensusCollector::has_induction() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const CensusRow& r) { return r.induction.has_value(); });
}

std::string CensusCollector::file_text(const std::string& path) const {
  return census_format(path) == ".csv" ? census_to_csv(rows_) : census_to_json(rows_);
}

TextTable CensusCollector::text_table() const {
  // Split from census_to_csv itself: the cells cannot drift from the file's (its fields hold no
  // commas: numbers, head numbers, stack and kind names).
  TextTable table;
  table.title = "head census (as census.csv: statistics over each head's real, not fully masked query rows)";
  const std::string csv = census_to_csv(rows_);
  std::size_t start = 0;
  while (start < csv.size()) {
    const std::size_t end = csv.find('\n', start);
    std::vector<std::string> cells;
    std::size_t from = start;
    for (std::size_t comma; (comma = csv.find(',', from)) < end; from = comma + 1) cells.push_back(csv.substr(from, comma - from));
    cells.push_back(csv.substr(from, end - from));
    if (table.header.empty()) table.header = std::move(cells);
    else table.rows.push_back(std::move(cells));
    start = end + 1;
  }
  return table;
}

// One part of the picture: the layers of the blocks named `block`, a table per statistic that
// has values for them (cross-attention has no positional statistics).
GridRequest CensusCollector::picture_request(const std::string& block, const ModelRunInfo& info,
                                             const Options& options) const {
  std::vector<int> layers;
  for (const Block& b : blocks_)
    if (b.name == block) layers.push_back(b.layer);
  GridRequest request;
  const std::string prefix = block.empty() ? "" : block + ".";
  for (int layer : layers) request.query_tokens.push_back(prefix + "L" + std::to_string(layer));
  for (int h = 0; h < num_heads_; ++h) request.key_tokens.push_back("H" + std::to_string(h));
  const auto n_layers = static_cast<Eigen::Index>(layers.size());
  MaskMatrix allowed = MaskMatrix::Zero(n_layers, num_heads_);
  for (const Statistic& statistic : statistics(has_induction())) {
    Matrix table = Matrix::Zero(n_layers, num_heads_);
    bool any = false;
    for (const CensusRow& row : rows_) {
      if (block_of(row) != block) continue;
      const auto l = static_cast<Eigen::Index>(std::find(layers.begin(), layers.end(), row.layer) - layers.begin());
      const std::optional<double> value = statistic.value(row);
      if (!value) continue;
      table(l, row.head) = static_cast<Scalar>(*value);
      allowed(l, row.head) = 1;
      any = true;
    }
    if (!any) continue;  // cross-attention: no positional statistics
    request.panels.push_back(share(std::move(table)));
    request.panel_titles.push_back(statistic.title);
  }
  request.allowed = share(std::move(allowed));
  request.query_axis_title = "layer";
  request.key_axis_title = "head";
  request.figure_title = "head census \u00B7 " + info.model.name + " \u00B7 " +
                         run_text_title(info) +
                         (has_induction() ? "" : " \u00B7 no repeated token: no induction score") +
                         (block.empty() ? "" : " \u00B7 " + block_description(block)) + measure_title_note(options.measure);
  request.colorbar_label = "value of the statistic";
  request.scale = ScaleMode::Head;
  request.panel_noun = "statistic";
  request.cmap = options.cmap.empty() ? "viridis" : options.cmap;
  request.cols = options.cols > 0 ? options.cols : 4;
  request.max_size_px = options.max_size_px;
  request.annotate = true;
  return request;
}

std::vector<GridRequest> CensusCollector::picture_requests(const ModelRunInfo& info, const Options& options,
                                                           double memory_budget) const {
  std::vector<std::string> names;  // in the order the model ran them
  for (const Block& b : blocks_)
    if (std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);
  std::vector<GridRequest> requests;
  for (const std::string& name : names) {
    GridRequest request = picture_request(name, info, options);
    // Stacked parts share the picture's height and, with the stacked copy, the memory budget.
    if (names.size() > 1) request.max_height_px = std::max(1, options.max_size_px / static_cast<int>(names.size()));
    request.max_memory_bytes = names.size() > 1 ? memory_budget / static_cast<double>(names.size() + 1) : memory_budget;
    requests.push_back(std::move(request));
  }
  return requests;
}

std::string CensusCollector::render_png(const ModelRunInfo& info, const Options& options, double memory_budget,
                                        std::vector<std::string>& warnings) const {
  const FontSet fonts = picture_fonts(options);
  std::vector<Image> parts;
  for (const GridRequest& request : picture_requests(info, options, memory_budget)) {
    RenderedGrid grid = render_grid(request, fonts);
    for (const std::string& w : grid.warnings) warnings.push_back(options.output + ": " + w);
    parts.push_back(std::move(grid.image));
  }
  if (parts.size() == 1) return encode_png(parts.front(), options.output);
  return encode_png(stack_vertically(parts, kBackground), options.output);
}

void CensusCollector::add_pictures(const ModelRunInfo& info, const Options& options, double memory_budget,
                                   OutputSet& files, std::vector<std::string>& warnings) const {
  if (wants_format(options, "png")) files.add(options.output, render_png(info, options, memory_budget, warnings));
  const bool svg = wants_format(options, "svg"), html = wants_format(options, "html");
  if (!svg && !html) return;
  const FontSet fonts = picture_fonts(options);
  const std::vector<GridRequest> requests = picture_requests(info, options, memory_budget);
  if (svg) {
    std::vector<SvgPicture> parts;
    for (std::size_t i = 0; i < requests.size(); ++i) parts.push_back(grid_svg(requests[i], fonts, "p" + std::to_string(i)));
    files.add(with_extension(options.output, ".svg"), svg_document(parts));
  }
  if (html) {
    ReportPage page{requests.front().figure_title, {}, false};
    for (const GridRequest& request : requests) {
      // A view per kind of block, named by it (its rows say "enc.L0"); "census" for a decoder.
      const std::string& first_row = request.query_tokens.front();
      const std::size_t dot = first_row.find('.');
      const std::string name = dot == std::string::npos ? "census" : block_description(first_row.substr(0, dot));
      page.views.push_back(report_view(request, fonts, name, request.panel_titles));
    }
    page.tables.push_back(text_table());  // the numbers themselves, as census.csv has them
    files.add(with_extension(options.output, ".html"), html_report(page));
  }
}

std::string census_format(const std::string& path, const std::string& option) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension != ".json" && extension != ".csv")
    throw UsageError::bad_option(option, "the file name must end in .csv or .json, got \"" + path + "\"");
  return extension;
}

}  // namespace attnviz
