#include "cli/compare_job.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "attention/head_stats.hpp"
#include "cli/attention_job.hpp"
#include "cli/picture_formats.hpp"
#include "cli/run.hpp"
#include "core/counted.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "io/record_json.hpp"
#include "io/stats_output.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/html_report.hpp"
#include "render/png.hpp"
#include "render/text_table.hpp"
#include "render/base64.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

namespace attnviz {

namespace {

const Rgb kBackground{255, 255, 255};

// One or two runs to compare, each labelled ("" for a single run; "A", "B" for two).
struct Run {
  std::string label;
  AttentionRecord record;
  std::vector<std::string> names;  ///< per head, when not record.head_name (heads of several layers)
};

std::string head_name(const Run& run, int head) {
  return run.names.empty() ? run.record.head_name(head) : run.names[static_cast<std::size_t>(head)];
}

// Each input is read once: a pipe looked into to tell a dump from a sentence file cannot be
// read again.
// One computed run laps "load" inside compute_record; dumps lap it once read.
std::vector<Run> load_runs(const Options& options, std::vector<std::string>& warnings, double budget,
                           PhaseTimer& timer) {
  InputTexts texts;
  const FileText& first = input_text(texts, options.sentence, budget);
  if (!is_record_text(first, options.sentence)) return {{"", compute_record(options, warnings, &timer, std::move(texts)), {}}};
  if (!options.source.empty() || options.causal || !options.rope.empty() || options.positional != "none") {
    throw UsageError::bad_option("compare", "--source, --causal, --rope and --positional apply when computing "
                                            "attention, not to attention JSON files such as " + options.sentence);
  }
  std::vector<Run> runs{{"A", read_record(first, options.sentence), {}}};
  if (!options.weights.empty()) {
    const FileText& second = input_text(texts, options.weights, budget);
    if (!is_record_text(second, options.weights)) {
      throw InputError::inconsistent(options.weights, "expected a second attention JSON (weights [head][query][key]) "
                                                      "to compare with " + options.sentence + ", got another kind of file");
    }
    runs.push_back({"B", read_record(second, options.weights), {}});
  } else {
    runs.front().label = "";
  }
  timer.lap("load");
  return runs;
}

void require_same_tokens(const Tokens& a, const Tokens& b, const std::string& what, const Run& run_a, const Run& run_b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      throw InputError::inconsistent(run_b.record.inputs.front(), what + " token " + std::to_string(i) + " is \"" + b[i] +
                                                                      "\" but \"" + a[i] + "\" in " + run_a.record.inputs.front() +
                                                                      " (both runs must use the same tokens)");
    }
  }
  if (a.size() != b.size()) {
    throw InputError::inconsistent(run_b.record.inputs.front(), std::to_string(b.size()) + " " + what + " tokens, but " +
                                                                    std::to_string(a.size()) + " in " +
                                                                    run_a.record.inputs.front());
  }
}

std::vector<int> chosen_heads(const Options& options, const std::vector<Run>& runs) {
  int available = runs.front().record.num_heads;
  for (const Run& run : runs) available = std::min(available, run.record.num_heads);
  std::vector<int> heads = options.heads;
  if (heads.empty()) {
    for (int h = 0; h < available; ++h) heads.push_back(h);
  }
  for (int h : heads) {
    if (h < 0 || h >= available) {
      throw UsageError::bad_option("--heads", "head " + std::to_string(h) + " does not exist: valid heads are 0–" +
                                                  std::to_string(available - 1));
    }
  }
  return heads;
}

std::string head_label(const Run& run, int head) {
  return (run.label.empty() ? "" : run.label + " · ") + head_name(run, head);
}

// The panels to compare: the chosen heads of each run (and their means with --average).
// The pictures' matrices: chosen heads borrowed from the runs, means and differences owned.
struct Panels {
  std::vector<SharedMatrix> weights;
  std::vector<std::size_t> run_of;  // per weights panel: the index of its run
  std::vector<std::string> titles;
  std::vector<Matrix> means;
  std::vector<Matrix> differences;
  std::vector<std::string> difference_titles;
};

