// The offline interactive report: one self-contained HTML file (inline CSS and JavaScript, the
// data embedded as JSON, no request of any kind) showing the same grids as the PNGs — same
// colour maps, scales, titles, head names, hatched masked cells — with hover tooltips, a
// layer selector and a layer × head overview. Builds text in memory; never writes files.
#pragma once

#include <string>
#include <vector>

#include "core/types.hpp"
#include "render/color_scale.hpp"
#include "render/font.hpp"
#include "render/head_grid.hpp"
#include "render/text_table.hpp"

namespace attnviz {

/// Above this many stored values in a page (all views), weights are stored as 16-bit steps
/// instead of float32 (about 5.3 MB of base64 at float32); the page says so.
inline constexpr double kMaxExactReportValues = 1 << 20;

/// Memory a page needs per stored value, at most: the float32 kept until the page is written,
/// its base64 text (4/3 of 4 bytes) and that text again inside the page.
inline constexpr double kReportBytesPerValue = 4 + 2 * (4.0 * 4 / 3);

/// One grid of the page (a layer of a model run, or one part of a comparison): what the PNG
/// grid of the same request shows, with the values kept for tooltips.
struct ReportView {
  std::string name;                          ///< the selector's entry, e.g. "layer 2"
  std::string figure_title;
  Tokens query_tokens, key_tokens;           ///< as given, shown in tooltips
  std::vector<std::string> query_labels, key_labels;  ///< as the PNG draws them (display_label)
  std::string query_axis_title, key_axis_title;
  std::vector<std::string> panel_names;      ///< "L2H5" (short, for the overview)
  std::vector<std::string> panel_titles;     ///< as in the PNG, e.g. "L2H5 · head 5 of 8"
  std::vector<ValueRange> ranges;            ///< per panel, as in the PNG
  ColorbarScale colorbar;
  std::string colorbar_label;
  std::string cmap;
  bool symmetric = false;                    ///< signed data: blocks keep the largest magnitude
  std::vector<std::uint8_t> allowed;         ///< [n_q · n_k] row-major, 1 = allowed, 0 = masked,
                                             ///< 2 = masked and GridRequest::one_run_masked (outside a
                                             ///< sliding window, or masked in one compared run only:
                                             ///< the PNG's other hatch); empty = all allowed
  std::string one_run_legend;                ///< the legend line of the cells marked 2
  /// Per panel, when a panel has a mask of its own (GridRequest::panel_allowed, compare's runs):
  /// its cells as `allowed` codes them; `values` then holds each panel's own allowed cells.
  /// Empty: every panel uses `allowed`.
  std::vector<std::vector<std::uint8_t>> panel_allowed;
  std::vector<float> values;                 ///< the allowed cells of each panel, panel by panel,
                                             ///< row-major: exactly the record's float32 weights
  /// What the view shows (--measure, issue 20): "weights", "norms" or "alti". A page whose views
  /// show several gets a switch that shows one measure at a time.
  std::string measure = "weights";
  int prompt_rows = 0, prompt_cols = 0;      ///< GridRequest's prompt marks (0 = none)
  int first_query = 0;                       ///< position of query row 0 (--rows generated)
  bool exclude_sink = false;                 ///< ranges leave key 0 out: the page marks it
};

/// The view of what `request` draws: labels, titles, ranges and colour bar from layout_grid()
/// (so they are the PNG's), values copied from the panels. `panel_names` gives one short name per
/// panel (missing ones: "head p"). Throws as layout_grid() (an unknown cmap).
ReportView report_view(const GridRequest& request, const FontSet& fonts, std::string name,
                       const std::vector<std::string>& panel_names);

/// Another file of the run, linked from the page (overview.png beside index.html, a layer's PNG).
struct ReportLink {
  std::string href;  ///< relative to the page, '/'-separated (no scheme: the page never requests it)
  std::string text;  ///< what the link shows
};

/// The page: `title` in its heading and <title>, the views in order (a selector when there are
/// several; `layered` adds the layer × head overview and names the selector "layer").
/// A chat conversation's turn among the text's tokens: the role, positions [first, end).
struct ReportTurn {
  std::string role;
  int first = 0;
  int end = 0;
};

struct ReportPage {
  std::string title;
  std::vector<ReportView> views;
  bool layered = false;
  int prompt_length = 0;  ///< --generate: tokens from here on were generated (the text panel marks
                          ///< them); 0 = nothing generated
  std::vector<TextTable> tables = {};  ///< shown as HTML tables below the views (compare's statistics)
  std::vector<ReportLink> links = {};  ///< the run's other files: the first `main_links` in the header,
  std::size_t main_links = 0;          ///< the rest in a folded list
  std::vector<ReportTurn> turns = {};  ///< a conversation's turns: the text view starts each on a line, its role first
  std::string turns_note = {};         ///< why a conversation's turns are not shown ("" when they are, or no conversation)
};

/// The whole HTML file. Data go into <script type="application/json"> with '<', '>', '&' and
/// U+2028/U+2029 escaped as \uXXXX, so no token can end the script or become markup; the page
/// sets every text with textContent. Weights are float32 (tooltips: 4 significant digits of the
/// stored float32) unless the page holds more than kMaxExactReportValues values, then 16-bit
/// steps over each view's value range (the page states the step). Deterministic bytes.
std::string html_report(const ReportPage& page);

}  // namespace attnviz
