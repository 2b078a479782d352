// The geometry of the head grid: layout_grid(), picture_bytes() and cell_centre_px() of
// head_grid.hpp. Measures text but draws nothing (head_grid.cpp draws).
#include "render/head_grid.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include "core/counted.hpp"
#include "core/error.hpp"
#include "render/colorbar.hpp"
#include "render/colormap.hpp"
#include "render/grid_marks.hpp"
#include "render/grid_notes.hpp"
#include "render/head_grid_internal.hpp"
#include "render/heatmap.hpp"
#include "render/token_label.hpp"
#include "render/wrap_text.hpp"

namespace attnviz {

namespace {

// Cell sizes (see layout_grid's contract).
constexpr int kMaxCellPx = 48;          // short inputs: big, readable cells
constexpr int kMaxStretchedCellPx = 200;  // cells may grow to this to match the colour bar's height
constexpr int kMaxPanelsForColumnSearch = 64;  // more panels: only the requested/automatic columns
constexpr int kMinLabelledCellPx = 14;  // the preferred size never goes below this: every label fits
constexpr int kTargetPanelPx = 480;     // preferred heatmap side for longer inputs (a 2 x 4 grid of
                                        // 32 tokens is then about matplotlib's 2400 x 1200 px)
// Token labels: font = cell − padding, within [min, max]; a gap with a tick mark to the cells.
constexpr int kLabelPaddingPx = 3;
constexpr int kMinLabelFontPx = 10;
constexpr int kMaxLabelFontPx = 14;
constexpr int kLabelGapPx = 6;
constexpr int kMinLabelSpacingPx = 4;  // free pixels between upright key labels
// Titles and notes.
constexpr int kTitleGapPx = 6;   // below a title line
constexpr int kAxisGapPx = 4;    // between labels and axis titles
constexpr int kMarginPx = 16;    // around the whole image
constexpr int kPanelGapPx = 28;  // between panels
constexpr int kColorbarGapPx = 24;
constexpr int kLegendGapPx = 12;
// Printed values: the largest font in [min, max] whose text fits the cell with padding.
constexpr int kMinAnnotationFontPx = 8;
constexpr int kMaxAnnotationFontPx = 13;
constexpr int kAnnotationPaddingPx = 2;
constexpr std::size_t kMaxListedMaskedRows = 4;
constexpr double kRgbBytesPerPixel = 3;
const char* const kMaskMarker = "\u00D7 ";  // "× " before the label of a fully masked row

// Texts and widths that do not depend on the cell size, measured once per layout_grid call.
struct Texts {
  std::vector<std::string> query_labels, key_labels, panel_titles;
  std::vector<int> panel_title_widths;
  int max_panel_title_px = 0, query_axis_px = 0, key_axis_px = 0;
  std::vector<int> fully_masked_rows;
  std::vector<int> padding_rows;  // padding queries (query_mask 0) that are not fully masked
  bool any_masked = false;   // some cell gets the grey hatch
  bool any_one_run = false;  // some cell is masked in one compared run only
  std::map<std::pair<int, bool>, int> query_widths, key_widths;  // (font px, indexed) -> widest label
  int max_side_px = kMaxSidePx;  // the image's limit: wider figure titles and legend lines wrap
};

Texts measure_texts(const GridRequest& request, const FontSet& fonts,
                    const std::vector<ValueRange>& ranges) {
  Texts texts;
  const MaskMatrix& allowed = allowed_cells(request);
  // Cells masked in every run get the grey hatch; those masked in one run only, the other one.
  const MaskMatrix& one_run = mask_or_empty(request.one_run_masked);
  texts.any_masked = allowed.size() != 0 && (one_run.size() == 0 ? (allowed.array() == 0).any()
                                                                  : ((allowed.array() == 0) && (one_run.array() == 0)).any());
  texts.any_one_run = one_run.size() != 0 && (one_run.array() != 0).any();
  for (std::size_t i = 0; i < request.query_tokens.size(); ++i) {
    const bool all_masked = allowed.size() != 0 && (allowed.row(static_cast<Eigen::Index>(i)).array() == 0).all();
    const bool padding = i < request.query_mask.size() && request.query_mask[i] == 0;
    if (all_masked) texts.fully_masked_rows.push_back(static_cast<int>(i));
    else if (padding) texts.padding_rows.push_back(static_cast<int>(i));
    texts.query_labels.push_back((all_masked || padding ? kMaskMarker : "") +
                                 display_label(request.query_tokens[i]));
  }
  for (const std::string& token : request.key_tokens) texts.key_labels.push_back(display_label(token));
  for (std::size_t p = 0; p < request.panels.size(); ++p) {
    std::string title = p < request.panel_titles.size() ? request.panel_titles[p] : "";
    if (title.empty()) title = "head " + std::to_string(p);
    // A panel with no allowed cell (a statistic defined on no text) has no range to give.
    const SharedMask& own = p < request.panel_allowed.size() ? request.panel_allowed[p] : nullptr;
    const bool no_cell = own && own->size() != 0 && !own->any();
    if (request.scale == ScaleMode::Head && request.panels.size() > 1 && !no_cell) {
      title += " \u00B7 " + format_range(ranges[p]);
    }
    texts.panel_title_widths.push_back(fonts.text_width_px(title, kPanelTitleFontPx));
    texts.max_panel_title_px = std::max(texts.max_panel_title_px, texts.panel_title_widths.back());
    texts.panel_titles.push_back(std::move(title));
  }
  texts.query_axis_px = fonts.text_width_px(request.query_axis_title, kAxisTitleFontPx);
  texts.key_axis_px = fonts.text_width_px(request.key_axis_title, kAxisTitleFontPx);
  return texts;
}

// The widest label at font_px, plain or as a thinned axis draws it ("#212 ▁park").
int widest_label(std::map<std::pair<int, bool>, int>& cache, const std::vector<std::string>& labels,
                 const FontSet& fonts, int font_px, bool indexed, int first_index = 0) {
  auto found = cache.find({font_px, indexed});
  if (found != cache.end()) return found->second;
  int width_px = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::string& label = labels[i];
    const int index = first_index + static_cast<int>(i);
    width_px = std::max(width_px, fonts.text_width_px(indexed ? indexed_label(index, label) : label, font_px));
  }
  return cache.emplace(std::pair{font_px, indexed}, width_px).first->second;
}

// The requested columns, or the near-square automatic choice rounded up to a multiple of
// `multiple` (and cut to the panel count).
int automatic_cols(int n_panels, int requested_cols, int multiple) {
  if (requested_cols > 0) return std::min(requested_cols, n_panels);
  const int rows = std::max(1, static_cast<int>(std::floor(std::sqrt(static_cast<double>(n_panels)))));
  const int cols = (n_panels + rows - 1) / rows;
  return std::min(n_panels, (cols + multiple - 1) / multiple * multiple);
}

// Column counts to try, best first: the requested or automatic count, then, when the request
// leaves columns free, every other multiple of col_multiple up to the panel count, nearest first.
// Many panels keep only the first (each choice costs a search over cell sizes).
std::vector<int> column_choices(const GridRequest& request) {
  const int n = static_cast<int>(request.panels.size());
  const int multiple = std::max(1, request.col_multiple);
  const int first = automatic_cols(n, request.cols, multiple);
  std::vector<int> choices{first};
  if (request.cols > 0 || n > kMaxPanelsForColumnSearch) return choices;
  for (int c = multiple; c < n + multiple; c += multiple) {
    const int cols = std::min(c, n);
    if (std::find(choices.begin(), choices.end(), cols) == choices.end()) choices.push_back(cols);
  }
  std::stable_sort(choices.begin() + 1, choices.end(),
                   [first](int a, int b) { return std::abs(a - first) < std::abs(b - first); });
  return choices;
}

// The longest value text of the panels in cell_value_text's significant form.
std::string longest_significant_value(const GridRequest& request) {
  std::string longest;
  for (const auto& panel : request.panels)
    for (Eigen::Index i = 0; i < panel->size(); ++i) {
      std::string text = cell_value_text(panel->data()[i], true);
      if (text.size() > longest.size()) longest = std::move(text);
    }
  return longest;
}

// Largest font whose widest value text ("0.00", or "-0.00" for signed data; the longest value
// with significant_values) fits a cell; 0 if none.
int annotation_font(const GridRequest& request, const FontSet& fonts, int cell_px) {
  const std::string widest_value = request.significant_values ? longest_significant_value(request)
                                   : request.scale == ScaleMode::Symmetric ? "-0.00" : "0.00";
  for (int font_px = kMaxAnnotationFontPx; font_px >= kMinAnnotationFontPx; --font_px) {
    if (fonts.text_width_px(widest_value, font_px) + 2 * kAnnotationPaddingPx <= cell_px &&
        line_px(fonts, font_px) <= cell_px) {
      return font_px;
    }
  }
  return 0;
}

// Legend lines with their swatch kinds (0: none; else the DrawnCells kind + 1).
std::vector<std::pair<std::string, std::uint8_t>> legend_lines(const GridRequest& request, const Texts& texts,
                                                               const GridLayout& layout) {
  std::vector<std::pair<std::string, std::uint8_t>> lines;
  if (texts.any_masked) lines.emplace_back("grey hatched: masked (causal/padding), not attended", kCellMasked + 1);
  if (texts.any_one_run) {
    lines.emplace_back(request.one_run_legend.empty() ? "cross-hatched: masked in one run only" : request.one_run_legend,
                       kCellMaskedInOneRun + 1);
  }
  const auto list_rows = [&](const std::vector<int>& rows, const std::string& what) {
    if (rows.empty()) return;
    std::string line = std::string(kMaskMarker) + what + ":";
    const std::size_t listed = std::min(rows.size(), kMaxListedMaskedRows);
    for (std::size_t r = 0; r < listed; ++r) {
      const int i = rows[r];
      line += (r == 0 ? " query " : ", query ") + std::to_string(i) + " \"" +
              display_label(request.query_tokens[static_cast<std::size_t>(i)]) + "\"";
    }
    if (rows.size() > listed) line += " and " + std::to_string(rows.size() - listed) + " more";
    lines.emplace_back(line, 0);
  };
  for (std::string& line : grid_mark_legend(request)) lines.emplace_back(std::move(line), 0);
  list_rows(texts.fully_masked_rows, "all keys masked");
  list_rows(texts.padding_rows, "padding query, white-hatched row (computed, but not a real token)");
  for (const std::string& note : layout_notes(request, layout)) lines.emplace_back(note, 0);
  return lines;
}

void place_panel(PanelLayout& panel, const Texts& texts, const FontSet& fonts, std::size_t p,
                 int query_label_px, int key_label_px) {
  const Rect& cells = panel.cells;
  const int title_px = texts.panel_title_widths[p];
  const int title_x = std::clamp(cells.x_px + (cells.width_px - title_px) / 2, panel.bounds.x_px,
                                 panel.bounds.right_px() - title_px);
  panel.title = {title_x, panel.bounds.y_px, title_px, line_px(fonts, kPanelTitleFontPx)};
  panel.query_labels = {cells.x_px - kLabelGapPx - query_label_px, cells.y_px, query_label_px,
                        cells.height_px};
  panel.key_labels = {cells.x_px, cells.bottom_px() + kLabelGapPx, cells.width_px, key_label_px};
  const int axis_line_px = line_px(fonts, kAxisTitleFontPx);
  panel.query_axis_title = {panel.bounds.x_px,
                            cells.y_px + std::max(0, (cells.height_px - texts.query_axis_px) / 2),
                            axis_line_px, texts.query_axis_px};
  panel.key_axis_title = {std::max(panel.bounds.x_px, cells.x_px + (cells.width_px - texts.key_axis_px) / 2),
                          panel.key_labels.bottom_px() + kAxisGapPx, texts.key_axis_px, axis_line_px};
}

void move_down(PanelLayout& panel, int dy_px) {
  for (Rect* rect : {&panel.cells, &panel.title, &panel.query_labels, &panel.key_labels, &panel.query_axis_title,
                     &panel.key_axis_title, &panel.bounds}) {
    rect->y_px += dy_px;
  }
}

// Where the colour bar (layout.colorbar's y and height) starts: beside the last column's cells,
// and right of any text of a last-column panel at the height of its strip or its lowest tick
// number. Panel titles may be wider than a small matrix: the first row's title sits above the
// strip, but a lower row's title stands beside it (issue 24: an empty text's 1 × 1 panels).
int colorbar_x(const GridLayout& layout, const ColorbarSize& colorbar) {
  const int top = layout.colorbar.y_px;
  const int bottom = layout.colorbar.bottom_px() + colorbar.overhang_px;
  int x = 0;
  for (std::size_t p = static_cast<std::size_t>(layout.panel_cols) - 1; p < layout.panels.size();
       p += static_cast<std::size_t>(layout.panel_cols)) {
    const PanelLayout& panel = layout.panels[p];
    x = std::max(x, panel.cells.right_px());
    for (const Rect& text : {panel.title, panel.key_labels, panel.key_axis_title}) {
      if (text.y_px < bottom && text.bottom_px() > top) x = std::max(x, text.right_px());
    }
  }
  return x + kColorbarGapPx;
}

// The whole layout for one choice of cell size and block; the caller checks whether it fits.
GridLayout place(const GridRequest& request, const FontSet& fonts, Texts& texts,
                 const ColorbarSize& colorbar, int cols, int cell_px, int block) {
  GridLayout layout = cell_grid(request, cols, cell_px, block);
  layout.label_font_px = std::clamp(cell_px - kLabelPaddingPx, kMinLabelFontPx, kMaxLabelFontPx);
  const int label_line_px = line_px(fonts, layout.label_font_px);
  layout.query_label_stride = label_stride(cell_px, label_line_px) * block;
  layout.key_label_stride = layout.query_label_stride;
  layout.annotation_font_px = request.annotate && block == 1 ? annotation_font(request, fonts, cell_px) : 0;
  const int plain_key_px = widest_label(texts.key_widths, texts.key_labels, fonts, layout.label_font_px, false);
  layout.key_labels_horizontal = block == 1 && plain_key_px + kMinLabelSpacingPx <= cell_px;
  if (layout.key_labels_horizontal) layout.key_label_stride = 1;
  layout.first_query_index = request.first_query_index;
  const int query_label_px = widest_label(texts.query_widths, texts.query_labels, fonts, layout.label_font_px,
                                          layout.query_label_stride > 1 || layout.first_query_index > 0,
                                          layout.first_query_index);
  const int widest_key_px = layout.key_label_stride > 1
                                ? widest_label(texts.key_widths, texts.key_labels, fonts, layout.label_font_px, true)
                                : plain_key_px;
  const int key_label_px = layout.key_labels_horizontal ? label_line_px : widest_key_px;

  const int axis_line_px = line_px(fonts, kAxisTitleFontPx);
  const int cells_w = layout.drawn_cols * cell_px, cells_h = layout.drawn_rows * cell_px;
  const int cells_dx = axis_line_px + kAxisGapPx + query_label_px + kLabelGapPx;
  const int cells_dy = line_px(fonts, kPanelTitleFontPx) + kTitleGapPx;
  const int panel_w = std::max({cells_dx + cells_w, texts.max_panel_title_px,
                                cells_dx + (cells_w + texts.max_panel_title_px + 1) / 2,
                                cells_dx + (cells_w + texts.key_axis_px + 1) / 2});
  const int panel_h = std::max(cells_dy + cells_h + kLabelGapPx + key_label_px + kAxisGapPx + axis_line_px,
                               cells_dy + texts.query_axis_px);
  const bool has_title = !request.figure_title.empty();
  const int grid_w = layout.panel_cols * panel_w + (layout.panel_cols - 1) * kPanelGapPx;
  // Panels first at y = 0: the figure title's height (hence grid_y) depends on the image width,
  // which depends on where the colour bar goes, which depends on the panels' text.
  for (std::size_t p = 0; p < request.panels.size(); ++p) {
    const int r = static_cast<int>(p) / layout.panel_cols, c = static_cast<int>(p) % layout.panel_cols;
    PanelLayout panel;
    panel.bounds = {kMarginPx + c * (panel_w + kPanelGapPx), r * (panel_h + kPanelGapPx), panel_w, panel_h};
    panel.cells = {panel.bounds.x_px + cells_dx, panel.bounds.y_px + cells_dy, cells_w, cells_h};
    place_panel(panel, texts, fonts, p, query_label_px, key_label_px);
    layout.panels.push_back(panel);
  }
  const int cells_span = (layout.panel_rows - 1) * (panel_h + kPanelGapPx) + cells_h;
  layout.colorbar = {0, cells_dy, colorbar.width_px, std::max(cells_span, colorbar.min_height_px)};
  layout.colorbar.x_px = colorbar_x(layout, colorbar);
  const int content_w = std::max(layout.colorbar.right_px(), kMarginPx + grid_w) + kMarginPx;
  // Titles and notes may widen the image up to its limit; beyond it they wrap.
  const int text_w = std::max(content_w, texts.max_side_px) - 2 * kMarginPx;
  if (has_title) layout.figure_title_lines = wrap_text(fonts, request.figure_title, kFigureTitleFontPx, text_w);
  const int title_h = static_cast<int>(layout.figure_title_lines.size()) * line_px(fonts, kFigureTitleFontPx);
  const int grid_y = kMarginPx + (has_title ? title_h + 2 * kTitleGapPx : 0);
  for (PanelLayout& panel : layout.panels) move_down(panel, grid_y);
  layout.colorbar.y_px += grid_y;
  const int grid_h = layout.panel_rows * panel_h + (layout.panel_rows - 1) * kPanelGapPx;
  const int content_bottom = std::max(grid_y + grid_h, layout.colorbar.bottom_px() + colorbar.overhang_px);

  for (const auto& [line, swatch] : legend_lines(request, texts, layout)) {
    bool first = true;
    for (std::string& part : wrap_text(fonts, line, kLegendFontPx, text_w - swatch_px(fonts) - kSwatchGapPx)) {
      layout.legend_lines.push_back(std::move(part));
      layout.legend_swatches.push_back(first ? swatch : 0);
      first = false;
    }
  }
  int legend_w = 0;
  for (const std::string& line : layout.legend_lines) {
    legend_w = std::max(legend_w, swatch_px(fonts) + kSwatchGapPx + fonts.text_width_px(line, kLegendFontPx));
  }
  const int legend_h = static_cast<int>(layout.legend_lines.size()) * line_px(fonts, kLegendFontPx);
  if (legend_h > 0) layout.legend = {kMarginPx, content_bottom + kLegendGapPx, legend_w, legend_h};
  int title_w = 0;
  for (const std::string& line : layout.figure_title_lines) {
    title_w = std::max(title_w, fonts.text_width_px(line, kFigureTitleFontPx));
  }
  layout.width_px = std::max({content_w, 2 * kMarginPx + title_w, 2 * kMarginPx + legend_w});
  layout.height_px = (legend_h > 0 ? layout.legend.bottom_px() : content_bottom) + kMarginPx;
  if (has_title) layout.figure_title = {(layout.width_px - title_w) / 2, kMarginPx, title_w, title_h};
  layout.query_labels = texts.query_labels;
  layout.key_labels = texts.key_labels;
  layout.panel_titles = texts.panel_titles;
  return layout;
}

// max(14, 480 / max(n_q, n_k)) capped at 48 (see layout_grid's contract).
int preferred_cell_px(const GridRequest& request) {
  const int n_max = static_cast<int>(std::max(request.query_tokens.size(), request.key_tokens.size()));
  return std::min(kMaxCellPx, std::max(kMinLabelledCellPx, kTargetPanelPx / n_max));
}

// The largest cell size, from the preferred one down to 1 px, at which `cols` columns fit
// max_side without aggregation; nullopt when none does.
std::optional<GridLayout> fit_cells(const GridRequest& request, const FontSet& fonts, Texts& texts,
                                    const ColorbarSize& colorbar, int cols, int max_side, int max_height) {
  int preferred = preferred_cell_px(request);
  // Few query rows in one row of panels: cells grow until the matrix is as tall as the colour
  // bar, which would otherwise stand many times taller than it (a single cell: 48 px beside 160).
  const int n_q = static_cast<int>(request.query_tokens.size());
  if (grid_shape(static_cast<int>(request.panels.size()), cols).first == 1) {
    preferred = std::max(preferred, std::min(kMaxStretchedCellPx, (colorbar.min_height_px + n_q - 1) / n_q));
  }
  for (int cell_px = preferred; cell_px >= 1; --cell_px) {
    GridLayout layout = place(request, fonts, texts, colorbar, cols, cell_px, 1);
    if (layout.width_px <= max_side && layout.height_px <= max_height) return layout;
  }
  return std::nullopt;
}

// The layout that fits max_side: the first column choice at the largest cell size that fits;
// if it fits only with aggregated cells, another column count that fits without (the largest
// cells win); else the smallest block that fits, in the first column count that fits at all.
// Throws LimitError::image_size when no column count fits even at 1 px per block of all cells.
GridLayout fit(const GridRequest& request, const FontSet& fonts, Texts& texts,
               const ColorbarSize& colorbar, int max_side, int max_height) {
  const auto fits = [&](const GridLayout& l) { return l.width_px <= max_side && l.height_px <= max_height; };
  const std::vector<int> choices = column_choices(request);
  std::optional<GridLayout> best;
  for (const int cols : choices) {
    std::optional<GridLayout> layout = fit_cells(request, fonts, texts, colorbar, cols, max_side, max_height);
    if (layout && (!best || layout->cell_px > best->cell_px)) best = std::move(layout);
    if (best && cols == choices.front()) return *best;  // the preferred columns fit: keep them
  }
  if (best) return *best;
  const int n_max = static_cast<int>(std::max(request.query_tokens.size(), request.key_tokens.size()));
  std::optional<GridLayout> smallest;  // the smallest labelled layout tried, for the messages
  for (const int cols : choices) {
    GridLayout coarsest = place(request, fonts, texts, colorbar, cols, 1, n_max);
    if (!fits(coarsest)) {
      // The one with the shortest longer side: the --max-size that would show the text.
      const auto side = [](const GridLayout& l) { return std::max(l.width_px, l.height_px); };
      if (!smallest || side(coarsest) < side(*smallest)) smallest = std::move(coarsest);
      continue;
    }
    int lo = 2, hi = n_max;  // invariant: block hi fits; find the smallest block that fits
    while (lo < hi) {
      const int mid = lo + (hi - lo) / 2;
      if (fits(place(request, fonts, texts, colorbar, cols, 1, mid))) hi = mid; else lo = mid + 1;
    }
    return place(request, fonts, texts, colorbar, cols, 1, hi);
  }
  // Below the size where text fits: the cells alone, said so by layout_notes (issue 24: a small
  // --max-size was refused with advice that heatmaps could not follow).
  std::optional<GridLayout> thumbnail = fit_thumbnail(request, choices, preferred_cell_px(request), max_side, max_height);
  if (thumbnail) {
    thumbnail->labelled_width_px = smallest->width_px;
    thumbnail->labelled_height_px = smallest->height_px;
    thumbnail->query_labels = texts.query_labels;  // not drawn; the HTML report shows its own
    thumbnail->key_labels = texts.key_labels;
    thumbnail->panel_titles = texts.panel_titles;
    return *thumbnail;
  }
  throw LimitError::image_size(
      "the grid of " + counted(static_cast<long long>(request.panels.size()), request.panel_noun),
      smallest->width_px, smallest->height_px, max_height < max_side ? max_height : max_side,
      "even as a thumbnail without text at 1 px per cell; raise --max-size (at most " + std::to_string(kMaxSidePx) +
          ")");
}

}  // namespace

