#include "render/neuron_figure.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "render/canvas.hpp"
#include "render/colormap.hpp"
#include "render/svg_grid.hpp"
#include "render/token_label.hpp"

namespace attnviz {

namespace {

constexpr int kMarginPx = 16;
constexpr int kTitleFontPx = 18;
constexpr int kLabelFontPx = 12;
constexpr int kHeaderFontPx = 13;
constexpr int kBlockGapPx = 18;       // between the blocks of a row (k | q⊙k | score | weight | w·v)
constexpr int kMaxRowPx = 16;         // a key row, when it fits
constexpr int kMinRowPx = 2;
constexpr int kMaxCellPx = 14;        // a vector cell, when it fits
constexpr int kMinCellPx = 2;
constexpr int kVectorBlockPx = 280;   // the width a d_k-wide block aims at
constexpr int kBarPx = 110;           // the score and weight bars' full length
constexpr int kNumberPx = 44;         // the weight's number beside its bar
constexpr const char* kKeyHeader = "k (key vectors)";
constexpr const char* kProductHeader = "q \u2299 k (products)";
constexpr const char* kValueHeader = "weight \u00B7 v";
constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kTextColour{34, 34, 34};
constexpr Rgb kNoteColour{90, 90, 90};
constexpr Rgb kMaskedColour{225, 225, 225};
constexpr Rgb kPositiveBar{202, 64, 64};
constexpr Rgb kNegativeBar{60, 110, 190};
constexpr Rgb kWeightBar{70, 70, 70};
constexpr Rgb kAxisColour{160, 160, 160};

// "0.123", "-1.2e+03": three significant digits.
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// The colour of `value` on rdbu centred at 0, ±limit at the ends.
Rgb diverging(double value, double limit) {
  static const Colormap& map = colormap_by_name("rdbu");
  return map.at(limit > 0 ? 0.5 + 0.5 * value / limit : 0.5);
}

double abs_max(const Matrix& m) { return m.size() == 0 ? 0.0 : static_cast<double>(m.cwiseAbs().maxCoeff()); }

void draw_cells(Canvas& canvas, const Eigen::Ref<const Matrix>& values, int x, int y, int cell_px, int row_px,
                double limit, const std::vector<std::uint8_t>* masked) {
  for (Eigen::Index r = 0; r < values.rows(); ++r) {
    const bool grey = masked != nullptr && (*masked)[static_cast<std::size_t>(r)] != 0;
    for (Eigen::Index c = 0; c < values.cols(); ++c) {
      const Rgb colour = grey ? kMaskedColour : diverging(values(r, c), limit);
      canvas.rect({x + static_cast<int>(c) * cell_px, y + static_cast<int>(r) * row_px, cell_px, row_px}, colour);
    }
  }
}

// Text right-aligned so that it ends at `right`.
void draw_right(Canvas& canvas, const FontSet& fonts, const std::string& text, int right, int top, int size, Rgb colour) {
  canvas.text(text, right - fonts.text_width_px(text, size), top, size, colour);
}

struct Layout {
  int cell_px = 0, row_px = 0;
  int label_px = 0;
  int k_x = 0, p_x = 0, score_x = 0, weight_x = 0, v_x = 0, right = 0;
  int title_y = 0, header_y = 0, q_y = 0, rows_y = 0, output_y = 0, legend_y = 0, bottom = 0;
};

Layout lay_out(const NeuronFigureRequest& r, const FontSet& fonts) {
  const NeuronView& v = *r.view;
  const long n_k = v.k.rows(), d_k = v.k.cols(), d_v = v.v.cols();
  const int label_line = fonts.line_metrics(kLabelFontPx).line_height_px;
  const int header_line = fonts.line_metrics(kHeaderFontPx).line_height_px;
  const int title_line = fonts.line_metrics(kTitleFontPx).line_height_px;
  Layout l;
  l.cell_px = std::clamp(kVectorBlockPx / static_cast<int>(std::max(d_k, d_v)), kMinCellPx, kMaxCellPx);
  const int fixed_height = 2 * kMarginPx + title_line + 2 * header_line + 3 * label_line + 4 * kBlockGapPx;
  l.row_px = std::clamp((r.max_size_px - fixed_height) / static_cast<int>(std::max(1L, n_k + 2)), 0, kMaxRowPx);
  if (l.row_px < kMinRowPx)
    throw LimitError::image_size("the neuron view of " + std::to_string(n_k) + " keys", kVectorBlockPx,
                                 fixed_height + kMinRowPx * (n_k + 2), r.max_size_px, "--max-size (up to 16384)");
  l.label_px = fonts.text_width_px("q: " + display_label(r.query_label), kLabelFontPx);
  for (const std::string& key : r.key_labels) l.label_px = std::max(l.label_px, fonts.text_width_px(display_label(key), kLabelFontPx));
  l.label_px = std::min(l.label_px, 220);
  // Each block is as wide as its cells or its header, whichever is wider (d_k = 4 is 56 px).
  const auto block_px = [&](long cells, const char* header) {
    return std::max(static_cast<int>(cells) * l.cell_px, fonts.text_width_px(header, kHeaderFontPx));
  };
  l.k_x = kMarginPx + l.label_px + 8;
  l.p_x = l.k_x + block_px(d_k, kKeyHeader) + kBlockGapPx;
  l.score_x = l.p_x + block_px(d_k, kProductHeader) + kBlockGapPx;
  l.weight_x = l.score_x + kBarPx + kNumberPx + kBlockGapPx;
  l.v_x = l.weight_x + kBarPx + kNumberPx + kBlockGapPx;
  l.right = l.v_x + block_px(d_v, kValueHeader) + kMarginPx;
  l.title_y = kMarginPx;
  l.header_y = l.title_y + title_line + 6;
  l.q_y = l.header_y + 2 * header_line + 4;
  l.rows_y = l.q_y + std::max(l.row_px, label_line) + kBlockGapPx / 2;
  l.output_y = l.rows_y + static_cast<int>(n_k) * l.row_px + kBlockGapPx / 2;
  l.legend_y = l.output_y + std::max(l.row_px, label_line) + kBlockGapPx / 2;
  l.bottom = l.legend_y + 2 * label_line + kMarginPx;
  return l;
}

// Lays out and draws on `target`, or (null) on out.image, made here at the picture's size.
void draw(const NeuronFigureRequest& r, const FontSet& fonts, Canvas* target, RenderedNeuronFigure& out) {
  const NeuronView& v = *r.view;
  const Layout l = lay_out(r, fonts);
  const long n_k = v.k.rows(), d_k = v.k.cols(), d_v = v.v.cols();
  const int label_line = fonts.line_metrics(kLabelFontPx).line_height_px;
  const int header_line = fonts.line_metrics(kHeaderFontPx).line_height_px;
  const double qk_limit = std::max(abs_max(v.q.transpose()), abs_max(v.k));
  const double product_limit = abs_max(v.products);
  const double value_limit = std::max(abs_max(v.weighted_values), abs_max(v.output.transpose()));
  double score_limit = 0;
  for (long j = 0; j < n_k; ++j)
    if (!v.masked[static_cast<std::size_t>(j)]) score_limit = std::max(score_limit, std::abs(double(v.scores_raw(j))));
  // The legend: the colour ranges, so that a colour can be read back as a number.
  const std::string legend = "colours: blue < 0 < red (white = 0); q and k \u00B1" + number(qk_limit) + ", products \u00B1" +
                             number(product_limit) + ", weight \u00B7 v and output \u00B1" + number(value_limit) +
                             "; score bars \u00B1" + number(score_limit) + "; scale " + number(v.scale);
  const int width = std::max({l.right, 2 * kMarginPx + fonts.text_width_px(r.title, kTitleFontPx),
                              2 * kMarginPx + fonts.text_width_px(legend, kLabelFontPx)});
  out.width_px = width;
  out.height_px = l.bottom;
  if (target == nullptr) out.image = Image(width, l.bottom, kBackground);
  ImageCanvas raster(out.image, fonts);
  Canvas& canvas = target != nullptr ? *target : raster;
  out.cell_px = l.cell_px;
  out.row_px = l.row_px;
  canvas.text(r.title, kMarginPx, l.title_y, kTitleFontPx, kTextColour);

  // Headers: what each block is, and the maths that links them.
  canvas.text(kKeyHeader, l.k_x, l.header_y, kHeaderFontPx, kTextColour);
  canvas.text(kProductHeader, l.p_x, l.header_y, kHeaderFontPx, kTextColour);
  canvas.text("score", l.score_x, l.header_y, kHeaderFontPx, kTextColour);
  canvas.text("weight", l.weight_x, l.header_y, kHeaderFontPx, kTextColour);
  canvas.text(kValueHeader, l.v_x, l.header_y, kHeaderFontPx, kTextColour);
  canvas.text("scale \u00B7 \u03A3 products", l.score_x, l.header_y + header_line, kLabelFontPx, kNoteColour);
  canvas.text("softmax", l.weight_x, l.header_y + header_line, kLabelFontPx, kNoteColour);

  // The query vector, above the key vectors, on their colour range.
  const int q_row = std::max(l.row_px, label_line);
  draw_right(canvas, fonts, "q: " + display_label(r.query_label), l.k_x - 8, l.q_y, kLabelFontPx, kTextColour);
  draw_cells(canvas, v.q.transpose(), l.k_x, l.q_y, l.cell_px, q_row, qk_limit, nullptr);
  out.q_cells = {l.k_x, l.q_y, static_cast<int>(d_k) * l.cell_px, q_row};

  // One row per key.
  const int stride = label_stride(std::max(1, l.row_px), label_line);
  draw_cells(canvas, v.k, l.k_x, l.rows_y, l.cell_px, l.row_px, qk_limit, nullptr);
  draw_cells(canvas, v.products, l.p_x, l.rows_y, l.cell_px, l.row_px, product_limit, &v.masked);
  draw_cells(canvas, v.weighted_values, l.v_x, l.rows_y, l.cell_px, l.row_px, value_limit, &v.masked);
  const int zero_x = l.score_x + kBarPx / 2;
  for (long j = 0; j < n_k; ++j) {
    const int y = l.rows_y + static_cast<int>(j) * l.row_px;
    const bool masked = v.masked[static_cast<std::size_t>(j)] != 0;
    const int text_y = y + (l.row_px - label_line) / 2;
    if (j % stride == 0)
      draw_right(canvas, fonts, display_label(r.key_labels[static_cast<std::size_t>(j)]), l.k_x - 8, text_y, kLabelFontPx,
                 masked ? kNoteColour : kTextColour);
    const int bar_h = std::max(1, l.row_px - 2);
    if (masked) {
      if (l.row_px >= label_line - 2 && j % stride == 0)
        canvas.text("masked", l.score_x + 4, text_y, kLabelFontPx, kNoteColour);
      continue;
    }
    canvas.rect({zero_x, y, 1, l.row_px}, kAxisColour);  // the score axis, 0, on unmasked rows only
    const double s = score_limit > 0 ? v.scores_raw(j) / score_limit : 0.0;
    const int s_px = static_cast<int>(std::lround(std::abs(s) * (kBarPx / 2)));
    canvas.rect({s >= 0 ? zero_x + 1 : zero_x - s_px, y + 1, s_px, bar_h}, s >= 0 ? kPositiveBar : kNegativeBar);
    if (l.row_px >= label_line - 2 && j % stride == 0)
      canvas.text(number(v.scores_raw(j)), l.score_x + kBarPx + 4, text_y, kLabelFontPx, kTextColour);
    const int w_px = static_cast<int>(std::lround(v.weights(j) * kBarPx));
    canvas.rect({l.weight_x, y + 1, kBarPx, bar_h}, Rgb{240, 240, 240});
    canvas.rect({l.weight_x, y + 1, w_px, bar_h}, kWeightBar);
    if (l.row_px >= label_line - 2 && j % stride == 0)
      canvas.text(number(v.weights(j)), l.weight_x + kBarPx + 4, text_y, kLabelFontPx, kTextColour);
  }
  out.key_cells = {l.k_x, l.rows_y, static_cast<int>(d_k) * l.cell_px, static_cast<int>(n_k) * l.row_px};
  out.product_cells = {l.p_x, l.rows_y, static_cast<int>(d_k) * l.cell_px, static_cast<int>(n_k) * l.row_px};
  out.value_cells = {l.v_x, l.rows_y, static_cast<int>(d_v) * l.cell_px, static_cast<int>(n_k) * l.row_px};

  // The output: the sum of the weighted values, under them.
  draw_right(canvas, fonts, "output = \u03A3 weight \u00B7 v", l.v_x - 8, l.output_y, kLabelFontPx, kTextColour);
  draw_cells(canvas, v.output.transpose(), l.v_x, l.output_y, l.cell_px, q_row, value_limit, nullptr);
  out.output_cells = {l.v_x, l.output_y, static_cast<int>(d_v) * l.cell_px, q_row};

  canvas.text(legend, kMarginPx, l.legend_y, kLabelFontPx, kNoteColour);
  if (stride > 1)
    canvas.text("every " + ordinal(stride) + " key label shown", kMarginPx, l.legend_y + label_line, kLabelFontPx,
               kNoteColour);
}

}  // namespace

RenderedNeuronFigure render_neuron_figure(const NeuronFigureRequest& request, const FontSet& fonts) {
  RenderedNeuronFigure out;
  draw(request, fonts, nullptr, out);
  return out;
}

SvgPicture neuron_figure_svg(const NeuronFigureRequest& request, const FontSet& fonts) {
  SvgCanvas canvas(fonts);
  RenderedNeuronFigure out;
  draw(request, fonts, &canvas, out);
  return SvgPicture{out.width_px, out.height_px, "",
                    "<g font-family=\"" + std::string(kSvgFontFamily) + "\">\n" + canvas.body() + "</g>\n"};
}

}  // namespace attnviz
