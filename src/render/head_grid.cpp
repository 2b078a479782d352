// The drawing of the head grid: render_grid() of head_grid.hpp paints the panels, colour bar,
// titles and legend where layout_grid() (head_grid_layout.cpp) placed them.
#include "render/head_grid.hpp"

#include <algorithm>
#include <stdexcept>

#include "render/colorbar.hpp"
#include "render/colormap.hpp"
#include "render/grid_marks.hpp"
#include "render/grid_notes.hpp"
#include "render/head_grid_internal.hpp"
#include "render/heatmap.hpp"

namespace attnviz {

namespace {

constexpr int kTickLengthPx = 3;  // tick marks from the cells towards their token labels
constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kTextColour{34, 34, 34};
constexpr Rgb kNoteColour{80, 80, 80};
constexpr Rgb kFrameColour{64, 64, 64};
constexpr Rgb kPaddingHatch{255, 255, 255};  // over the colours of a padding query's row

void draw_query_labels(Image& image, const FontSet& fonts, const GridLayout& layout,
                       const PanelLayout& panel) {
  const LineMetrics line = fonts.line_metrics(layout.label_font_px);
  const int right_px = panel.query_labels.right_px();
  for (int i = 0; i < layout.n_q; i += layout.query_label_stride) {
    const std::string text = drawn_query_label(layout, i);
    const int centre_y = panel.cells.y_px + (i / layout.block) * layout.cell_px + layout.cell_px / 2;
    image.fill_rect({panel.cells.x_px - kTickLengthPx, centre_y, kTickLengthPx, 1}, kFrameColour);
    fonts.draw(image, text, right_px - fonts.text_width_px(text, layout.label_font_px),
               centre_y - line.line_height_px / 2, layout.label_font_px, kTextColour);
  }
}

void draw_key_labels(Image& image, const FontSet& fonts, const GridLayout& layout,
                     const PanelLayout& panel) {
  const LineMetrics line = fonts.line_metrics(layout.label_font_px);
  const int top_px = panel.key_labels.y_px;
  for (int j = 0; j < layout.n_k; j += layout.key_label_stride) {
    const std::string text = drawn_key_label(layout, j);
    const int centre_x = panel.cells.x_px + (j / layout.block) * layout.cell_px + layout.cell_px / 2;
    image.fill_rect({centre_x, panel.cells.bottom_px(), 1, kTickLengthPx}, kFrameColour);
    const int width_px = fonts.text_width_px(text, layout.label_font_px);
    if (layout.key_labels_horizontal) {
      fonts.draw(image, text, centre_x - width_px / 2, top_px, layout.label_font_px, kTextColour);
      continue;
    }
    // Rotated to read upwards and right-aligned against the cells, as matplotlib's rotation=90.
    fonts.draw_vertical(image, text, centre_x - line.line_height_px / 2,
                        top_px + width_px, layout.label_font_px, kTextColour);
  }
}

void draw_frame(Image& image, const Rect& inside) {
  image.fill_rect({inside.x_px - 1, inside.y_px - 1, inside.width_px + 2, 1}, kFrameColour);
  image.fill_rect({inside.x_px - 1, inside.bottom_px(), inside.width_px + 2, 1}, kFrameColour);
  image.fill_rect({inside.x_px - 1, inside.y_px, 1, inside.height_px}, kFrameColour);
  image.fill_rect({inside.right_px(), inside.y_px, 1, inside.height_px}, kFrameColour);
}

// Padding query rows: white hatch lines over their computed colours (every kHatchPeriodPx along
// x + y, as the masked hatch), so the values stay visible but the row reads as "not a token".
// A drawn row is hatched when every query it aggregates is padding.
void hatch_padding_rows(Image& image, const GridRequest& request, const GridLayout& layout,
                        const PanelLayout& panel) {
  if (request.query_mask.empty()) return;
  for (int r = 0; r < layout.drawn_rows; ++r) {
    const int first = r * layout.block, end = std::min(layout.n_q, first + layout.block);
    bool padding = true;
    for (int i = first; i < end && padding; ++i) padding = request.query_mask[static_cast<std::size_t>(i)] == 0;
    if (!padding) continue;
    for (int dy = 0; dy < layout.cell_px; ++dy) {
      const int y = r * layout.cell_px + dy;
      for (int x = (kHatchPeriodPx - y % kHatchPeriodPx) % kHatchPeriodPx; x < panel.cells.width_px;
           x += kHatchPeriodPx) {
        image.set(panel.cells.x_px + x, panel.cells.y_px + y, kPaddingHatch);
      }
    }
  }
}

void draw_panel(Image& image, const GridRequest& request, const FontSet& fonts,
                const GridLayout& layout, std::size_t p, const Colormap& colormap) {
  const PanelLayout& panel = layout.panels[p];
  const MaskMatrix& allowed = p < request.panel_allowed.size() && request.panel_allowed[p]
                                  ? *request.panel_allowed[p]
                                  : allowed_cells(request);
  const bool given = p < request.drawn.size() && request.drawn[p];
  if (given && request.drawn_block != layout.block)
    throw std::logic_error("render_grid: panel cells aggregated at block " + std::to_string(request.drawn_block) +
                           ", the layout draws blocks of " + std::to_string(layout.block));
  DrawnCells aggregated;
  if (!given)
    aggregated = aggregate_cells(*request.panels[p], allowed, layout.block, request.scale == ScaleMode::Symmetric,
                                 mask_or_empty(request.one_run_masked));
  const DrawnCells& cells = given ? *request.drawn[p] : aggregated;
  const Point origin{panel.cells.x_px, panel.cells.y_px};
  draw_cells(image, cells, origin, layout.cell_px, layout.ranges[p], colormap);
  hatch_padding_rows(image, request, layout, panel);
  if (layout.annotation_font_px > 0) {
    draw_values(image, cells, origin, layout.cell_px, layout.annotation_font_px, fonts,
                layout.ranges[p], colormap, request.significant_values);
  }
  draw_frame(image, panel.cells);
  for (const Rect& mark : grid_mark_rects(request, layout, panel)) image.fill_rect(mark, kMarkColour);
  if (layout.thumbnail) return;
  draw_query_labels(image, fonts, layout, panel);
  draw_key_labels(image, fonts, layout, panel);
  fonts.draw(image, layout.panel_titles[p], panel.title.x_px, panel.title.y_px, kPanelTitleFontPx,
             kTextColour);
  fonts.draw_vertical(image, request.query_axis_title, panel.query_axis_title.x_px,
                      panel.query_axis_title.bottom_px(), kAxisTitleFontPx, kNoteColour);
  fonts.draw(image, request.key_axis_title, panel.key_axis_title.x_px, panel.key_axis_title.y_px,
             kAxisTitleFontPx, kNoteColour);
}

void draw_legend(Image& image, const FontSet& fonts, const GridLayout& layout) {
  const LineMetrics line = fonts.line_metrics(kLegendFontPx);
  const int side_px = swatch_px(fonts);
  int y = layout.legend.y_px;
  for (std::size_t l = 0; l < layout.legend_lines.size(); ++l) {
    if (layout.legend_swatches[l] != 0) {
      // A small masked cell: drawn by the heatmaps' own cell drawing, so fill and hatch agree.
      DrawnCells swatch{Matrix::Zero(1, 1), MaskMatrix::Constant(1, 1, layout.legend_swatches[l] - 1)};
      draw_cells(image, swatch, {layout.legend.x_px, y + line.ascent_px - side_px}, side_px, ValueRange{},
                 colormap_by_name("viridis"));
    }
    fonts.draw(image, layout.legend_lines[l], layout.legend.x_px + side_px + kSwatchGapPx, y,
               kLegendFontPx, kNoteColour);
    y += line.line_height_px;
  }
}

}  // namespace

DrawnCells grid_panel_cells(const GridRequest& request, const Matrix& panel, int block) {
  return aggregate_cells(panel, allowed_cells(request), block, request.scale == ScaleMode::Symmetric,
                         mask_or_empty(request.one_run_masked));
}

RenderedGrid render_grid(const GridRequest& request, const FontSet& fonts) {
  RenderedGrid result{Image(), layout_grid(request, fonts), {}};
  const GridLayout& layout = result.layout;
  const Colormap& colormap = colormap_by_name(request.cmap);
  result.image = Image(layout.width_px, layout.height_px, kBackground);
  for (std::size_t p = 0; p < request.panels.size(); ++p) {
    draw_panel(result.image, request, fonts, layout, p, colormap);
  }
  if (!layout.thumbnail) {
    draw_colorbar(result.image, fonts, layout.colorbar, layout.colorbar_scale, colormap, request.colorbar_label);
  }
  int title_y = layout.figure_title.y_px;
  for (const std::string& line : layout.figure_title_lines) {  // each line centred
    fonts.draw(result.image, line, (layout.width_px - fonts.text_width_px(line, kFigureTitleFontPx)) / 2, title_y,
               kFigureTitleFontPx, kTextColour);
    title_y += line_px(fonts, kFigureTitleFontPx);
  }
  draw_legend(result.image, fonts, layout);
  result.warnings = missing_glyph_warnings(request, fonts, layout);
  for (std::string& note : layout_notes(request, layout)) result.warnings.push_back(std::move(note));
  return result;
}

}  // namespace attnviz