GridLayout cell_grid(const GridRequest& request, int cols, int cell_px, int block) {
  GridLayout layout;
  layout.n_q = static_cast<int>(request.query_tokens.size());
  layout.n_k = static_cast<int>(request.key_tokens.size());
  std::tie(layout.panel_rows, layout.panel_cols) = grid_shape(static_cast<int>(request.panels.size()), cols);
  layout.cell_px = cell_px;
  layout.block = block;
  layout.drawn_rows = (layout.n_q + block - 1) / block;
  layout.drawn_cols = (layout.n_k + block - 1) / block;
  return layout;
}

const MaskMatrix& mask_or_empty(const SharedMask& mask) {
  static const MaskMatrix kEmpty;
  return mask ? *mask : kEmpty;
}

GridLayout layout_grid(const GridRequest& request, const FontSet& fonts) {
  assert(!request.panels.empty() && !request.query_tokens.empty() && !request.key_tokens.empty());
  colormap_by_name(request.cmap);  // an unknown name is a UsageError before any work
  const Eigen::Index n_q = static_cast<Eigen::Index>(request.query_tokens.size());
  const Eigen::Index n_k = static_cast<Eigen::Index>(request.key_tokens.size());
  const std::vector<ValueRange> ranges =
      request.range ? std::vector<ValueRange>(request.panels.size(), *request.range)
      : request.exclude_sink ? panel_ranges(request.panels, without_sink(allowed_cells(request), n_q, n_k, request.first_query_index), request.scale)
                             : panel_ranges(request.panels, allowed_cells(request), request.scale);
  const ColorbarScale scale = colorbar_scale(request.scale, ranges, request.panel_noun);
  const ColorbarSize colorbar = measure_colorbar(fonts, scale, request.colorbar_label);
  Texts texts = measure_texts(request, fonts, ranges);
  const int max_side = std::clamp(request.max_size_px, 1, kMaxSidePx);
  texts.max_side_px = max_side;
  const int max_height = request.max_height_px > 0 ? std::min(request.max_height_px, max_side) : max_side;
  GridLayout layout = fit(request, fonts, texts, colorbar, max_side, max_height);
  const double bytes = picture_bytes(layout.width_px, layout.height_px, layout.drawn_rows, layout.drawn_cols);
  if (bytes > request.max_memory_bytes) {
    throw LimitError::memory("the " + std::to_string(layout.width_px) + " x " +
                                 std::to_string(layout.height_px) + " px grid image" + request.memory_note,
                             bytes, request.max_memory_bytes, "--max-memory");
  }
  layout.ranges = ranges;
  layout.colorbar_scale = scale;
  return layout;
}

