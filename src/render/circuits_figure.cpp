#include "render/circuits_figure.hpp"

#include <algorithm>
#include <cstdio>

#include "render/canvas.hpp"
#include "render/svg_grid.hpp"
#include "render/token_label.hpp"

namespace attnviz {

namespace {

constexpr int kMarginPx = 16;
constexpr int kTitleFontPx = 18;
constexpr int kLabelFontPx = 12;
constexpr int kHeaderFontPx = 13;
constexpr int kChartPx = 70;        // a spectrum's height
constexpr int kMinPanelPx = 84;     // a head's panel width
constexpr int kBarPx = 6;           // one singular value's bar (with its gap)
constexpr int kPanelGapPx = 12;
constexpr int kFramePx = 2;
constexpr int kListTokens = 8;
constexpr int kTokenPadPx = 3;     // inside a token's box
constexpr int kTokenGapPx = 4;     // between token boxes
constexpr int kTokenRowPx = 20;
constexpr Rgb kTokenBox{236, 236, 236};
constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kTextColour{34, 34, 34};
constexpr Rgb kNoteColour{90, 90, 90};
constexpr Rgb kQkColour{60, 110, 190};
constexpr Rgb kOvColour{220, 130, 40};
constexpr Rgb kFrameColour{202, 64, 64};
constexpr Rgb kAxisColour{190, 190, 190};

std::string number(double value, const char* format = "%.3g") {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

double largest(const std::vector<HeadCircuits>& heads, bool ov) {
  double m = 0;
  for (const HeadCircuits& h : heads) {
    const std::vector<double>* values = ov ? (h.ov_singular_values ? &*h.ov_singular_values : nullptr) : &h.qk_singular_values;
    if (values && !values->empty()) m = std::max(m, values->front());
  }
  return m;
}

// Bars of `values` (descending) scaled so that `top` fills the chart, from the chart's bottom.
void draw_spectrum(Canvas& canvas, const std::vector<double>& values, double top, const Rect& chart, Rgb colour) {
  canvas.rect({chart.x_px, chart.bottom_px() - 1, chart.width_px, 1}, kAxisColour);
  const int bar = std::max(1, std::min(kBarPx, chart.width_px / static_cast<int>(std::max<std::size_t>(1, values.size()))));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const int h = top > 0 ? static_cast<int>(values[i] / top * chart.height_px + 0.5) : 0;
    canvas.rect({chart.x_px + static_cast<int>(i) * bar, chart.bottom_px() - h, std::max(1, bar - 1), h}, colour);
  }
}

// The token lists as a table: per direction a "+" row and a "−" row, each with its query tokens
// and its key tokens, every token in a light box (so that "▁", "," and spaces read as tokens).
struct TokenRow {
  std::string label;        // "0 (σ 4.99) +" or "−"
  Tokens queries, keys;
};
struct TokenTable {
  std::vector<TokenRow> rows;
  int label_px = 0, queries_px = 0, width_px = 0;
};

int token_list_px(const Tokens& tokens, const FontSet& fonts) {
  int w = 0;
  for (const std::string& t : tokens) w += fonts.text_width_px(display_label(t), kLabelFontPx) + 2 * kTokenPadPx + kTokenGapPx;
  return w;
}

TokenTable token_table(const std::vector<QkDirectionTokens>& directions, const FontSet& fonts) {
  TokenTable t;
  for (std::size_t i = 0; i < directions.size(); ++i) {
    const QkDirectionTokens& d = directions[i];
    t.rows.push_back({std::to_string(i) + " (\u03C3 " + number(d.singular_value) + ")  +", d.query_top, d.key_top});
    t.rows.push_back({"\u2212", d.query_bottom, d.key_bottom});
  }
  int keys_px = 0;
  for (const TokenRow& row : t.rows) {
    t.label_px = std::max(t.label_px, fonts.text_width_px(row.label, kLabelFontPx));
    t.queries_px = std::max(t.queries_px, token_list_px(row.queries, fonts));
    keys_px = std::max(keys_px, token_list_px(row.keys, fonts));
  }
  t.label_px += 10;
  t.width_px = t.label_px + fonts.text_width_px("queries ", kLabelFontPx) + t.queries_px +
               fonts.text_width_px("  \u2192 keys ", kLabelFontPx) + keys_px;
  return t;
}

int draw_tokens(Canvas& canvas, const Tokens& tokens, const FontSet& fonts, int x, int y) {
  const int line = fonts.line_metrics(kLabelFontPx).line_height_px;
  for (std::size_t i = 0; i < tokens.size() && i < static_cast<std::size_t>(kListTokens); ++i) {
    const std::string label = display_label(tokens[i]);
    const int w = fonts.text_width_px(label, kLabelFontPx) + 2 * kTokenPadPx;
    canvas.rect({x, y + 1, w, line}, kTokenBox);
    canvas.text(label, x + kTokenPadPx, y + 1, kLabelFontPx, kTextColour);
    x += w + kTokenGapPx;
  }
  return x;
}

void draw_token_table(Canvas& canvas, const TokenTable& t, const FontSet& fonts, int x, int y) {
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const TokenRow& row = t.rows[r];
    const int row_y = y + static_cast<int>(r) * kTokenRowPx;
    canvas.text(row.label, x + t.label_px - 10 - fonts.text_width_px(row.label, kLabelFontPx), row_y + 1, kLabelFontPx,
               kNoteColour);
    int cx = x + t.label_px;
    canvas.text("queries ", cx, row_y + 1, kLabelFontPx, kNoteColour);
    cx += fonts.text_width_px("queries ", kLabelFontPx);
    draw_tokens(canvas, row.queries, fonts, cx, row_y);
    cx += t.queries_px;
    canvas.text("  \u2192 keys ", cx, row_y + 1, kLabelFontPx, kNoteColour);
    cx += fonts.text_width_px("  \u2192 keys ", kLabelFontPx);
    draw_tokens(canvas, row.keys, fonts, cx, row_y);
  }
}

// Lays out and draws on `target`, or (null) on out.image, made here at the picture's size.
void draw(const CircuitsFigureRequest& r, const FontSet& fonts, Canvas* target, RenderedCircuitsFigure& out) {
  const std::vector<HeadCircuits>& heads = *r.heads;
  const int label_line = fonts.line_metrics(kLabelFontPx).line_height_px;
  const int header_line = fonts.line_metrics(kHeaderFontPx).line_height_px;
  const int title_line = fonts.line_metrics(kTitleFontPx).line_height_px;
  const bool has_ov = !heads.empty() && heads.front().ov_singular_values.has_value();
  std::size_t most_values = 1;
  for (const HeadCircuits& h : heads) most_values = std::max(most_values, h.qk_singular_values.size());
  const int panel = std::max(kMinPanelPx, static_cast<int>(most_values) * kBarPx);
  const double qk_top = largest(heads, false), ov_top = largest(heads, true);

  // Text lines under the charts: the scales, and the token lists of the explained head.
  std::vector<std::pair<std::string, Rgb>> lines;
  lines.push_back({"bars: singular values, largest first, one scale per circuit across the heads (QK tallest " + number(qk_top) +
                       (has_ov ? ", OV tallest " + number(ov_top) : std::string()) + "); few tall bars = low rank",
                   kNoteColour});
  lines.push_back({std::string(r.folded ? "norm gains folded into W_Q, W_K, W_V and W_U" : "no norm gains folded (a single layer)") +
                       (heads.front().copying_score ? "; copy = copying score of the full OV circuit W_E W_V W_O W_U (+1: copies)" : ""),
                   kNoteColour});
  const bool has_lists = r.directions != nullptr && r.directions->has_value();
  if (has_lists)
    lines.push_back({"What " + r.head_labels[static_cast<std::size_t>(r.explained)] +
                         "'s top QK directions ask for: the vocabulary tokens whose embeddings project most on u_i "
                         "(queries) and v_i (keys); queries like the + tokens look for keys like the + tokens, and "
                         "\u2212 for \u2212:",
                     kTextColour});
  else
    lines.push_back({"No vocabulary (a single layer): no token lists; run with --model for them.", kNoteColour});
  const TokenTable table = has_lists ? token_table(**r.directions, fonts) : TokenTable{};

  const int row_label = fonts.text_width_px("OV W_V W_O", kHeaderFontPx) + 8;
  int width = 2 * kMarginPx + row_label + static_cast<int>(heads.size()) * (panel + kPanelGapPx);
  width = std::max(width, 2 * kMarginPx + fonts.text_width_px(r.title, kTitleFontPx));
  for (const auto& line : lines) width = std::max(width, 2 * kMarginPx + fonts.text_width_px(line.first, kLabelFontPx));
  width = std::max(width, 2 * kMarginPx + table.width_px);
  const int charts = has_ov ? 2 : 1;
  const int panels_y = kMarginPx + title_line + 8;
  const int chart_block = header_line + 2 * label_line + charts * (kChartPx + 8);
  const int lines_y = panels_y + chart_block + 12;
  const int table_y = lines_y + static_cast<int>(lines.size()) * label_line + 4;
  const int height = table_y + static_cast<int>(table.rows.size()) * kTokenRowPx + kMarginPx;

  out.width_px = width;
  out.height_px = height;
  if (target == nullptr) out.image = Image(width, height, kBackground);
  ImageCanvas raster(out.image, fonts);
  Canvas& canvas = target != nullptr ? *target : raster;
  canvas.text(r.title, kMarginPx, kMarginPx, kTitleFontPx, kTextColour);
  const int chart_y = panels_y + header_line + 2 * label_line;
  canvas.text("QK W_Q W_K\u1D40", kMarginPx, chart_y + kChartPx / 2 - label_line / 2, kLabelFontPx, kQkColour);
  if (has_ov) canvas.text("OV W_V W_O", kMarginPx, chart_y + kChartPx + 8 + kChartPx / 2 - label_line / 2, kLabelFontPx, kOvColour);
  for (std::size_t h = 0; h < heads.size(); ++h) {
    const int x = kMarginPx + row_label + static_cast<int>(h) * (panel + kPanelGapPx);
    const HeadCircuits& c = heads[h];
    canvas.text(r.head_labels[h], x, panels_y, kHeaderFontPx, kTextColour);
    canvas.text("\u03C3\u2081 " + number(c.qk_singular_values.empty() ? 0.0 : c.qk_singular_values.front()), x,
               panels_y + header_line, kLabelFontPx, kNoteColour);
    if (c.copying_score)
      canvas.text("copy " + number(*c.copying_score, "%+.2f"), x, panels_y + header_line + label_line, kLabelFontPx,
                 kNoteColour);
    const Rect qk{x, chart_y, panel, kChartPx};
    draw_spectrum(canvas, c.qk_singular_values, qk_top, qk, kQkColour);
    out.qk_charts.push_back(qk);
    if (has_ov && c.ov_singular_values) {
      const Rect ov{x, chart_y + kChartPx + 8, panel, kChartPx};
      draw_spectrum(canvas, *c.ov_singular_values, ov_top, ov, kOvColour);
      out.ov_charts.push_back(ov);
    }
    if (static_cast<int>(h) == r.explained) {
      const Rect frame{x - 4, panels_y - 3, panel + 8, chart_block + 3};
      canvas.rect({frame.x_px, frame.y_px, frame.width_px, kFramePx}, kFrameColour);
      canvas.rect({frame.x_px, frame.bottom_px() - kFramePx, frame.width_px, kFramePx}, kFrameColour);
      canvas.rect({frame.x_px, frame.y_px, kFramePx, frame.height_px}, kFrameColour);
      canvas.rect({frame.right_px() - kFramePx, frame.y_px, kFramePx, frame.height_px}, kFrameColour);
    }
  }
  for (std::size_t i = 0; i < lines.size(); ++i)
    canvas.text(lines[i].first, kMarginPx, lines_y + static_cast<int>(i) * label_line, kLabelFontPx, lines[i].second);
  draw_token_table(canvas, table, fonts, kMarginPx, table_y);
}

}  // namespace

RenderedCircuitsFigure render_circuits_figure(const CircuitsFigureRequest& request, const FontSet& fonts) {
  RenderedCircuitsFigure out;
  draw(request, fonts, nullptr, out);
  return out;
}

SvgPicture circuits_figure_svg(const CircuitsFigureRequest& request, const FontSet& fonts) {
  SvgCanvas canvas(fonts);
  RenderedCircuitsFigure out;
  draw(request, fonts, &canvas, out);
  return SvgPicture{out.width_px, out.height_px, "",
                    "<g font-family=\"" + std::string(kSvgFontFamily) + "\">\n" + canvas.body() + "</g>\n"};
}

}  // namespace attnviz
