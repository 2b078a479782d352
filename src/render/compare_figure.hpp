// compare's figure: the panels of the chosen heads (their means with --average, and the
// differences between runs or between two heads), the masks each run is drawn with, and the
// stacked pictures (weights, differences, divergence, statistics table) fitted into
// --max-size. Draws in memory; does not load runs, compute statistics or write files.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attention/compare_run.hpp"
#include "core/types.hpp"
#include "records/stats_output.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/image.hpp"
#include "render/picture_settings.hpp"
#include "render/text_table.hpp"

namespace attnviz {

/// The panels to compare: the chosen heads of each run (and their means with --average).
/// The pictures' matrices: chosen heads borrowed from the runs, means and differences owned.
struct ComparePanels {
  std::vector<SharedMatrix> weights;
  std::vector<std::size_t> run_of;  // per weights panel: the index of its run
  std::vector<std::string> titles;
  std::vector<Matrix> means;
  std::vector<Matrix> differences;
  std::vector<std::string> difference_titles;
};

/// weights: per head, each run's matrix, then with `average` each run's mean over `heads`.
/// differences: per head A − B for two runs (and A − B of the means), or for one run and two
/// heads the first minus the second. Borrows from `runs`, which must outlive the result.
ComparePanels collect_panels(const std::vector<CompareRun>& runs, const std::vector<int>& heads, bool average);

/// The masks of the figure. Each run is drawn as it was computed, with its own mask; a cell masked
/// in one run only gets the one-run hatch where it is masked (in that run's panels and in A − B,
/// which is not a difference of weights there) and a legend line naming the run.
struct CompareMasks {
  SharedMask both;                 // allowed in every run: the statistics' and differences' mask
  std::vector<SharedMask> own;     // per run
  SharedMask one_run;              // masked in exactly one of two runs; null when none
  std::string one_run_legend;
};

/// The masks of `runs`; appends a warning when two runs mask different cells.
CompareMasks figure_masks(const std::vector<CompareRun>& runs, std::vector<std::string>& warnings);

/// Everything the figure shows, computed once whatever its size.
struct CompareFigure {
  const std::vector<CompareRun>& runs;
  const std::vector<int>& heads;
  const ComparePanels& panels;
  const StatsReport& report;
  const CompareMasks& masks;
};

/// The figure's pictures as requests, named as the HTML report's views ("weights",
/// "differences", "divergence"): compare.svg and compare.html draw the same requests.
using NamedRequests = std::vector<std::pair<std::string, GridRequest>>;

/// The figure's parts, top to bottom: the weights, the differences (when there are any), the
/// divergence matrix (two heads or more) and the statistics table, to be stacked into one image
/// no taller or wider than options.max_size_px. When the stack is too tall, the pictures are
/// drawn again, smaller. Pictures use at most half of what `budget` (bytes) leaves beside the
/// runs and panels. Appends the parts' warnings (each once); `requests` receives the pictures'
/// requests. Throws LimitError when the figure does not fit in size or memory.
std::vector<Image> fit_figure(const CompareFigure& figure, const ModelPictureSettings& options, const FontSet& fonts, double budget,
                              std::vector<std::string>& warnings, NamedRequests& requests);

/// The statistics table as drawn in the figure: the same numbers as compare prints
/// (records/compare_stats).
TextTable stats_table(const StatsReport& report);

}  // namespace attnviz
