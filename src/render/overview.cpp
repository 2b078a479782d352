#include "render/overview.hpp"

#include <algorithm>
#include <cassert>
#include <optional>

#include "core/counted.hpp"
#include "core/error.hpp"
#include "render/colorbar.hpp"
#include "render/colormap.hpp"
#include "render/head_grid.hpp"
#include "render/wrap_text.hpp"

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
// A thumbnail (no text fits): a frame's width of margin, a narrower gap before the mean column.
constexpr int kThumbnailMarginPx = 2;
constexpr int kThumbnailMeanGapPx = 8;
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

// The geometry for one cell size and extra aggregation factor. A thumbnail has no text at all:
// no labels, title, colour bar or legend (nothing else fits the size limit).
struct Layout {
  int cell_px = 1, factor = 1;
  bool thumbnail = false;
  int drawn_rows = 0, drawn_cols = 0;
  int map_w = 0, map_h = 0, column_pitch = 0, row_pitch = 0, mean_w = 0, mean_gap = 0;
  int maps_x = 0, maps_y = 0;
  std::vector<std::string> title_lines, legend_lines;  // wrapped to the image's width limit
  Rect colorbar, legend;
  int width_px = 0, height_px = 0;
};

struct Measures {
  int row_label_px = 0, column_label_px = 0, mean_label_px = 0;
  ColorbarSize colorbar;
  int max_side_px = kMaxSidePx;  // titles and legend lines wider than this wrap
};

std::vector<std::string> notes(const OverviewRequest& r, int block, bool any_masked) {
  std::vector<std::string> lines{"rows: layers (" + r.row_labels.front() +
                                 " at the top) \u00B7 columns: heads \u00B7 each map: queries down, keys across"};
  if (block > 1) {
    lines.push_back("each pixel shows the max over " + std::to_string(block) + kTimes + std::to_string(block) + " cells (" +
                    std::to_string(r.n_q) + kTimes + std::to_string(r.n_k) + " cells per map do not fit)");
  }
  if (any_masked) lines.push_back("grey hatched: masked (causal/padding), not attended");
  if (!r.mask_note.empty()) lines.push_back(r.mask_note);
  return lines;
}

bool any_masked(const OverviewRequest& r) {
  const MaskMatrix& allowed = r.maps.front().front().allowed;
  return allowed.size() != 0 && (allowed.array() == 0).any();
}

std::vector<std::string> wrapped(const FontSet& fonts, const std::vector<std::string>& lines, int font_px, int width_px) {
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    for (std::string& part : wrap_text(fonts, line, font_px, width_px)) out.push_back(std::move(part));
  }
  return out;
}

Layout place(const OverviewRequest& r, const Measures& m, const FontSet& fonts, int cell_px, int factor, bool thumbnail) {
  Layout l;
  l.cell_px = cell_px;
  l.factor = factor;
  l.thumbnail = thumbnail;
  const DrawnCells& first = r.maps.front().front();
  l.drawn_rows = static_cast<int>((first.values.rows() + factor - 1) / factor);
  l.drawn_cols = static_cast<int>((first.values.cols() + factor - 1) / factor);
  l.map_w = l.drawn_cols * cell_px;
  l.map_h = l.drawn_rows * cell_px;
  const int margin = thumbnail ? kThumbnailMarginPx : kMarginPx;
  const int label_line = thumbnail ? 0 : line_px(fonts, kLabelFontPx);
  l.column_pitch = std::max(l.map_w, thumbnail ? 0 : m.column_label_px) + kMapGapPx;
  l.row_pitch = std::max(l.map_h, label_line) + kMapGapPx;
  l.mean_w = r.means.empty() ? 0 : std::max(l.map_w, thumbnail ? 0 : m.mean_label_px);
  l.mean_gap = thumbnail ? kThumbnailMeanGapPx : kMeanGapPx;
  l.maps_x = margin + (thumbnail ? 0 : m.row_label_px + kLabelGapPx);
  const int heads = static_cast<int>(r.column_labels.size()), layers = static_cast<int>(r.row_labels.size());
  const int grid_w = heads * l.column_pitch - kMapGapPx + (r.means.empty() ? 0 : l.mean_gap + l.mean_w);
  const int grid_h = layers * l.row_pitch - kMapGapPx;
  if (thumbnail) {
    l.maps_y = margin;
    l.width_px = l.maps_x + grid_w + margin;
    l.height_px = l.maps_y + grid_h + margin;
    return l;
  }
  const int colorbar_x = l.maps_x + grid_w + kColorbarGapPx;
  const int content_w = colorbar_x + m.colorbar.width_px + kMarginPx;
  // The title and notes may widen the image up to its limit; beyond it they wrap.
  const int text_w = std::max(content_w, m.max_side_px) - 2 * kMarginPx;
  if (!r.figure_title.empty()) l.title_lines = wrap_text(fonts, r.figure_title, kTitleFontPx, text_w);
  l.legend_lines = wrapped(fonts, notes(r, r.base_block * factor, any_masked(r)), kLegendFontPx, text_w);
  const int title_h = static_cast<int>(l.title_lines.size()) * line_px(fonts, kTitleFontPx);
  l.maps_y = kMarginPx + (l.title_lines.empty() ? 0 : title_h + kTitleGapPx) + label_line + kLabelGapPx;
  l.colorbar = {colorbar_x, l.maps_y, m.colorbar.width_px, std::max(grid_h, m.colorbar.min_height_px)};
  const int content_bottom = std::max(l.maps_y + grid_h, l.colorbar.bottom_px() + m.colorbar.overhang_px);
  const int title_px = widest(fonts, l.title_lines, kTitleFontPx), legend_px = widest(fonts, l.legend_lines, kLegendFontPx);
  l.legend = {kMarginPx, content_bottom + kLegendGapPx, legend_px,
              static_cast<int>(l.legend_lines.size()) * line_px(fonts, kLegendFontPx)};
  l.width_px = std::max({content_w, 2 * kMarginPx + title_px, 2 * kMarginPx + legend_px});
  l.height_px = l.legend.bottom_px() + kMarginPx;
  return l;
}

