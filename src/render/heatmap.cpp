#include "render/heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace attnviz {

namespace {

constexpr Rgb kBlackText{0, 0, 0};
constexpr Rgb kWhiteText{255, 255, 255};
constexpr int kValueDecimals = 2;
constexpr int kSignificantDigits = 3;  // cell_value_text's significant form
// sRGB -> linear light and relative luminance, WCAG 2.1 §1.4.3 definitions.
constexpr double kChannelMax = 255.0;
constexpr double kLinearThreshold = 0.04045;
constexpr double kLinearSlope = 12.92;
constexpr double kGammaOffset = 0.055;
constexpr double kGamma = 2.4;
constexpr double kLumaR = 0.2126, kLumaG = 0.7152, kLumaB = 0.0722;
constexpr double kContrastFlare = 0.05;

double linear(std::uint8_t channel) {
  const double c = channel / kChannelMax;
  return c <= kLinearThreshold ? c / kLinearSlope
                               : std::pow((c + kGammaOffset) / (1 + kGammaOffset), kGamma);
}

// Folds v into the block's aggregate: max, or largest magnitude (keeping the sign).
double fold(double aggregate, double v, bool signed_data) {
  if (signed_data) return std::abs(v) > std::abs(aggregate) ? v : aggregate;
  return std::max(aggregate, v);
}

}  // namespace

Rgb contrasting_text(Rgb background) {
  const double luminance =
      kLumaR * linear(background.r) + kLumaG * linear(background.g) + kLumaB * linear(background.b);
  const double with_black = (luminance + kContrastFlare) / kContrastFlare;
  const double with_white = (1 + kContrastFlare) / (luminance + kContrastFlare);
  return with_black >= with_white ? kBlackText : kWhiteText;
}

DrawnCells aggregate_cells(const Matrix& values, const MaskMatrix& allowed, int block,
                           bool signed_data, const MaskMatrix& one_run) {
  const Eigen::Index rows = (values.rows() + block - 1) / block;
  const Eigen::Index cols = (values.cols() + block - 1) / block;
  DrawnCells drawn{Matrix::Zero(rows, cols), MaskMatrix::Zero(rows, cols)};
  // Row by row, block column by block column: no division per cell (the n = 18 651 grid folds
  // 8 × 348 M cells, twice).
  for (Eigen::Index i = 0; i < values.rows(); ++i) {
    const Scalar* row = values.row(i).data();
    const std::uint8_t* row_allowed = allowed.size() != 0 ? allowed.row(i).data() : nullptr;
    Scalar* out = drawn.values.row(i / block).data();
    std::uint8_t* seen = drawn.allowed.row(i / block).data();
    for (Eigen::Index bj = 0; bj < cols; ++bj) {
      const Eigen::Index end = std::min(values.cols(), (bj + 1) * block);
      for (Eigen::Index j = bj * block; j < end; ++j) {
        if (row_allowed != nullptr && row_allowed[j] == 0) continue;
        out[bj] = seen[bj] != 0 ? static_cast<Scalar>(fold(out[bj], row[j], signed_data)) : row[j];
        seen[bj] = 1;
      }
    }
  }
  if (one_run.size() != 0) {
    for (Eigen::Index i = 0; i < values.rows(); ++i) {
      for (Eigen::Index j = 0; j < values.cols(); ++j) {
        std::uint8_t& cell = drawn.allowed(i / block, j / block);
        if (one_run(i, j) != 0 && cell == kCellMasked) cell = kCellMaskedInOneRun;
      }
    }
  }
  return drawn;
}

void draw_cells(Image& image, const DrawnCells& cells, Point origin, int cell_px,
                const ValueRange& range, const Colormap& colormap) {
  const int cols = static_cast<int>(cells.values.cols());
  for (int i = 0; i < cells.values.rows(); ++i) {
    const int y0 = origin.y_px + i * cell_px;
    // One pixel row of colour per cell row, then copied down: cells are whole squares.
    for (int j = 0; j < cols; ++j) {
      const Rgb colour = cells.allowed(i, j) == kCellAllowed
                             ? colormap.at(color_position(range, cells.values(i, j)))
                             : kMaskedFill;
      image.fill_rect({origin.x_px + j * cell_px, y0, cell_px, 1}, colour);
    }
    image.repeat_row_span(origin.x_px, y0, cols * cell_px, cell_px - 1);
    for (int j = 0; j < cols; ++j) {
      if (cells.allowed(i, j) == kCellAllowed) continue;
      const bool one_run = cells.allowed(i, j) == kCellMaskedInOneRun;
      for (int dy = 0; dy < cell_px; ++dy) {
        // Hatch pixels are those with (x + y) % kHatchPeriodPx == 0 (one run: (x − y), the other
        // diagonal), x and y from the panel origin.
        const int x0 = j * cell_px, y = i * cell_px + dy;
        const int phase = one_run ? ((x0 - y) % kHatchPeriodPx + kHatchPeriodPx) % kHatchPeriodPx
                                  : (x0 + y) % kHatchPeriodPx;
        const int first = (kHatchPeriodPx - phase) % kHatchPeriodPx;
        for (int dx = first; dx < cell_px; dx += kHatchPeriodPx) {
          image.set(origin.x_px + x0 + dx, origin.y_px + y, one_run ? kOneRunHatch : kMaskedHatch);
        }
      }
    }
  }
}

std::string cell_value_text(double value, bool significant) {
  char text[32];
  if (significant) {
    std::snprintf(text, sizeof text, "%.*g", kSignificantDigits, value);
  } else {
    std::snprintf(text, sizeof text, "%.*f", kValueDecimals, value);
  }
  return text;
}

void draw_values(Image& image, const DrawnCells& cells, Point origin, int cell_px, int font_px,
                 const FontSet& fonts, const ValueRange& range, const Colormap& colormap, bool significant) {
  const int line_height_px = fonts.line_metrics(font_px).line_height_px;
  for (int i = 0; i < cells.values.rows(); ++i) {
    for (int j = 0; j < cells.values.cols(); ++j) {
      if (cells.allowed(i, j) != kCellAllowed) continue;
      const double v = cells.values(i, j);
      const std::string text = cell_value_text(v, significant);
      const Rgb background = colormap.at(color_position(range, v));
      const int width_px = fonts.text_width_px(text, font_px);
      fonts.draw(image, text, origin.x_px + j * cell_px + (cell_px - width_px) / 2,
                 origin.y_px + i * cell_px + (cell_px - line_height_px) / 2, font_px,
                 contrasting_text(background));
    }
  }
}

}  // namespace attnviz
