#include "render/compare_figure.hpp"

#include <algorithm>
#include <filesystem>

#include "analysis/measures.hpp"
#include "attention/head_stats.hpp"
#include "core/counted.hpp"
#include "core/error.hpp"
#include "records/compare_stats.hpp"
#include "render/text_table.hpp"

namespace attnviz {

ComparePanels collect_panels(const std::vector<CompareRun>& runs, const std::vector<int>& heads, bool average) {
  ComparePanels p;
  for (int h : heads) {
    for (const CompareRun& run : runs) {
      p.weights.push_back(borrow(run.record.weights[h]));
      p.run_of.push_back(static_cast<std::size_t>(&run - runs.data()));
      p.titles.push_back(head_label(run, h));
    }
    if (runs.size() == 2) {
      p.differences.push_back(runs[0].record.weights[h] - runs[1].record.weights[h]);
      p.difference_titles.push_back(head_label(runs[0], h) + " − " + head_label(runs[1], h));
    }
  }
  if (average) {
    p.means.reserve(runs.size());  // p.weights borrows them: no reallocation
    for (const CompareRun& run : runs) {
      std::vector<Matrix> chosen;
      for (int h : heads) chosen.push_back(run.record.weights[h]);
      p.means.push_back(mean_over_heads(chosen));
      p.weights.push_back(borrow(p.means.back()));
      p.run_of.push_back(static_cast<std::size_t>(&run - runs.data()));
      p.titles.push_back((run.label.empty() ? "" : run.label + " · ") + "average of " +
                         counted(static_cast<long long>(heads.size()), "head") + " (mean)");
    }
    if (runs.size() == 2) {
      p.differences.push_back(p.means[0] - p.means[1]);
      p.difference_titles.push_back("A − B · average");
    }
  }
  if (runs.size() == 1 && heads.size() == 2) {
    const AttentionRecord& r = runs.front().record;
    p.differences.push_back(r.weights[heads[0]] - r.weights[heads[1]]);
    p.difference_titles.push_back(head_name(runs.front(), heads[0]) + " − " + head_name(runs.front(), heads[1]));
  }
  return p;
}

CompareMasks figure_masks(const std::vector<CompareRun>& runs, std::vector<std::string>& warnings) {
  CompareMasks masks;
  MaskMatrix both = runs.front().record.allowed();
  for (const CompareRun& run : runs) {
    masks.own.push_back(share(run.record.allowed()));
    both = both.cwiseMin(*masks.own.back());
  }
  masks.both = share(std::move(both));
  if (runs.size() != 2 || *masks.own[0] == *masks.own[1]) return masks;
  const MaskMatrix& a = *masks.own[0];
  const MaskMatrix& b = *masks.own[1];
  const bool a_only = ((a.array() == 0) && (b.array() != 0)).any();
  const bool b_only = ((b.array() == 0) && (a.array() != 0)).any();
  masks.one_run = share(MaskMatrix(((a.array() == 0) != (b.array() == 0)).cast<std::uint8_t>()));
  const auto file = [&](std::size_t r) { return std::filesystem::path(runs[r].record.inputs.front()).filename().string(); };
  if (a_only != b_only) {
    const std::size_t masker = a_only ? 0 : 1;
    masks.one_run_legend = "cross-hatched: masked by " + runs[masker].label + " only (" + runs[masker].label + " = " +
                           file(masker) + "), computed by " + runs[1 - masker].label + "; A − B is not drawn there";
  } else {
    masks.one_run_legend = "cross-hatched: masked by one run only (the other computed the cell); A − B is not drawn there";
  }
  warnings.push_back("the runs mask different cells (" + runs[0].record.inputs.front() + " and " +
                     runs[1].record.inputs.front() + "): each run is drawn with its own mask; cells masked in one run "
                     "only are cross-hatched, and A − B is not drawn there");
  return masks;
}

namespace {

GridRequest grid_request(const CompareRun& first, const ModelPictureSettings& options, const SharedMask& allowed, double budget) {
  GridRequest request;
  request.query_tokens = first.record.query_tokens;
  request.key_tokens = first.record.key_tokens;
  request.allowed = allowed;
  request.query_mask = first.record.query_mask;
  request.cmap = options.cmap.empty() ? "viridis" : options.cmap;
  request.scale = options.scale == "shared" ? ScaleMode::Shared : ScaleMode::Fixed;
  request.cols = options.cols;
  request.max_size_px = options.max_size_px;
  request.annotate = options.annotate;
  request.max_memory_bytes = budget;
  if (first.record.mode == "cross") {
    request.query_axis_title = "queries: target";
    request.key_axis_title = "keys: source";
  }
  return request;
}

// "stories260K · layer 0 · self-attention, causal": what a run is, leaving out what is unknown.
std::string run_description(const AttentionRecord& record) {
  std::string description = record.model.empty() ? std::string() : record.model + " · ";
  if (record.layer) description += "layer " + std::to_string(*record.layer) + " · ";
  description += record.mode == "cross" ? "cross-attention" : "self-attention";
  if (record.causal) description += ", causal";
  return description;
}

// Names the model, layer and kind of attention (once when the runs agree, per run otherwise),
// the runs' files and the heads.
std::string figure_title(const std::vector<CompareRun>& runs, const std::vector<int>& heads) {
  std::string title = "compare";
  const bool same_kind = runs.size() == 1 || run_description(runs[0].record) == run_description(runs[1].record);
  if (same_kind) title += " · " + run_description(runs.front().record);
  for (const CompareRun& run : runs) {
    if (!run.label.empty()) {
      title += " · " + run.label + " = " + std::filesystem::path(run.record.inputs.front()).filename().string();
      if (!same_kind) title += " (" + run_description(run.record) + ")";
    }
  }
  title += " · heads ";
  for (std::size_t i = 0; i < heads.size(); ++i)
    title += (i == 0 ? "" : ", ") + (runs.front().names.empty() ? std::to_string(heads[i]) : head_name(runs.front(), heads[i]));
  return title + " on one colour scale";
}

// compare keeps each picture until all are stacked into one image, a copy of them all, which
// is then encoded: the pictures may take half of what the budget leaves beside the runs and
// their panels, the stacked image and its PNG the other half.
class PictureBudget {
 public:
  static constexpr const char* kNote =
      " (compare keeps its pictures to stack them into one image: together they may use half of what "
      "the budget leaves beside the weights)";