// The largest cells up to `preferred` at no extra aggregation, else the smallest factor that
// fits at 1 px per cell; nullopt when nothing fits.
std::optional<Layout> fit_maps(const OverviewRequest& r, const Measures& m, const FontSet& fonts, bool thumbnail) {
  const auto fits = [&](const Layout& l) { return l.width_px <= m.max_side_px && l.height_px <= m.max_side_px; };
  const DrawnCells& first = r.maps.front().front();
  const int drawn_max = static_cast<int>(std::max(first.values.rows(), first.values.cols()));
  const int preferred = std::clamp(kTargetMapPx / drawn_max, 1, kMaxCellPx);
  for (int cell_px = preferred; cell_px >= 1; --cell_px) {
    Layout l = place(r, m, fonts, cell_px, 1, thumbnail);
    if (fits(l)) return l;
  }
  for (int factor = 2; factor <= drawn_max; ++factor) {
    Layout l = place(r, m, fonts, 1, factor, thumbnail);
    if (fits(l)) return l;
  }
  return std::nullopt;
}

// The labelled layout that fits; below the size where its text fits, a thumbnail of the maps
// alone (issue 24); LimitError::image_size when not even that fits.
Layout fit(const OverviewRequest& r, const Measures& m, const FontSet& fonts) {
  if (std::optional<Layout> labelled = fit_maps(r, m, fonts, false)) return *labelled;
  if (std::optional<Layout> thumbnail = fit_maps(r, m, fonts, true)) return *thumbnail;
  const DrawnCells& first = r.maps.front().front();
  const int drawn_max = static_cast<int>(std::max(first.values.rows(), first.values.cols()));
  const Layout coarsest = place(r, m, fonts, 1, drawn_max, true);
  throw LimitError::image_size("the overview of " + counted(static_cast<long long>(r.row_labels.size()), "layer") +
                                   kTimes + counted(static_cast<long long>(r.column_labels.size()), "head"),
                               coarsest.width_px, coarsest.height_px, m.max_side_px,
                               "even as a thumbnail without text at 1 px per map; raise --max-size (at most " +
                                   std::to_string(kMaxSidePx) + ") or choose fewer layers with --layers");
}

void draw_map(Image& image, const DrawnCells& cells, int factor, Point origin, int cell_px, const Colormap& colormap) {
  const ValueRange fixed{0, 1};
  if (factor == 1) return draw_cells(image, cells, origin, cell_px, fixed, colormap);
  draw_cells(image, aggregate_cells(cells.values, cells.allowed, factor, false), origin, cell_px, fixed, colormap);
}

