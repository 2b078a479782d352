#include "render/overview.hpp"

#include <algorithm>
#include <cassert>

#include "core/error.hpp"
#include "render/colorbar.hpp"
#include "render/colormap.hpp"
#include "render/head_grid.hpp"

namespace attnviz {

namespace {

// Maps are small multiples: cells up to kMaxCellPx, maps near kTargetMapPx for short inputs.
constexpr int kMaxCellPx = 12;
constexpr int kTargetMapPx = 160;
constexpr int kMarginPx = 16;
constexpr int kTitleFontPx = 18;
constexpr int kLabelFontPx = 13;
constexpr int kLegendFontPx = 13;
constexpr int kTitleGapPx = 10;
constexpr int kLabelGapPx = 6;      // between a label and its map
constexpr int kMapGapPx = 4;        // between neighbouring maps
constexpr int kMeanGapPx = 20;      // sets the mean column apart from the heads
constexpr int kColorbarGapPx = 24;
constexpr int kLegendGapPx = 12;
// What overview_cells_per_side sets aside of the side for labels, colour bar and margins.
constexpr int kReservedSidePx = 320;
// Beyond this many cells per side a map is no longer an overview (and 32 × 33 maps of it would
// cost 330 MiB while the model runs).
constexpr int kMaxCellsPerSide = 256;
constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kTextColour{34, 34, 34};
constexpr Rgb kNoteColour{80, 80, 80};
const char* const kTimes = " \u00D7 ";

int widest(const FontSet& fonts, const std::vector<std::string>& texts, int font_px) {
  int width_px = 0;
  for (const std::string& text : texts) width_px = std::max(width_px, fonts.text_width_px(text, font_px));
  return width_px;
}

int line_px(const FontSet& fonts, int font_px) { return fonts.line_metrics(font_px).line_height_px; }

// The geometry for one cell size and extra aggregation factor.
struct Layout {
  int cell_px = 1, factor = 1;
  int drawn_rows = 0, drawn_cols = 0;
  int map_w = 0, map_h = 0, column_pitch = 0, row_pitch = 0, mean_w = 0;
  int maps_x = 0, maps_y = 0;
  Rect colorbar, legend;
  int width_px = 0, height_px = 0;
};

struct Measures {
  int row_label_px = 0, column_label_px = 0, mean_label_px = 0, title_px = 0, legend_px = 0;
  int legend_lines = 0;
  ColorbarSize colorbar;
};

Layout place(const OverviewRequest& r, const Measures& m, const FontSet& fonts, int cell_px, int factor) {
  Layout l;
  l.cell_px = cell_px;
  l.factor = factor;
  const DrawnCells& first = r.maps.front().front();
  l.drawn_rows = static_cast<int>((first.values.rows() + factor - 1) / factor);
  l.drawn_cols = static_cast<int>((first.values.cols() + factor - 1) / factor);
  l.map_w = l.drawn_cols * cell_px;
  l.map_h = l.drawn_rows * cell_px;
  const int label_line = line_px(fonts, kLabelFontPx);
  l.column_pitch = std::max(l.map_w, m.column_label_px) + kMapGapPx;
  l.row_pitch = std::max(l.map_h, label_line) + kMapGapPx;
  l.mean_w = r.means.empty() ? 0 : std::max(l.map_w, m.mean_label_px);
  l.maps_x = kMarginPx + m.row_label_px + kLabelGapPx;
  l.maps_y = kMarginPx + (r.figure_title.empty() ? 0 : line_px(fonts, kTitleFontPx) + kTitleGapPx) + label_line + kLabelGapPx;
  const int heads = static_cast<int>(r.column_labels.size()), layers = static_cast<int>(r.row_labels.size());
  const int grid_w = heads * l.column_pitch - kMapGapPx + (r.means.empty() ? 0 : kMeanGapPx + l.mean_w);
  const int grid_h = layers * l.row_pitch - kMapGapPx;
  l.colorbar = {l.maps_x + grid_w + kColorbarGapPx, l.maps_y, m.colorbar.width_px,
                std::max(grid_h, m.colorbar.min_height_px)};
  const int content_bottom = std::max(l.maps_y + grid_h, l.colorbar.bottom_px() + m.colorbar.overhang_px);
  l.legend = {kMarginPx, content_bottom + kLegendGapPx, m.legend_px, m.legend_lines * line_px(fonts, kLegendFontPx)};
  l.width_px = std::max({l.colorbar.right_px() + kMarginPx, 2 * kMarginPx + m.title_px, 2 * kMarginPx + m.legend_px});
  l.height_px = l.legend.bottom_px() + kMarginPx;
  return l;
}

std::vector<std::string> notes(const OverviewRequest& r, int block, bool any_masked) {
  std::vector<std::string> lines{"rows: layers (" + r.row_labels.front() +
                                 " at the top) \u00B7 columns: heads \u00B7 each map: queries down, keys across"};
  if (block > 1) {
    lines.push_back("each pixel shows the max over " + std::to_string(block) + kTimes + std::to_string(block) + " cells (" +
                    std::to_string(r.n_q) + kTimes + std::to_string(r.n_k) + " cells per map do not fit)");
  }
  if (any_masked) lines.push_back("grey hatched: masked (causal/padding), not attended");
  return lines;
}

bool any_masked(const OverviewRequest& r) {
  const MaskMatrix& allowed = r.maps.front().front().allowed;
  return allowed.size() != 0 && (allowed.array() == 0).any();
}

Layout fit(const OverviewRequest& r, Measures& m, const FontSet& fonts, int max_side) {
  const auto fits = [&](const Layout& l) { return l.width_px <= max_side && l.height_px <= max_side; };
  const DrawnCells& first = r.maps.front().front();
  const int drawn_max = static_cast<int>(std::max(first.values.rows(), first.values.cols()));
  // The legend says whether cells are aggregated, so it is measured for each candidate block.
  const auto measure_legend = [&](int factor) {
    const std::vector<std::string> lines = notes(r, r.base_block * factor, any_masked(r));
    m.legend_px = widest(fonts, lines, kLegendFontPx);
    m.legend_lines = static_cast<int>(lines.size());
  };
  measure_legend(1);
  const int preferred = std::clamp(kTargetMapPx / drawn_max, 1, kMaxCellPx);
  for (int cell_px = preferred; cell_px >= 1; --cell_px) {
    const Layout l = place(r, m, fonts, cell_px, 1);
    if (fits(l)) return l;
  }
  for (int factor = 2; factor <= drawn_max; ++factor) {
    measure_legend(factor);
    const Layout l = place(r, m, fonts, 1, factor);
    if (fits(l)) return l;
  }
  const Layout coarsest = place(r, m, fonts, 1, drawn_max);
  throw LimitError::image_size("the overview of " + std::to_string(r.row_labels.size()) + " layers" + kTimes +
                                   std::to_string(r.column_labels.size()) + " heads",
                               coarsest.width_px, coarsest.height_px, max_side,
                               "even at 1 px per map cell; raise --max-size (at most " + std::to_string(kMaxSidePx) +
                                   ") or choose fewer layers with --layers");
}

void draw_map(Image& image, const DrawnCells& cells, int factor, Point origin, int cell_px, const Colormap& colormap) {
  const ValueRange fixed{0, 1};
  if (factor == 1) return draw_cells(image, cells, origin, cell_px, fixed, colormap);
  draw_cells(image, aggregate_cells(cells.values, cells.allowed, factor, false), origin, cell_px, fixed, colormap);
}

}  // namespace

int overview_cells_per_side(int columns, int max_size_px) {
  const int side = std::clamp(max_size_px, 1, kMaxSidePx) - kReservedSidePx - kMeanGapPx;
  return std::clamp(side / std::max(columns, 1) - kMapGapPx, 1, kMaxCellsPerSide);
}

RenderedOverview render_overview(const OverviewRequest& r, const FontSet& fonts) {
  assert(!r.maps.empty() && !r.maps.front().empty() && r.maps.size() == r.row_labels.size());
  const Colormap& colormap = colormap_by_name(r.cmap);
  const ColorbarScale scale = colorbar_scale(ScaleMode::Fixed, {ValueRange{0, 1}});
  const std::string colorbar_label = "attention weight";
  Measures m;
  m.row_label_px = widest(fonts, r.row_labels, kLabelFontPx);
  m.column_label_px = widest(fonts, r.column_labels, kLabelFontPx);
  m.mean_label_px = r.means.empty() ? 0 : fonts.text_width_px(r.mean_label, kLabelFontPx);
  m.title_px = fonts.text_width_px(r.figure_title, kTitleFontPx);
  m.colorbar = measure_colorbar(fonts, scale, colorbar_label);
  const Layout l = fit(r, m, fonts, std::clamp(r.max_size_px, 1, kMaxSidePx));
  const double bytes = picture_bytes(l.width_px, l.height_px, l.drawn_rows, l.drawn_cols);
  if (bytes > r.max_memory_bytes) {
    throw LimitError::memory("the " + std::to_string(l.width_px) + " x " + std::to_string(l.height_px) +
                                 " px overview image", bytes, r.max_memory_bytes, "--max-memory");
  }

  RenderedOverview out;
  out.image = Image(l.width_px, l.height_px, kBackground);
  out.cell_px = l.cell_px;
  out.block = r.base_block * l.factor;
  out.map_px = l.map_w;
  out.notes = notes(r, out.block, any_masked(r));
  const int label_line = line_px(fonts, kLabelFontPx);
  const int mean_x = l.maps_x + static_cast<int>(r.column_labels.size()) * l.column_pitch - kMapGapPx + kMeanGapPx;
  for (std::size_t h = 0; h < r.column_labels.size(); ++h) {
    const int centre = l.maps_x + static_cast<int>(h) * l.column_pitch + l.map_w / 2;
    const int width = fonts.text_width_px(r.column_labels[h], kLabelFontPx);
    fonts.draw(out.image, r.column_labels[h], centre - width / 2, l.maps_y - kLabelGapPx - label_line, kLabelFontPx, kTextColour);
  }
  if (!r.means.empty()) {
    fonts.draw(out.image, r.mean_label, mean_x + (l.mean_w - m.mean_label_px) / 2, l.maps_y - kLabelGapPx - label_line,
               kLabelFontPx, kTextColour);
  }
  for (std::size_t layer = 0; layer < r.maps.size(); ++layer) {
    const int y = l.maps_y + static_cast<int>(layer) * l.row_pitch;
    const int label_w = fonts.text_width_px(r.row_labels[layer], kLabelFontPx);
    fonts.draw(out.image, r.row_labels[layer], l.maps_x - kLabelGapPx - label_w, y + (l.map_h - label_line) / 2,
               kLabelFontPx, kTextColour);
    std::vector<Rect> rects;
    for (std::size_t h = 0; h < r.maps[layer].size(); ++h) {
      const Point origin{l.maps_x + static_cast<int>(h) * l.column_pitch, y};
      draw_map(out.image, r.maps[layer][h], l.factor, origin, l.cell_px, colormap);
      rects.push_back({origin.x_px, origin.y_px, l.map_w, l.map_h});
    }
    if (!r.means.empty()) {
      const Point origin{mean_x + (l.mean_w - l.map_w) / 2, y};
      draw_map(out.image, r.means[layer], l.factor, origin, l.cell_px, colormap);
      rects.push_back({origin.x_px, origin.y_px, l.map_w, l.map_h});
    }
    out.map_rects.push_back(std::move(rects));
  }
  draw_colorbar(out.image, fonts, l.colorbar, scale, colormap, colorbar_label);
  if (!r.figure_title.empty()) {
    fonts.draw(out.image, r.figure_title, (l.width_px - m.title_px) / 2, kMarginPx, kTitleFontPx, kTextColour);
  }
  int y = l.legend.y_px;
  for (const std::string& line : out.notes) {
    fonts.draw(out.image, line, l.legend.x_px, y, kLegendFontPx, kNoteColour);
    y += line_px(fonts, kLegendFontPx);
  }
  return out;
}

}  // namespace attnviz