  PictureBudget(const std::vector<CompareRun>& runs, const ComparePanels& panels, double budget) {
    double held = 0;
    for (const CompareRun& run : runs) held += run.record.memory_bytes();
    for (const std::vector<Matrix>* stack : {&panels.means, &panels.differences}) {
      for (const Matrix& m : *stack) held += static_cast<double>(m.size()) * sizeof(Scalar);
    }
    for_pictures_ = (budget - held) / 2;
    if (for_pictures_ <= 0) {
      throw LimitError::memory("drawing the comparison beside the attention weights", held, budget, "--max-memory MIB");
    }
  }
  /// Budget for the next picture: what the pictures kept so far leave (at least 1 byte, so
  /// that a picture that does not fit is refused with its size in the message).
  double next() const { return std::max(1.0, for_pictures_ - used_); }
  /// Counts a finished picture, kept for the stack (raster + its share of the final PNG).
  void keep(const Image& image) { used_ += picture_bytes(image.width_px(), image.height_px(), 0, 0); }

 private:
  double for_pictures_ = 0;
  double used_ = 0;
};

GridRequest divergence_request(const StatsReport& report, const ModelPictureSettings& options, int max_height_px, double budget) {
  GridRequest request;
  request.query_tokens = report.head_names;
  request.key_tokens = report.head_names;
  request.panels = {share<Matrix>(report.divergence.cast<Scalar>())};
  request.panel_titles = {"Jensen–Shannon divergence between heads"};
  request.query_axis_title = "head";
  request.key_axis_title = "head";
  request.colorbar_label = "JS divergence (nats)";
  request.scale = ScaleMode::Shared;
  request.cmap = "magma";
  request.annotate = report.head_names.size() <= 16;
  request.max_size_px = options.max_size_px;
  request.max_height_px = max_height_px;
  request.max_memory_bytes = budget;
  request.memory_note = PictureBudget::kNote;
  return request;
}

// The figure's pictures (weights, differences, divergence), above its table.
constexpr std::size_t kMaxPictureParts = 3;

// The figure's parts, top to bottom: the weights, the differences, the divergence matrix (each
// within --max-size wide and heights[k] tall) and the statistics table. Appends the parts'
// warnings; `requests` receives the pictures' requests. Requires: heights has one entry per
// picture part (kMaxPictureParts).
std::vector<Image> draw_figure(const CompareFigure& figure, const ModelPictureSettings& options, const FontSet& fonts, double budget,
                               const std::vector<int>& heights, std::vector<std::string>& warnings,
                               NamedRequests& requests) {
  std::vector<Image> parts;
  requests.clear();
  PictureBudget pictures(figure.runs, figure.panels, budget);
  GridRequest weights = grid_request(figure.runs.front(), options, figure.masks.both, pictures.next());
  weights.max_height_px = heights[0];
  weights.panels = figure.panels.weights;
  for (const std::size_t run : figure.panels.run_of) weights.panel_allowed.push_back(figure.masks.own[run]);
  weights.one_run_masked = figure.masks.one_run;
  weights.one_run_legend = figure.masks.one_run_legend;
  weights.panel_titles = figure.panels.titles;
  if (figure.runs.size() == 2) weights.col_multiple = 2;  // A and B of a head side by side
  weights.figure_title = figure_title(figure.runs, figure.heads) + measure_title_note(options.measure);
  weights.memory_note = PictureBudget::kNote;
  requests.push_back({"weights", weights});
  RenderedGrid top = render_grid(weights, fonts);
  warnings.insert(warnings.end(), top.warnings.begin(), top.warnings.end());
  pictures.keep(top.image);
  parts.push_back(std::move(top.image));
  if (!figure.panels.differences.empty()) {
    GridRequest differences = grid_request(figure.runs.front(), options, figure.masks.both, pictures.next());
    differences.max_height_px = heights[1];
    differences.one_run_masked = figure.masks.one_run;
    differences.one_run_legend = figure.masks.one_run_legend;
    differences.memory_note = PictureBudget::kNote;
    for (const Matrix& panel : figure.panels.differences) differences.panels.push_back(borrow(panel));
    differences.panel_titles = figure.panels.difference_titles;
    differences.scale = ScaleMode::Symmetric;
    differences.cmap = "rdbu";
    differences.colorbar_label = "difference of weights";
    differences.figure_title = "differences (blue: first lower, red: first higher)";
    requests.push_back({"differences", differences});
    RenderedGrid diff = render_grid(differences, fonts);
    pictures.keep(diff.image);
    parts.push_back(std::move(diff.image));
  }
  if (figure.report.head_names.size() >= 2) {
    const GridRequest divergence = divergence_request(figure.report, options, heights[2], pictures.next());
    requests.push_back({"divergence", divergence});
    RenderedGrid grid = render_grid(divergence, fonts);
    warnings.insert(warnings.end(), grid.warnings.begin(), grid.warnings.end());
    pictures.keep(grid.image);
    parts.push_back(std::move(grid.image));
  }
  parts.push_back(render_text_table(stats_table(figure.report), fonts, options.max_size_px));
  return parts;
}

}  // namespace

// The parts share --max-size: each is as wide as it allows, and when the stack is too tall the
// pictures are drawn again, each given the share of the height the table leaves in proportion
// to its height (a few times at most: a grid does not shrink exactly in proportion). Refuses
// (LimitError) only a figure that still does not fit.
std::vector<Image> fit_figure(const CompareFigure& figure, const ModelPictureSettings& options, const FontSet& fonts, double budget,
                              std::vector<std::string>& warnings, NamedRequests& requests) {
  constexpr int kMaxAttempts = 6;
  const int limit = options.max_size_px;
  std::vector<int> heights(kMaxPictureParts, limit);
  for (int attempt = 1;; ++attempt) {
    std::vector<std::string> found;
    std::vector<Image> parts;
    try {
      parts = draw_figure(figure, options, fonts, budget, heights, found, requests);
    } catch (const LimitError& e) {
      if (attempt == 1) throw;
      throw LimitError("the comparison's pictures, stacked, do not fit in " + std::to_string(limit) +
                       " px (raise --max-size or compare fewer heads): " + e.what());
    }
    // The table's text cannot shrink below 8 px: a table still wider than the limit is refused
    // (a tester got a 442 px wide figure for --max-size 256).
    if (const Image& table = parts.back(); table.width_px() > limit) {
      throw LimitError::image_size("the comparison's statistics table at its smallest font", table.width_px(),
                                   table.height_px(), limit,
                                   "raise --max-size to at least " + std::to_string(table.width_px()) +
                                       ", or compare fewer heads");
    }
    int height = 0;
    for (const Image& part : parts) height += part.height_px();
    if (height <= limit) {
      for (std::string& w : found) {
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(std::move(w));
      }
      return parts;
    }
    const int table_height = parts.back().height_px();
    const int pictures_height = height - table_height;
    if (attempt == kMaxAttempts || limit - table_height <= 0) {
      throw LimitError::image_size("the comparison (" + std::to_string(parts.size()) + " parts stacked)",
                                   limit, height, limit, "raise --max-size (at most 16384) or compare fewer heads");
    }
    // Parts are stacked in the order of `heights`, skipping those not drawn (no differences).
    // The divergence matrix (heads × heads) keeps the size it took when the others can make room:
    // shrunk in proportion it became a 100 px thumbnail beside a 470-token map (issue 23).
    const bool has_differences = !figure.panels.differences.empty();
    const bool has_divergence = figure.report.head_names.size() >= 2;
    const int divergence_height = has_divergence ? parts[parts.size() - 2].height_px() : 0;
    const bool keep_divergence = has_divergence && limit - table_height - divergence_height > pictures_height / 4;
    const int fixed = keep_divergence ? divergence_height : 0;
    const double shrink = static_cast<double>(limit - table_height - fixed) / (pictures_height - fixed);
    for (std::size_t k = 0, part = 0; k < heights.size() && part + 1 < parts.size(); ++k) {
      if (k == 1 && !has_differences) continue;
      const int drawn = parts[part++].height_px();
      if (k == 2 && keep_divergence) continue;
      heights[k] = std::max(1, static_cast<int>(drawn * shrink) - (attempt > 2 ? drawn / 20 : 0));
    }
  }
}

TextTable stats_table(const StatsReport& report) {
  TextTable table;
  table.title = "statistics over the real, not fully masked query rows";
  table.header = {"head", "H_mean", "H_min", "H_max", "H/ln_k", "max_w", "distance", "diagonal", "previous", "first"};
  for (std::size_t h = 0; h < report.stats.size(); ++h) {
    const HeadStats& s = report.stats[h];
    table.rows.push_back({report.head_names[h], stat_text(s.entropy_mean), stat_text(s.entropy_min), stat_text(s.entropy_max),
                          stat_text(s.entropy_normalised_mean), stat_text(s.max_weight_mean), stat_text(s.mean_distance),
                          stat_text(s.diagonal_mass), stat_text(s.previous_mass),
                          stat_text(s.first_token_mass)});
  }
  table.note = "entropies in nats over the keys of each query row; H/ln_k normalised by the keys a row may see; "
               "max_w and masses are mean weights; distance in tokens; '-' = self-attention only, or undefined: H/ln_k when "
               "no row sees two keys, previous with one token";
  return table;
}

}  // namespace attnviz