double picture_bytes(int width_px, int height_px, long drawn_rows, long drawn_cols) {
  constexpr double kPngBytesPerPixel = 1;  // encoded heatmaps are far smaller; bounds the output
  constexpr double kDrawnCellBytes = sizeof(Scalar) + sizeof(std::uint8_t);
  return static_cast<double>(width_px) * height_px * (kRgbBytesPerPixel + kPngBytesPerPixel) +
         static_cast<double>(drawn_rows) * static_cast<double>(drawn_cols) * kDrawnCellBytes;
}

std::string drawn_query_label(const GridLayout& layout, int i) {
  const std::string& label = layout.query_labels.at(static_cast<std::size_t>(i));
  const bool indexed = layout.query_label_stride > 1 || layout.first_query_index > 0;
  return indexed ? indexed_label(layout.first_query_index + i, label) : label;
}

std::string drawn_key_label(const GridLayout& layout, int j) {
  const std::string& label = layout.key_labels.at(static_cast<std::size_t>(j));
  return layout.key_label_stride > 1 ? indexed_label(j, label) : label;
}

Point cell_centre_px(const GridLayout& layout, int panel, int row, int col) {
  const Rect& cells = layout.panels.at(static_cast<std::size_t>(panel)).cells;
  return {cells.x_px + (col / layout.block) * layout.cell_px + layout.cell_px / 2,
          cells.y_px + (row / layout.block) * layout.cell_px + layout.cell_px / 2};
}

}  // namespace attnviz
