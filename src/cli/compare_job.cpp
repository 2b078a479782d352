#include "cli/compare_job.hpp"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <ostream>

#include "attention/head_stats.hpp"
#include "cli/attention_job.hpp"
#include "cli/picture_formats.hpp"
#include "cli/run.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "io/record_json.hpp"
#include "io/stats_output.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/html_report.hpp"
#include "render/png.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

namespace attnviz {

namespace {

const Rgb kBackground{255, 255, 255};

// One or two runs to compare, each labelled ("" for a single run; "A", "B" for two).
struct Run {
  std::string label;
  AttentionRecord record;
};

// Each input is read once: a pipe looked into to tell a dump from a sentence file cannot be
// read again.
// One computed run laps "load" inside compute_record; dumps lap it once read.
std::vector<Run> load_runs(const Options& options, std::vector<std::string>& warnings, double budget,
                           PhaseTimer& timer) {
  InputTexts texts;
  const FileText& first = input_text(texts, options.sentence, budget);
  if (!is_record_text(first, options.sentence)) return {{"", compute_record(options, warnings, &timer, std::move(texts))}};
  if (!options.source.empty() || options.causal || !options.rope.empty() || options.positional != "none") {
    throw UsageError::bad_option("compare", "--source, --causal, --rope and --positional apply when computing "
                                            "attention, not to attention JSON files such as " + options.sentence);
  }
  std::vector<Run> runs{{"A", read_record(first, options.sentence)}};
  if (!options.weights.empty()) {
    const FileText& second = input_text(texts, options.weights, budget);
    if (!is_record_text(second, options.weights)) {
      throw InputError::inconsistent(options.weights, "expected a second attention JSON (weights [head][query][key]) "
                                                      "to compare with " + options.sentence + ", got another kind of file");
    }
    runs.push_back({"B", read_record(second, options.weights)});
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
  return (run.label.empty() ? "" : run.label + " · ") + run.record.head_name(head);
}

// The panels to compare: the chosen heads of each run (and their means with --average).
// The pictures' matrices: chosen heads borrowed from the runs, means and differences owned.
struct Panels {
  std::vector<SharedMatrix> weights;
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
      p.titles.push_back((run.label.empty() ? "" : run.label + " · ") + "average of " + std::to_string(heads.size()) +
                         " heads (mean)");
    }
    if (runs.size() == 2) {
      p.differences.push_back(p.means[0] - p.means[1]);
      p.difference_titles.push_back("A − B · average");
    }
  }
  if (runs.size() == 1 && heads.size() == 2) {
    const AttentionRecord& r = runs.front().record;
    p.differences.push_back(r.weights[heads[0]] - r.weights[heads[1]]);
    p.difference_titles.push_back(r.head_name(heads[0]) + " − " + r.head_name(heads[1]));
  }
  return p;
}

// One mask for all panels: a cell masked in any run is drawn masked (hatched, never the colour
// of 0) and left out of the comparison; runs that mask differently are told about.
MaskMatrix combined_mask(const std::vector<Run>& runs, std::vector<std::string>& warnings) {
  MaskMatrix allowed = runs.front().record.allowed();
  for (const Run& run : runs) {
    const MaskMatrix own = run.record.allowed();
    if (own != allowed) {
      warnings.push_back("the runs mask different cells (" + runs.front().record.inputs.front() + " and " +
                         run.record.inputs.front() + "): cells masked in either are drawn masked in both");
    }
    allowed = allowed.cwiseMin(own);
  }
  return allowed;
}

GridRequest grid_request(const Run& first, const Options& options, const SharedMask& allowed, double budget) {
  GridRequest request;
  request.query_tokens = first.record.query_tokens;
  request.key_tokens = first.record.key_tokens;
  request.allowed = allowed;
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

std::string figure_title(const std::vector<Run>& runs, const std::vector<int>& heads) {
  std::string title = "compare";
  for (const Run& run : runs) {
    if (!run.label.empty()) {
      title += " · " + run.label + " = " + std::filesystem::path(run.record.inputs.front()).filename().string();
    }
  }
  title += " · heads ";
  for (std::size_t i = 0; i < heads.size(); ++i) title += (i == 0 ? "" : ", ") + std::to_string(heads[i]);
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
      report.head_names.push_back((run.label.empty() ? "" : run.label + ":") + run.record.head_name(h));
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

GridRequest divergence_request(const StatsReport& report, const Options& options, double budget) {
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
  request.max_memory_bytes = budget;
  request.memory_note = PictureBudget::kNote;
  return request;
}

// compare.svg and compare.html beside the PNG: the same requests, stacked in one SVG or shown as
// the views of one page.
void add_other_formats(const std::vector<GridRequest>& requests, const std::vector<std::string>& names,
                       const Options& options, const FontSet& fonts, OutputSet& files) {
  if (wants_format(options, "svg")) {
    std::vector<SvgPicture> parts;
    for (std::size_t i = 0; i < requests.size(); ++i) parts.push_back(grid_svg(requests[i], fonts, "p" + std::to_string(i)));
    files.add(with_extension(options.output, ".svg"), svg_document(parts));
  }
  if (wants_format(options, "html")) {
    ReportPage page{requests.front().figure_title, {}, false};
    for (std::size_t i = 0; i < requests.size(); ++i) {
      page.views.push_back(report_view(requests[i], fonts, names[i], requests[i].panel_titles));
    }
    files.add(with_extension(options.output, ".html"), html_report(page));
  }
}

}  // namespace

void run_compare(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  if (options.output.empty()) throw UsageError::bad_option("-o", "required: the PNG file to write");
  if (!options.stats.empty()) stats_format(options.stats);  // refuse a bad name before any work
  if (options.scale == "head") {
    throw UsageError::bad_option("--scale", "compare puts every head on one colour scale: use fixed or shared");
  }
  const double budget = memory_budget_bytes(options);
  const std::vector<Run> runs = load_runs(options, warnings, budget, timer);
  if (runs.size() == 2) {
    require_same_tokens(runs[0].record.query_tokens, runs[1].record.query_tokens, "query", runs[0], runs[1]);
    require_same_tokens(runs[0].record.key_tokens, runs[1].record.key_tokens, "key", runs[0], runs[1]);
  }
  const std::vector<int> heads = chosen_heads(options, runs);
  const SharedMask allowed = share(combined_mask(runs, warnings));
  const Panels panels = collect_panels(runs, heads, options.average);
  const StatsReport report = collect_stats(runs, heads, *allowed);
  timer.lap("compute");  // attention (one computed run), differences and statistics

  const FontSet fonts = options.fonts.empty() ? FontSet() : FontSet(options.fonts);
  std::vector<Image> parts;
  std::vector<GridRequest> requests;
  std::vector<std::string> names;
  const bool png = wants_format(options, "png");
  PictureBudget pictures(runs, panels, budget);
  GridRequest weights = grid_request(runs.front(), options, allowed, pictures.next());
  weights.panels = panels.weights;
  weights.panel_titles = panels.titles;
  if (weights.cols == 0 && runs.size() == 2) weights.cols = 2;
  weights.figure_title = figure_title(runs, heads);
  weights.memory_note = PictureBudget::kNote;
  requests.push_back(weights);
  names.push_back("weights");
  if (png) {
    RenderedGrid top = render_grid(weights, fonts);
    warnings.insert(warnings.end(), top.warnings.begin(), top.warnings.end());
    pictures.keep(top.image);
    parts.push_back(std::move(top.image));
  }
  if (!panels.differences.empty()) {
    GridRequest differences = grid_request(runs.front(), options, allowed, pictures.next());
    differences.memory_note = PictureBudget::kNote;
    for (const Matrix& panel : panels.differences) differences.panels.push_back(borrow(panel));
    differences.panel_titles = panels.difference_titles;
    differences.scale = ScaleMode::Symmetric;
    differences.cmap = "rdbu";
    differences.colorbar_label = "difference of weights";
    differences.figure_title = "differences (blue: first lower, red: first higher)";
    requests.push_back(differences);
    names.push_back("differences");
    if (png) {
      RenderedGrid diff = render_grid(differences, fonts);
      pictures.keep(diff.image);
      parts.push_back(std::move(diff.image));
    }
  }
  if (report.head_names.size() >= 2) {
    requests.push_back(divergence_request(report, options, pictures.next()));
    names.push_back("divergence");
    if (png) {
      RenderedGrid grid = render_grid(requests.back(), fonts);
      warnings.insert(warnings.end(), grid.warnings.begin(), grid.warnings.end());
      parts.push_back(std::move(grid.image));
    }
  }
  OutputSet files;
  files.protect(input_files(options));
  if (png) files.add(options.output, encode_png(stack_vertically(parts, kBackground), options.output));
  add_other_formats(requests, names, options, fonts, files);
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

}  // namespace attnviz