// The head labels above the maps, the mean column's header and the layer labels beside them.
void draw_labels(Image& image, const OverviewRequest& r, const Measures& m, const Layout& l, const FontSet& fonts,
                 int mean_x) {
  const int label_line = line_px(fonts, kLabelFontPx);
  const int labels_y = l.maps_y - kLabelGapPx - label_line;
  for (std::size_t h = 0; h < r.column_labels.size(); ++h) {
    const int centre = l.maps_x + static_cast<int>(h) * l.column_pitch + l.map_w / 2;
    const int width = fonts.text_width_px(r.column_labels[h], kLabelFontPx);
    fonts.draw(image, r.column_labels[h], centre - width / 2, labels_y, kLabelFontPx, kTextColour);
  }
  if (!r.means.empty()) {
    fonts.draw(image, r.mean_label, mean_x + (l.mean_w - m.mean_label_px) / 2, labels_y, kLabelFontPx, kTextColour);
  }
  for (std::size_t layer = 0; layer < r.maps.size(); ++layer) {
    const int y = l.maps_y + static_cast<int>(layer) * l.row_pitch;
    const int label_w = fonts.text_width_px(r.row_labels[layer], kLabelFontPx);
    fonts.draw(image, r.row_labels[layer], l.maps_x - kLabelGapPx - label_w, y + (l.map_h - label_line) / 2,
               kLabelFontPx, kTextColour);
  }
}

}  // namespace

int overview_cells_per_side(int columns, int max_size_px) {
  // What the thumbnail's maps could use (a labelled picture's are smaller): at a small
  // --max-size the picture is a thumbnail, which would otherwise show early-aggregated maps.
  const int side = std::clamp(max_size_px, 1, kMaxSidePx) - 2 * kThumbnailMarginPx - kThumbnailMeanGapPx;
  return std::clamp(side / std::max(columns, 1) - kMapGapPx, 1, kMaxCellsPerSide);
}

RenderedOverview render_overview(const OverviewRequest& r, const FontSet& fonts) {
  assert(!r.maps.empty() && !r.maps.front().empty() && r.maps.size() == r.row_labels.size());
  const Colormap& colormap = colormap_by_name(r.cmap);
  const ColorbarScale scale = colorbar_scale(ScaleMode::Fixed, {ValueRange{0, 1}});
  const std::string& colorbar_label = r.colorbar_label;
  Measures m;
  m.row_label_px = widest(fonts, r.row_labels, kLabelFontPx);
  m.column_label_px = widest(fonts, r.column_labels, kLabelFontPx);
  m.mean_label_px = r.means.empty() ? 0 : fonts.text_width_px(r.mean_label, kLabelFontPx);
  m.colorbar = measure_colorbar(fonts, scale, colorbar_label);
  m.max_side_px = std::clamp(r.max_size_px, 1, kMaxSidePx);
  const Layout l = fit(r, m, fonts);
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
  out.thumbnail = l.thumbnail;
  out.notes = notes(r, out.block, any_masked(r));
  if (l.thumbnail) {
    const Layout labelled = place(r, m, fonts, 1, l.factor, false);
    out.warnings.push_back("drawn as a " + std::to_string(l.width_px) + kTimes + std::to_string(l.height_px) +
                           " px thumbnail of its maps alone: with its labels, title and colour bar it needs at least " +
                           std::to_string(labelled.width_px) + kTimes + std::to_string(labelled.height_px) +
                           " px (raise --max-size to see them)");
  }
  if (out.block > 1) out.warnings.push_back(out.notes[1]);
  const int mean_x = l.maps_x + static_cast<int>(r.column_labels.size()) * l.column_pitch - kMapGapPx + l.mean_gap;
  for (std::size_t layer = 0; layer < r.maps.size(); ++layer) {
    const int y = l.maps_y + static_cast<int>(layer) * l.row_pitch;
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
  if (l.thumbnail) return out;
  draw_labels(out.image, r, m, l, fonts, mean_x);
  draw_colorbar(out.image, fonts, l.colorbar, scale, colormap, colorbar_label);
  int y = kMarginPx;
  for (const std::string& line : l.title_lines) {  // each line centred
    fonts.draw(out.image, line, (l.width_px - fonts.text_width_px(line, kTitleFontPx)) / 2, y, kTitleFontPx, kTextColour);
    y += line_px(fonts, kTitleFontPx);
  }
  y = l.legend.y_px;
  for (const std::string& line : l.legend_lines) {
    fonts.draw(out.image, line, l.legend.x_px, y, kLegendFontPx, kNoteColour);
    y += line_px(fonts, kLegendFontPx);
  }
  return out;
}

}  // namespace attnviz
