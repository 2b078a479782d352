#include "cli/compare_job.hpp"

#include <ostream>

#include "analysis/measures.hpp"
#include "cli/attention_job.hpp"
#include "cli/compare_runs.hpp"
#include "cli/run.hpp"
#include "cli/stale_outputs.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "records/compare_stats.hpp"
#include "records/stats_output.hpp"
#include "render/base64.hpp"
#include "render/compare_figure.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/html_report.hpp"
#include "render/picture_fonts.hpp"
#include "render/picture_formats.hpp"
#include "render/png.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

namespace attnviz {

namespace {

const Rgb kBackground{255, 255, 255};

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

void add_other_formats(const NamedRequests& requests, const Image& table, const TextTable& stats,
                       const std::vector<TextTable>& extra_tables, const Options& options, const FontSet& fonts,
                       OutputSet& files) {
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
    page.tables.push_back(stats);  // the numbers the PNG's table shows, as text (issue 23)
    page.tables.insert(page.tables.end(), extra_tables.begin(), extra_tables.end());
    files.add(with_extension(options.output, ".html"), html_report(page));
  }
}

void check_compare_options(const Options& options) {
  if (options.output.empty()) throw UsageError::bad_option("-o", "required: the PNG file to write");
  if (!options.stats.empty()) stats_format(options.stats);  // refuse a bad name before any work
  if (options.scale == "head") {
    throw UsageError::bad_option("--scale", "compare puts every head on one colour scale: use fixed or shared");
  }
}

void compare_runs(const std::vector<CompareRun>& runs, const std::vector<int>& heads, const Options& options,
                  PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings, OutputSet extra_files,
                  const std::vector<TextTable>& extra_tables) {
  const double budget = memory_budget_bytes(options);
  const CompareMasks masks = figure_masks(runs, warnings);
  const ComparePanels panels = collect_panels(runs, heads, options.average);
  const StatsReport report = collect_stats(runs, heads, *masks.both);
  timer.lap("compute");  // attention (one computed run), differences and statistics

  const FontSet fonts = picture_fonts(options);
  const CompareFigure figure{runs, heads, panels, report, masks};
  NamedRequests requests;
  std::vector<Image> parts = fit_figure(figure, options, fonts, budget, warnings, requests);
  OutputSet files = std::move(extra_files);
  files.protect(input_files(options));
  if (wants_format(options, "png"))
    files.add(options.output, encode_png(stack_vertically(parts, kBackground), options.output));
  add_other_formats(requests, parts.back(), stats_table(report), extra_tables, options, fonts, files);
  if (!options.stats.empty()) files.add(options.stats, stats_format(options.stats) == ".csv" ? stats_to_csv(report)
                                                                                            : stats_to_json(report));
  timer.lap("render");
  files.commit();
  warn_about_stale_formats(options.output, files.paths(), warnings);
  timer.lap("write");
  print_stats(report, out);
  std::string written;
  for (const std::string& path : files.paths()) written += (written.empty() ? "" : " and ") + path;
  out << "wrote " << written << "\n";
}

}  // namespace

void run_compare(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  check_compare_options(options);
  std::vector<CompareRun> runs = load_compare_runs(options, warnings, memory_budget_bytes(options), timer);
  for (CompareRun& run : runs) compare_measure(options.measure, run.record, run.names);
  require_same_tokens(runs);
  compare_runs(runs, chosen_heads(options, runs), options, timer, out, warnings, OutputSet(), {});
}

void run_compare_heads(AttentionRecord record, std::vector<std::string> names, const Options& options, PhaseTimer& timer,
                       std::ostream& out, std::vector<std::string>& warnings, OutputSet extra_files,
                       std::vector<TextTable> extra_tables) {
  check_compare_options(options);
  std::vector<int> heads;
  for (int h = 0; h < record.num_heads; ++h) heads.push_back(h);
  const std::vector<CompareRun> runs{{"", std::move(record), std::move(names)}};
  compare_runs(runs, heads, options, timer, out, warnings, std::move(extra_files), extra_tables);
}

}  // namespace attnviz