Panels collect_panels(const std::vector<Run>& runs, const std::vector<int>& heads, bool average) {
  Panels p;
  for (int h : heads) {
    for (const Run& run : runs) {
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
    for (const Run& run : runs) {
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

// The masks of the figure. Each run is drawn as it was computed, with its own mask; a cell masked
// in one run only gets the one-run hatch where it is masked (in that run's panels and in A − B,
// which is not a difference of weights there) and a legend line naming the run.
struct Masks {
  SharedMask both;                 // allowed in every run: the statistics' and differences' mask
  std::vector<SharedMask> own;     // per run
  SharedMask one_run;              // masked in exactly one of two runs; null when none
  std::string one_run_legend;
};

Masks figure_masks(const std::vector<Run>& runs, std::vector<std::string>& warnings) {
  Masks masks;
  MaskMatrix both = runs.front().record.allowed();
  for (const Run& run : runs) {
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

GridRequest grid_request(const Run& first, const Options& options, const SharedMask& allowed, double budget) {
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

// ".json" or ".csv" (case-insensitive) from the --stats file name; anything else is refused.
std::string stats_format(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension != ".json" && extension != ".csv") {
    throw UsageError::bad_option("--stats", "the file name must end in .json or .csv, got \"" + path + "\"");
  }
  return extension;
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
std::string figure_title(const std::vector<Run>& runs, const std::vector<int>& heads) {
  std::string title = "compare";
  const bool same_kind = runs.size() == 1 || run_description(runs[0].record) == run_description(runs[1].record);
  if (same_kind) title += " · " + run_description(runs.front().record);
  for (const Run& run : runs) {
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

// Rows fully masked in any run, and padding queries (query_mask 0), are left out of every
// statistic, so both runs are measured on the same real rows; no row left: nothing to compare.
StatsReport collect_stats(const std::vector<Run>& runs, const std::vector<int>& heads, const MaskMatrix& allowed) {
  std::vector<long> skipped;
  for (const Run& run : runs) {
    skipped.insert(skipped.end(), run.record.fully_masked_rows.begin(), run.record.fully_masked_rows.end());
    for (std::size_t i = 0; i < run.record.query_mask.size(); ++i) {
      if (run.record.query_mask[i] == 0) skipped.push_back(static_cast<long>(i));
    }
  }
  const std::vector<long> rows =
      rows_for_statistics(static_cast<long>(runs.front().record.query_tokens.size()), allowed, skipped);
  if (rows.empty()) {
    throw InputError::inconsistent(runs.back().record.inputs.front(), "every query row is fully masked (no key to "
                                                                      "attend to): there are no weights to compare");
  }
  StatsReport report;
  report.query_tokens = runs.front().record.query_tokens;
  report.key_tokens = runs.front().record.key_tokens;
  std::vector<Matrix> matrices;
  // Each run's statistics use its own mask: its weights are a distribution over the keys it
  // allowed, so entropy is normalised by those (with the combined mask, a run masked less than
  // the other had H / ln k above 1).
  std::vector<MaskMatrix> own_masks;
  for (const Run& run : runs) own_masks.push_back(run.record.allowed());
  for (int h : heads) {
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const Run& run = runs[r];
      const bool self = run.record.mode == "self";
      report.stats.push_back(head_statistics({run.record.weights[h]}, own_masks[r], rows, self).front());
      report.head_names.push_back((run.label.empty() ? "" : run.label + ":") + head_name(run, h));
      matrices.push_back(run.record.weights[h]);
    }
  }
  report.divergence = head_divergence_matrix(matrices, rows);
  return report;
}

std::string fixed(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", x);
  return text;
}

std::string optional_fixed(const std::optional<double>& x) { return x ? fixed(*x) : "-"; }

void print_table(const StatsReport& report, std::ostream& out) {
  std::size_t width = 4;
  for (const std::string& name : report.head_names) width = std::max(width, name.size());
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", static_cast<int>(width), "head",
                "H_mean", "H_min", "H_max", "H/ln_k", "max_w", "distance", "diagonal", "previous", "first");
  out << line;
  for (std::size_t h = 0; h < report.stats.size(); ++h) {
    const HeadStats& s = report.stats[h];
    std::snprintf(line, sizeof line, "%-*s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", static_cast<int>(width),
                  report.head_names[h].c_str(), fixed(s.entropy_mean).c_str(), fixed(s.entropy_min).c_str(),
                  fixed(s.entropy_max).c_str(), fixed(s.entropy_normalised_mean).c_str(),
                  fixed(s.max_weight_mean).c_str(), optional_fixed(s.mean_distance).c_str(),
                  optional_fixed(s.diagonal_mass).c_str(), optional_fixed(s.previous_mass).c_str(),
                  optional_fixed(s.first_token_mass).c_str());
    out << line;
  }
  out << "(entropies in nats over the keys of each query row; H/ln_k normalised by the keys a row may see; "
         "max_w and masses are mean weights; distance in tokens; '-' = self-attention only)\n\n";
  out << "Jensen-Shannon divergence between heads (nats, mean over query rows; 0 = identical, ln 2 = 0.693 max)\n";
  std::snprintf(line, sizeof line, "%-*s", static_cast<int>(width), "");
  out << line;
  for (const std::string& name : report.head_names) {
    std::snprintf(line, sizeof line, " %*s", static_cast<int>(std::max<std::size_t>(8, name.size())), name.c_str());
    out << line;
  }
  out << "\n";
  for (Eigen::Index a = 0; a < report.divergence.rows(); ++a) {
    std::snprintf(line, sizeof line, "%-*s", static_cast<int>(width), report.head_names[a].c_str());
    out << line;
    for (Eigen::Index b = 0; b < report.divergence.cols(); ++b) {
      const int column = static_cast<int>(std::max<std::size_t>(8, report.head_names[b].size()));
      std::snprintf(line, sizeof line, " %*s", column, fixed(report.divergence(a, b)).c_str());
      out << line;
    }
    out << "\n";
  }
}

// compare keeps each picture until all are stacked into one image, a copy of them all, which
// is then encoded: the pictures may take half of what the budget leaves beside the runs and
// their panels, the stacked image and its PNG the other half.
class PictureBudget {
 public:
  static constexpr const char* kNote =
      " (compare keeps its pictures to stack them into one image: together they may use half of what "
      "the budget leaves beside the weights)";

  PictureBudget(const std::vector<Run>& runs, const Panels& panels, double budget) {
    double held = 0;
    for (const Run& run : runs) held += run.record.memory_bytes();
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

GridRequest divergence_request(const StatsReport& report, const Options& options, int max_height_px, double budget) {
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

// compare.svg and compare.html beside the PNG: the same requests, stacked in one SVG or shown as
// the views of one page.
// The statistics table under the SVG's pictures, as the PNG has it: embedded as the same PNG
// raster (its numbers, in text, are what --stats writes).
SvgPicture table_picture(const Image& table) {
  SvgPicture picture;
  picture.width_px = table.width_px();
  picture.height_px = table.height_px();
  picture.body = "<image class=\"table\" x=\"0\" y=\"0\" width=\"" + std::to_string(table.width_px()) + "\" height=\"" +
                 std::to_string(table.height_px()) + "\" image-rendering=\"optimizeSpeed\" preserveAspectRatio=\"none\" "
                 "xlink:href=\"data:image/png;base64," + base64_encode(encode_png(table, "the statistics table")) + "\"/>\n";
  return picture;
}

void add_other_formats(const std::vector<std::pair<std::string, GridRequest>>& requests, const Image& table,
                       const Options& options, const FontSet& fonts, OutputSet& files) {
  if (wants_format(options, "svg")) {
    std::vector<SvgPicture> parts;
    for (std::size_t i = 0; i < requests.size(); ++i)
      parts.push_back(grid_svg(requests[i].second, fonts, "p" + std::to_string(i)));
    parts.push_back(table_picture(table));
    files.add(with_extension(options.output, ".svg"), svg_document(parts));
  }
  if (wants_format(options, "html")) {
    ReportPage page{requests.front().second.figure_title, {}, false};
    for (const auto& [name, request] : requests) page.views.push_back(report_view(request, fonts, name, request.panel_titles));
    files.add(with_extension(options.output, ".html"), html_report(page));
  }
}

// The statistics table as drawn in the figure: the same numbers as printed.
TextTable stats_table(const StatsReport& report) {
  TextTable table;
  table.title = "statistics over the real, not fully masked query rows";
  table.header = {"head", "H_mean", "H_min", "H_max", "H/ln_k", "max_w", "distance", "diagonal", "previous", "first"};
  for (std::size_t h = 0; h < report.stats.size(); ++h) {
    const HeadStats& s = report.stats[h];
    table.rows.push_back({report.head_names[h], fixed(s.entropy_mean), fixed(s.entropy_min), fixed(s.entropy_max),
                          fixed(s.entropy_normalised_mean), fixed(s.max_weight_mean), optional_fixed(s.mean_distance),
                          optional_fixed(s.diagonal_mass), optional_fixed(s.previous_mass),
                          optional_fixed(s.first_token_mass)});
  }
  table.note = "entropies in nats over the keys of each query row; H/ln_k normalised by the keys a row may see; "
               "max_w and masses are mean weights; distance in tokens; '-' = self-attention only";
  return table;
}

// The figure's pictures (weights, differences, divergence), above its table.
constexpr std::size_t kMaxPictureParts = 3;

// Everything the figure shows, computed once whatever its size.
struct Figure {
  const std::vector<Run>& runs;
  const std::vector<int>& heads;
  const Panels& panels;
  const StatsReport& report;
  const Masks& masks;
};

// The figure's pictures as requests, named as the HTML report's views ("weights",
// "differences", "divergence"): compare.svg and compare.html draw the same requests.
using NamedRequests = std::vector<std::pair<std::string, GridRequest>>;

// The figure's parts, top to bottom: the weights, the differences, the divergence matrix (each
// within --max-size wide and heights[k] tall) and the statistics table. Appends the parts'
// warnings; `requests` receives the pictures' requests. Requires: heights has one entry per
// picture part (kMaxPictureParts).
std::vector<Image> draw_figure(const Figure& figure, const Options& options, const FontSet& fonts, double budget,
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
  weights.figure_title = figure_title(figure.runs, figure.heads);
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

// The parts share --max-size: each is as wide as it allows, and when the stack is too tall the
// pictures are drawn again, each given the share of the height the table leaves in proportion
// to its height (a few times at most: a grid does not shrink exactly in proportion). Refuses
// (LimitError) only a figure that still does not fit.
std::vector<Image> fit_figure(const Figure& figure, const Options& options, const FontSet& fonts, double budget,
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
    const double shrink = static_cast<double>(limit - table_height) / pictures_height;
    const bool has_differences = !figure.panels.differences.empty();
    for (std::size_t k = 0, part = 0; k < heights.size() && part + 1 < parts.size(); ++k) {
      if (k == 1 && !has_differences) continue;
      const int drawn = parts[part++].height_px();
      heights[k] = std::max(1, static_cast<int>(drawn * shrink) - (attempt > 2 ? drawn / 20 : 0));
    }
  }
}

void check_compare_options(const Options& options) {
  if (options.output.empty()) throw UsageError::bad_option("-o", "required: the PNG file to write");
  if (!options.stats.empty()) stats_format(options.stats);  // refuse a bad name before any work
  if (options.scale == "head") {
    throw UsageError::bad_option("--scale", "compare puts every head on one colour scale: use fixed or shared");
  }
}

void compare_runs(const std::vector<Run>& runs, const std::vector<int>& heads, const Options& options,
                  PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings, OutputSet extra_files) {
  const double budget = memory_budget_bytes(options);
  const Masks masks = figure_masks(runs, warnings);
  const Panels panels = collect_panels(runs, heads, options.average);
  const StatsReport report = collect_stats(runs, heads, *masks.both);
  timer.lap("compute");  // attention (one computed run), differences and statistics

  const FontSet fonts(label_font_paths(options.fonts));
  const Figure figure{runs, heads, panels, report, masks};
  NamedRequests requests;
  std::vector<Image> parts = fit_figure(figure, options, fonts, budget, warnings, requests);
  OutputSet files = std::move(extra_files);
  files.protect(input_files(options));
  if (wants_format(options, "png"))
    files.add(options.output, encode_png(stack_vertically(parts, kBackground), options.output));
  add_other_formats(requests, parts.back(), options, fonts, files);
  if (!options.stats.empty()) files.add(options.stats, stats_format(options.stats) == ".csv" ? stats_to_csv(report)
                                                                                            : stats_to_json(report));
  timer.lap("render");
  files.commit();
  timer.lap("write");
  print_table(report, out);
  std::string written;
  for (const std::string& path : files.paths()) written += (written.empty() ? "" : " and ") + path;
  out << "wrote " << written << "\n";
}

}  // namespace

void run_compare(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  check_compare_options(options);
  const std::vector<Run> runs = load_runs(options, warnings, memory_budget_bytes(options), timer);
  if (runs.size() == 2) {
    require_same_tokens(runs[0].record.query_tokens, runs[1].record.query_tokens, "query", runs[0], runs[1]);
    require_same_tokens(runs[0].record.key_tokens, runs[1].record.key_tokens, "key", runs[0], runs[1]);
  }
  compare_runs(runs, chosen_heads(options, runs), options, timer, out, warnings, OutputSet());
}

void run_compare_heads(AttentionRecord record, std::vector<std::string> names, const Options& options, PhaseTimer& timer,
                       std::ostream& out, std::vector<std::string>& warnings, OutputSet extra_files) {
  check_compare_options(options);
  std::vector<int> heads;
  for (int h = 0; h < record.num_heads; ++h) heads.push_back(h);
  const std::vector<Run> runs{{"", std::move(record), std::move(names)}};
  compare_runs(runs, heads, options, timer, out, warnings, std::move(extra_files));
}

}  // namespace attnviz
