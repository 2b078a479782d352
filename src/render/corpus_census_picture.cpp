// census.png of a corpus census (census/corpus_census): the one-text census's layer × head panels, one per statistic,
// showing the means over the texts, the number of texts in the title; one part per kind of block.
#include <algorithm>

#include "census/corpus_census.hpp"
#include "core/error.hpp"
#include "render/head_grid.hpp"
#include "render/picture_fonts.hpp"
#include "render/png.hpp"

namespace attnviz {

namespace {

// Panel titles of the picture, one per statistic (as the one-text census titles them).
const std::vector<std::string>& statistic_titles() {
  static const std::vector<std::string> titles = {
      "entropy (nats)", "H / ln k", "max weight", "mean distance (tokens)", "diagonal (self) mass",
      "previous-token mass", "first-token mass", "induction score", "sink rate (α1 > ε)",
      "previous_token_score (TL)", "duplicate_token_score (TL)", "induction_score_tl (TL)"};
  return titles;
}

// Statistics from mean_distance on are defined for self-attention only (add_block_statistics).
constexpr std::size_t kFirstSelfOnlyStatistic = 3;

}  // namespace

std::vector<GridRequest> corpus_census_requests(const CorpusCensus& census, const PictureSettings& options,
                                                 std::vector<std::string>& warnings) {
  const std::vector<CensusHead>& heads_ = census.heads();
  const std::vector<std::vector<RunningStat>>& stats_ = census.stats();
  std::vector<std::string> blocks;  // "" or enc/dec/cross, in order
  for (const CensusHead& h : heads_) {
    const std::string b = h.stack.empty() ? "" : block_name(h.stack, h.kind);
    if (std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.push_back(b);
  }
  std::vector<GridRequest> requests;
  for (const std::string& block : blocks) {
    std::vector<int> layers;
    int num_heads = 0;
    for (const CensusHead& h : heads_) {
      if ((h.stack.empty() ? "" : block_name(h.stack, h.kind)) != block) continue;
      if (std::find(layers.begin(), layers.end(), h.layer) == layers.end()) layers.push_back(h.layer);
      num_heads = std::max(num_heads, h.head + 1);
    }
    std::sort(layers.begin(), layers.end());
    GridRequest request;
    for (int l : layers) request.query_tokens.push_back((block.empty() ? "" : block + ".") + "L" + std::to_string(l));
    for (int h = 0; h < num_heads; ++h) request.key_tokens.push_back("H" + std::to_string(h));
    const auto n_layers = static_cast<Eigen::Index>(layers.size());
    // Every statistic gets its panel, each with its own cells: a head where the statistic is
    // defined on no text (the induction score of texts that repeat no token) is a masked cell,
    // never a 0, and a statistic defined on no text at all is an empty panel that says so.
    bool any_value = false;
    std::string undefined;
    for (std::size_t s = 0; s < corpus_statistic_names().size(); ++s) {
      Matrix table = Matrix::Zero(n_layers, num_heads);
      MaskMatrix defined = MaskMatrix::Zero(n_layers, num_heads);
      for (std::size_t h = 0; h < heads_.size(); ++h) {
        const CensusHead& head = heads_[h];
        if ((head.stack.empty() ? "" : block_name(head.stack, head.kind)) != block || stats_[h][s].count == 0) continue;
        const auto l = static_cast<Eigen::Index>(std::find(layers.begin(), layers.end(), head.layer) - layers.begin());
        table(l, head.head) = static_cast<Scalar>(stats_[h][s].mean);
        defined(l, head.head) = 1;
      }
      const bool any = defined.any();
      any_value = any_value || any;
      // Cross-attention has no positions to compare (queries and keys are other tokens): the
      // positional statistics, the sink and the detectors are self-attention's only, by design.
      const bool self_only = block == "cross" && s >= kFirstSelfOnlyStatistic;
      if (!any && !self_only) undefined += (undefined.empty() ? "" : ", ") + corpus_statistic_names()[s];
      request.panels.push_back(share(std::move(table)));
      request.panel_titles.push_back(statistic_titles()[s] + (any ? "" : self_only ? ": self-attention only" : ": defined on no text"));
      request.panel_allowed.push_back(share(std::move(defined)));
    }
    if (!any_value) continue;
    if (!undefined.empty())
      warnings.push_back("census.png: " + undefined + (block.empty() ? "" : " (" + block_description(block) + ")") +
                         " defined on no text: drawn as an empty panel");
    request.query_axis_title = "layer";
    request.key_axis_title = "head";
    request.figure_title = "head census \u00B7 " + census.model_name + " \u00B7 mean over " + std::to_string(census.texts()) +
                           (census.texts() == 1 ? " text" : " texts") + (block.empty() ? "" : " \u00B7 " + block_description(block));
    request.colorbar_label = "mean of the statistic over the texts";
    request.scale = ScaleMode::Head;
    request.panel_noun = "statistic";
    request.cmap = options.cmap.empty() ? "viridis" : options.cmap;
    request.cols = options.cols > 0 ? options.cols : 4;
    request.max_size_px = options.max_size_px;
    request.annotate = true;
    requests.push_back(std::move(request));
  }
  return requests;
}

std::string corpus_census_png(const CorpusCensus& census, const PictureSettings& options, std::vector<std::string>& warnings) {
  const FontSet fonts = picture_fonts(options);
  std::vector<Image> parts;
  for (const GridRequest& request : corpus_census_requests(census, options, warnings)) {
    RenderedGrid grid = render_grid(request, fonts);
    for (const std::string& w : grid.warnings) warnings.push_back("census.png: " + w);
    parts.push_back(std::move(grid.image));
  }
  if (parts.empty()) throw InputError::inconsistent("census", "no head has a value to draw");
  return encode_png(parts.size() == 1 ? parts.front() : stack_vertically(parts, Rgb{255, 255, 255}), "census.png");
}

}  // namespace attnviz
