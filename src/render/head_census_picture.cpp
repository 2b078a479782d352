#include "render/head_census_picture.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include "analysis/measures.hpp"
#include "render/font.hpp"
#include "render/html_report.hpp"
#include "render/overview_collector.hpp"
#include "render/picture_fonts.hpp"
#include "render/picture_formats.hpp"
#include "render/png.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

namespace attnviz {

namespace {

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

const Rgb kBackground{255, 255, 255};  // between stacked parts, as the grids' own background

// One part of the picture: the layers of the blocks named `block`, a table per statistic that
// has values for them (cross-attention has no positional statistics).
GridRequest picture_request(const CensusCollector& census, const std::string& block, const ModelRunInfo& info,
                            const ModelPictureSettings& options) {
  std::vector<int> layers;
  for (const CensusCollector::Block& b : census.blocks())
    if (b.name == block) layers.push_back(b.layer);
  GridRequest request;
  const std::string prefix = block.empty() ? "" : block + ".";
  for (int layer : layers) request.query_tokens.push_back(prefix + "L" + std::to_string(layer));
  for (int h = 0; h < census.num_heads(); ++h) request.key_tokens.push_back("H" + std::to_string(h));
  const auto n_layers = static_cast<Eigen::Index>(layers.size());
  MaskMatrix allowed = MaskMatrix::Zero(n_layers, census.num_heads());
  for (const Statistic& statistic : statistics(census.has_induction())) {
    Matrix table = Matrix::Zero(n_layers, census.num_heads());
    bool any = false;
    for (const CensusRow& row : census.rows()) {
      if (census_block(row) != block) continue;
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
                         (census.has_induction() ? "" : " \u00B7 no repeated token: no induction score") +
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

}  // namespace

TextTable head_census_table(const CensusCollector& census) {
  // Split from census_to_csv itself: the cells cannot drift from the file's (its fields hold no
  // commas: numbers, head numbers, stack and kind names).
  TextTable table;
  table.title = "head census (as census.csv: statistics over each head's real, not fully masked query rows)";
  const std::string csv = census_to_csv(census.rows());
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

std::vector<GridRequest> head_census_requests(const CensusCollector& census, const ModelRunInfo& info,
                                              const ModelPictureSettings& options, double memory_budget) {
  std::vector<std::string> names;  // in the order the model ran them
  for (const CensusCollector::Block& b : census.blocks())
    if (std::find(names.begin(), names.end(), b.name) == names.end()) names.push_back(b.name);
  std::vector<GridRequest> requests;
  for (const std::string& name : names) {
    GridRequest request = picture_request(census, name, info, options);
    // Stacked parts share the picture's height and, with the stacked copy, the memory budget.
    if (names.size() > 1) request.max_height_px = std::max(1, options.max_size_px / static_cast<int>(names.size()));
    request.max_memory_bytes = names.size() > 1 ? memory_budget / static_cast<double>(names.size() + 1) : memory_budget;
    requests.push_back(std::move(request));
  }
  return requests;
}

std::string head_census_png(const CensusCollector& census, const ModelRunInfo& info, const ModelPictureSettings& options,
                            const std::string& path, double memory_budget, std::vector<std::string>& warnings) {
  const FontSet fonts = picture_fonts(options);
  std::vector<Image> parts;
  for (const GridRequest& request : head_census_requests(census, info, options, memory_budget)) {
    RenderedGrid grid = render_grid(request, fonts);
    for (const std::string& w : grid.warnings) warnings.push_back(path + ": " + w);
    parts.push_back(std::move(grid.image));
  }
  if (parts.size() == 1) return encode_png(parts.front(), path);
  return encode_png(stack_vertically(parts, kBackground), path);
}

void add_head_census_pictures(const CensusCollector& census, const ModelRunInfo& info, const ModelPictureSettings& options,
                              const std::string& path, double memory_budget, OutputSet& files,
                              std::vector<std::string>& warnings) {
  if (wants_format(options, "png")) files.add(path, head_census_png(census, info, options, path, memory_budget, warnings));
  const bool svg = wants_format(options, "svg"), html = wants_format(options, "html");
  if (!svg && !html) return;
  const FontSet fonts = picture_fonts(options);
  const std::vector<GridRequest> requests = head_census_requests(census, info, options, memory_budget);
  if (svg) {
    std::vector<SvgPicture> parts;
    for (std::size_t i = 0; i < requests.size(); ++i) parts.push_back(grid_svg(requests[i], fonts, "p" + std::to_string(i)));
    files.add(with_extension(path, ".svg"), svg_document(parts));
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
    page.tables.push_back(head_census_table(census));  // the numbers themselves, as census.csv has them
    files.add(with_extension(path, ".html"), html_report(page));
  }
}

}  // namespace attnviz
