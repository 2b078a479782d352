#include "render/svg_grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/base64.hpp"
#include "render/colormap.hpp"
#include "render/grid_marks.hpp"
#include "render/heatmap.hpp"
#include "render/png.hpp"

namespace attnviz {

namespace {

// Text sizes and colours as head_grid.cpp and colorbar.cpp draw them in the PNG.
constexpr int kFigureTitleFontPx = 18;
constexpr int kPanelTitleFontPx = 15;
constexpr int kAxisTitleFontPx = 13;
constexpr int kLegendFontPx = 13;
constexpr int kTickFontPx = 12;
constexpr int kCaptionFontPx = 13;
constexpr int kTickLengthPx = 3;          // label ticks beside the cells
constexpr int kColorbarTickLengthPx = 4;
constexpr int kColorbarTickGapPx = 3;
constexpr int kColorbarStripPx = 18;
constexpr int kCaptionGapPx = 10;
constexpr int kSwatchGapPx = 6;
constexpr Rgb kTextColour{34, 34, 34};
constexpr Rgb kNoteColour{80, 80, 80};
constexpr Rgb kFrameColour{64, 64, 64};

std::string px(int value) { return std::to_string(value); }

std::string rect(int x, int y, int w, int h, const std::string& fill, const char* cls = nullptr) {
  return "<rect" + (cls ? std::string(" class=\"") + cls + "\"" : std::string()) + " x=\"" + px(x) + "\" y=\"" + px(y) +
         "\" width=\"" + px(w) + "\" height=\"" + px(h) + "\" fill=\"" + fill + "\"/>\n";
}

// A one-pixel frame just outside `inside`, as the PNG's draw_frame.
std::string frame(const Rect& inside) {
  const std::string c = svg_colour(kFrameColour);
  return rect(inside.x_px - 1, inside.y_px - 1, inside.width_px + 2, 1, c) +
         rect(inside.x_px - 1, inside.bottom_px(), inside.width_px + 2, 1, c) +
         rect(inside.x_px - 1, inside.y_px, 1, inside.height_px, c) + rect(inside.right_px(), inside.y_px, 1, inside.height_px, c);
}

// Horizontal text whose line box starts at (left, top), like FontSet::draw.
std::string text(const FontSet& fonts, const std::string& content, int left, int top, int size, Rgb colour,
                 const char* anchor = "start") {
  const int baseline = top + fonts.line_metrics(size).ascent_px;
  return "<text x=\"" + px(left) + "\" y=\"" + px(baseline) + "\" font-size=\"" + px(size) + "\" fill=\"" +
         svg_colour(colour) + "\"" + (std::string(anchor) == "start" ? "" : std::string(" text-anchor=\"") + anchor + "\"") +
         ">" + xml_text(content) + "</text>\n";
}

// Text rotated to read upwards with its line box in columns [left, left + line height) and its
// start at row bottom, like FontSet::draw_vertical; anchor "end" puts its end there instead.
std::string vertical_text(const FontSet& fonts, const std::string& content, int left, int bottom, int size, Rgb colour,
                          const char* anchor = "start") {
  const int baseline_x = left + fonts.line_metrics(size).ascent_px;
  return "<text transform=\"translate(" + px(baseline_x) + "," + px(bottom) + ") rotate(-90)\" font-size=\"" + px(size) +
         "\" fill=\"" + svg_colour(colour) + "\"" +
         (std::string(anchor) == "start" ? "" : std::string(" text-anchor=\"") + anchor + "\"") + ">" +
         xml_text(content) + "</text>\n";
}

// The masked-cell fill: grey with light pixels where (x + y) % kHatchPeriodPx == 0, counted from
// the panel's cell origin as draw_cells does, so the hatch matches the PNG pixel for pixel.
std::string hatch_pattern(const std::string& id, Point origin) {
  std::string pattern = "<pattern id=\"" + id + "\" patternUnits=\"userSpaceOnUse\" x=\"" + px(origin.x_px) + "\" y=\"" +
                        px(origin.y_px) + "\" width=\"" + px(kHatchPeriodPx) + "\" height=\"" + px(kHatchPeriodPx) + "\">";
  pattern += "<rect width=\"" + px(kHatchPeriodPx) + "\" height=\"" + px(kHatchPeriodPx) + "\" fill=\"" +
             svg_colour(kMaskedFill) + "\"/>";
  for (int dx = 0; dx < kHatchPeriodPx; ++dx) {
    const int dy = (kHatchPeriodPx - dx) % kHatchPeriodPx;
    pattern += "<rect x=\"" + px(dx) + "\" y=\"" + px(dy) + "\" width=\"1\" height=\"1\" fill=\"" + svg_colour(kMaskedHatch) + "\"/>";
  }
  return pattern + "</pattern>\n";
}

// A cell masked in one run only, or outside a sliding window (kCellMaskedInOneRun): the same
// grey crossed the other way, pixels where (x − y) % kHatchPeriodPx == 0 in kOneRunHatch, as
// draw_cells draws it.
std::string one_run_pattern(const std::string& id, Point origin) {
  std::string pattern = "<pattern id=\"" + id + "\" patternUnits=\"userSpaceOnUse\" x=\"" + px(origin.x_px) + "\" y=\"" +
                        px(origin.y_px) + "\" width=\"" + px(kHatchPeriodPx) + "\" height=\"" + px(kHatchPeriodPx) + "\">";
  pattern += "<rect width=\"" + px(kHatchPeriodPx) + "\" height=\"" + px(kHatchPeriodPx) + "\" fill=\"" +
             svg_colour(kMaskedFill) + "\"/>";
  for (int d = 0; d < kHatchPeriodPx; ++d)
    pattern += "<rect x=\"" + px(d) + "\" y=\"" + px(d) + "\" width=\"1\" height=\"1\" fill=\"" + svg_colour(kOneRunHatch) + "\"/>";
  return pattern + "</pattern>\n";
}

// Cells as <rect>s: class "c" a colour, "m" masked (the grey hatch), "o" masked in one run only
// or outside the sliding window (the other hatch, `hatch` + "o").
std::string vector_cells(const DrawnCells& cells, Point origin, int cell_px, const ValueRange& range,
                         const Colormap& colormap, const std::string& hatch) {
  std::string body;
  for (Eigen::Index i = 0; i < cells.values.rows(); ++i) {
    for (Eigen::Index j = 0; j < cells.values.cols(); ++j) {
      const int x = origin.x_px + static_cast<int>(j) * cell_px, y = origin.y_px + static_cast<int>(i) * cell_px;
      if (cells.allowed(i, j) == kCellAllowed) {
        body += rect(x, y, cell_px, cell_px, svg_colour(colormap.at(color_position(range, cells.values(i, j)))), "c");
      } else if (cells.allowed(i, j) == kCellMaskedInOneRun) {
        body += rect(x, y, cell_px, cell_px, "url(#" + hatch + "o)", "o");
      } else {
        body += rect(x, y, cell_px, cell_px, "url(#" + hatch + ")", "m");
      }
    }
  }
  return body;
}

// Past kMaxVectorCells: the panel's cells drawn exactly as in the PNG, embedded as one PNG.
std::string raster_cells(const DrawnCells& cells, const Rect& area, int cell_px, const ValueRange& range,
                         const Colormap& colormap) {
  Image image(area.width_px, area.height_px, Rgb{255, 255, 255});
  draw_cells(image, cells, Point{0, 0}, cell_px, range, colormap);
  return "<image class=\"raster\" x=\"" + px(area.x_px) + "\" y=\"" + px(area.y_px) + "\" width=\"" + px(area.width_px) +
         "\" height=\"" + px(area.height_px) + "\" image-rendering=\"optimizeSpeed\" preserveAspectRatio=\"none\" "
         "xlink:href=\"data:image/png;base64," + base64_encode(encode_png(image, "an SVG panel raster")) + "\"/>\n";
}

// --annotate: each allowed value (cell_value_text) centred in its cell, black or white as in the PNG.
std::string cell_values(const FontSet& fonts, const DrawnCells& cells, Point origin, int cell_px, int font_px,
                        const ValueRange& range, const Colormap& colormap, bool significant) {
  std::string body;
  const int line_height_px = fonts.line_metrics(font_px).line_height_px;
  for (Eigen::Index i = 0; i < cells.values.rows(); ++i) {
    for (Eigen::Index j = 0; j < cells.values.cols(); ++j) {
      if (cells.allowed(i, j) == 0) continue;
      const double v = cells.values(i, j);
      const std::string value = cell_value_text(v, significant);
      const Rgb colour = contrasting_text(colormap.at(color_position(range, v)));
      body += text(fonts, value, origin.x_px + static_cast<int>(j) * cell_px + cell_px / 2,
                   origin.y_px + static_cast<int>(i) * cell_px + (cell_px - line_height_px) / 2, font_px, colour, "middle");
    }
  }
  return body;
}

std::string panel_labels(const FontSet& fonts, const GridLayout& layout, const PanelLayout& panel) {
  std::string body;
  const LineMetrics line = fonts.line_metrics(layout.label_font_px);
  const std::string tick = svg_colour(kFrameColour);
  for (int i = 0; i < layout.n_q; i += layout.query_label_stride) {
    const int centre_y = panel.cells.y_px + (i / layout.block) * layout.cell_px + layout.cell_px / 2;
    body += rect(panel.cells.x_px - kTickLengthPx, centre_y, kTickLengthPx, 1, tick);
    body += text(fonts, drawn_query_label(layout, i), panel.query_labels.right_px(),
                 centre_y - line.line_height_px / 2, layout.label_font_px, kTextColour, "end");
  }
  for (int j = 0; j < layout.n_k; j += layout.key_label_stride) {
    const std::string label = drawn_key_label(layout, j);
    const int centre_x = panel.cells.x_px + (j / layout.block) * layout.cell_px + layout.cell_px / 2;
    body += rect(centre_x, panel.cells.bottom_px(), 1, kTickLengthPx, tick);
    if (layout.key_labels_horizontal) {
      body += text(fonts, label, centre_x, panel.key_labels.y_px, layout.label_font_px, kTextColour, "middle");
    } else {
      // Right-aligned against the cells, reading upwards (matplotlib's rotation=90).
      body += vertical_text(fonts, label, centre_x - line.line_height_px / 2, panel.key_labels.y_px,
                            layout.label_font_px, kTextColour, "end");
    }
  }
  return body;
}

std::string colorbar(const FontSet& fonts, const GridLayout& layout, const Colormap& colormap, const std::string& label) {
  const Rect& area = layout.colorbar;
  const ValueRange& range = layout.colorbar_scale.range;
  std::string body;
  // One rect per run of equal pixel rows, sampled at row centres as draw_colorbar does.
  int run_start = 0;
  Rgb run_colour{};
  for (int y = 0; y <= area.height_px; ++y) {
    Rgb colour{};
    if (y < area.height_px) {
      const double t = 1.0 - (y + 0.5) / area.height_px;
      colour = colormap.at(color_position(range, value_at_position(range, t)));
    }
    if (y == area.height_px || (y > 0 && !(colour == run_colour))) {
      body += rect(area.x_px, area.y_px + run_start, kColorbarStripPx, y - run_start, svg_colour(run_colour));
      run_start = y;
    }
    run_colour = colour;
  }
  body += frame({area.x_px, area.y_px, kColorbarStripPx, area.height_px});
  const int strip_right = area.x_px + kColorbarStripPx;
  const LineMetrics tick_line = fonts.line_metrics(kTickFontPx);
  int widest_tick = 0;
  for (const Tick& tick : layout.colorbar_scale.ticks) {
    const int y = area.y_px + static_cast<int>(std::lround((1.0 - color_position(range, tick.value)) * (area.height_px - 1)));
    body += rect(strip_right, y, kColorbarTickLengthPx, 1, svg_colour(kFrameColour));
    body += text(fonts, tick.label, strip_right + kColorbarTickLengthPx + kColorbarTickGapPx, y - tick_line.line_height_px / 2,
                 kTickFontPx, kTextColour);
    widest_tick = std::max(widest_tick, fonts.text_width_px(tick.label, kTickFontPx));
  }
  int x = strip_right + kColorbarTickLengthPx + kColorbarTickGapPx + widest_tick + kCaptionGapPx;
  for (const std::string& line : {label, layout.colorbar_scale.caption}) {
    body += vertical_text(fonts, line, x, area.y_px + area.height_px / 2, kCaptionFontPx, kTextColour, "middle");
    x += fonts.line_metrics(kCaptionFontPx).line_height_px;
  }
  return body;
}

// The legend lines, each with the swatch of its kind of cell (layout.legend_swatches), whose
// patterns are `hatch` + "-legend" and `hatch` + "-legend-o".
std::string legend(const FontSet& fonts, const GridLayout& layout, const std::string& hatch) {
  std::string body;
  const LineMetrics line = fonts.line_metrics(kLegendFontPx);
  const int side_px = line.ascent_px;
  int y = layout.legend.y_px;
  for (std::size_t l = 0; l < layout.legend_lines.size(); ++l) {
    const std::uint8_t swatch = l < layout.legend_swatches.size() ? layout.legend_swatches[l] : 0;
    if (swatch != 0)
      body += rect(layout.legend.x_px, y + line.ascent_px - side_px, side_px, side_px,
                   "url(#" + hatch + (swatch == kCellMaskedInOneRun + 1 ? "-legend-o)" : "-legend)"));
    body += text(fonts, layout.legend_lines[l], layout.legend.x_px + side_px + kSwatchGapPx, y, kLegendFontPx, kNoteColour);
    y += line.line_height_px;
  }
  return body;
}

}  // namespace

SvgPicture grid_svg(const GridRequest& request, const FontSet& fonts, const std::string& id_prefix) {
  const GridLayout layout = layout_grid(request, fonts);
  const Colormap& colormap = colormap_by_name(request.cmap);
  static const MaskMatrix kEverything;
  const MaskMatrix& allowed = request.allowed ? *request.allowed : kEverything;
  const bool raster = static_cast<long>(request.panels.size()) * layout.drawn_rows * layout.drawn_cols > kMaxVectorCells;
  SvgPicture svg{layout.width_px, layout.height_px, "", ""};
  svg.body = "<g font-family=\"" + std::string(kSvgFontFamily) + "\">\n";
  for (std::size_t p = 0; p < request.panels.size(); ++p) {
    const PanelLayout& panel = layout.panels[p];
    const std::string hatch = id_prefix + "hatch" + std::to_string(p);
    const Point origin{panel.cells.x_px, panel.cells.y_px};
    svg.defs += hatch_pattern(hatch, origin);
    // A panel with a mask of its own (compare: each run's) is drawn with it, as draw_panel does.
    const MaskMatrix& panel_allowed =
        p < request.panel_allowed.size() && request.panel_allowed[p] ? *request.panel_allowed[p] : allowed;
    const DrawnCells cells = aggregate_cells(*request.panels[p], panel_allowed, layout.block, request.scale == ScaleMode::Symmetric,
                                             request.one_run_masked ? *request.one_run_masked : kEverything);
    if ((cells.allowed.array() == kCellMaskedInOneRun).any()) svg.defs += one_run_pattern(hatch + "o", origin);
    svg.body += "<g class=\"cells\" shape-rendering=\"crispEdges\">\n";
    svg.body += raster ? raster_cells(cells, panel.cells, layout.cell_px, layout.ranges[p], colormap)
                       : vector_cells(cells, origin, layout.cell_px, layout.ranges[p], colormap, hatch);
    std::string marks;
    for (const Rect& mark : grid_mark_rects(request, layout, panel))
      marks += rect(mark.x_px, mark.y_px, mark.width_px, mark.height_px, svg_colour(kMarkColour));
    svg.body += "</g>\n<g shape-rendering=\"crispEdges\">\n" + frame(panel.cells) + marks + "</g>\n";
    if (layout.annotation_font_px > 0) {
      svg.body += cell_values(fonts, cells, origin, layout.cell_px, layout.annotation_font_px, layout.ranges[p], colormap,
                             request.significant_values);
    }
    if (layout.thumbnail) continue;
    svg.body += panel_labels(fonts, layout, panel);
    svg.body += text(fonts, layout.panel_titles[p], panel.title.x_px, panel.title.y_px, kPanelTitleFontPx, kTextColour);
    svg.body += vertical_text(fonts, request.query_axis_title, panel.query_axis_title.x_px, panel.query_axis_title.bottom_px(),
                              kAxisTitleFontPx, kNoteColour);
    svg.body += text(fonts, request.key_axis_title, panel.key_axis_title.x_px, panel.key_axis_title.y_px, kAxisTitleFontPx,
                     kNoteColour);
  }
  if (!layout.thumbnail) {
    svg.body += "<g shape-rendering=\"crispEdges\">\n" + colorbar(fonts, layout, colormap, request.colorbar_label) + "</g>\n";
  }
  if (!request.figure_title.empty() && !layout.thumbnail) {
    svg.body += text(fonts, request.figure_title, layout.figure_title.x_px, layout.figure_title.y_px, kFigureTitleFontPx,
                     kTextColour);
  }
  // A swatch's hatch counts from its own top-left corner (its legend line's).
  const LineMetrics legend_line = fonts.line_metrics(kLegendFontPx);
  for (std::size_t l = 0; l < layout.legend_swatches.size(); ++l) {
    if (layout.legend_swatches[l] == 0) continue;
    const Point corner{layout.legend.x_px, layout.legend.y_px + static_cast<int>(l) * legend_line.line_height_px};
    svg.defs += layout.legend_swatches[l] == kCellMaskedInOneRun + 1 ? one_run_pattern(id_prefix + "hatch-legend-o", corner)
                                                                      : hatch_pattern(id_prefix + "hatch-legend", corner);
  }
  svg.body += legend(fonts, layout, id_prefix + "hatch");
  svg.body += "</g>\n";
  return svg;
}

}  // namespace attnviz
