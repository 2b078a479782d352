#include "render/colorbar.hpp"

#include <algorithm>
#include <cmath>

namespace attnviz {

namespace {

constexpr int kStripWidthPx = 18;
constexpr int kTickLengthPx = 4;
constexpr int kTickGapPx = 3;       // between a tick mark and its number
constexpr int kCaptionGapPx = 10;   // between the numbers and the caption lines
constexpr int kTickFontPx = 12;
constexpr int kCaptionFontPx = 13;
constexpr int kMinStripHeightPx = 160;
constexpr int kCaptionPaddingPx = 8;  // free strip length beyond the longer caption line
constexpr Rgb kFrameColour{64, 64, 64};
constexpr Rgb kTextColour{34, 34, 34};

int tick_labels_width_px(const FontSet& fonts, const ColorbarScale& scale) {
  int width_px = 0;
  for (const Tick& tick : scale.ticks) {
    width_px = std::max(width_px, fonts.text_width_px(tick.label, kTickFontPx));
  }
  return width_px;
}

// Row of the strip (from its top) where `value` sits: top = vmax, bottom = vmin.
int tick_row(const ValueRange& range, double value, int height_px) {
  return static_cast<int>(std::lround((1.0 - color_position(range, value)) * (height_px - 1)));
}

}  // namespace

ColorbarSize measure_colorbar(const FontSet& fonts, const ColorbarScale& scale,
                                 const std::string& label) {
  const int caption_line_px = fonts.line_metrics(kCaptionFontPx).line_height_px;
  const int longest_caption_px = std::max(fonts.text_width_px(label, kCaptionFontPx),
                                          fonts.text_width_px(scale.caption, kCaptionFontPx));
  ColorbarSize size;
  size.width_px = kStripWidthPx + kTickLengthPx + kTickGapPx +
                  tick_labels_width_px(fonts, scale) + kCaptionGapPx + 2 * caption_line_px;
  size.min_height_px = std::max(kMinStripHeightPx, longest_caption_px + 2 * kCaptionPaddingPx);
  size.overhang_px = fonts.line_metrics(kTickFontPx).line_height_px / 2;
  return size;
}

void draw_colorbar(Image& image, const FontSet& fonts, const Rect& area,
                     const ColorbarScale& scale, const Colormap& colormap,
                     const std::string& label) {
  const Rect strip{area.x_px, area.y_px, kStripWidthPx, area.height_px};
  const ValueRange& range = scale.range;
  for (int y = 0; y < strip.height_px; ++y) {
    // Pixel row centres sample the range evenly, top row near vmax.
    const double t = 1.0 - (y + 0.5) / strip.height_px;
    const double value = value_at_position(range, t);
    image.fill_rect({strip.x_px, strip.y_px + y, strip.width_px, 1},
                    colormap.at(color_position(range, value)));
  }
  image.fill_rect({strip.x_px - 1, strip.y_px - 1, strip.width_px + 2, 1}, kFrameColour);
  image.fill_rect({strip.x_px - 1, strip.bottom_px(), strip.width_px + 2, 1}, kFrameColour);
  image.fill_rect({strip.x_px - 1, strip.y_px, 1, strip.height_px}, kFrameColour);
  image.fill_rect({strip.right_px(), strip.y_px, 1, strip.height_px}, kFrameColour);

  const LineMetrics tick_line = fonts.line_metrics(kTickFontPx);
  for (const Tick& tick : scale.ticks) {
    const int y = strip.y_px + tick_row(range, tick.value, strip.height_px);
    image.fill_rect({strip.right_px(), y, kTickLengthPx, 1}, kFrameColour);
    fonts.draw(image, tick.label, strip.right_px() + kTickLengthPx + kTickGapPx,
               y - tick_line.line_height_px / 2, kTickFontPx, kTextColour);
  }

  const int caption_line_px = fonts.line_metrics(kCaptionFontPx).line_height_px;
  int x = strip.right_px() + kTickLengthPx + kTickGapPx + tick_labels_width_px(fonts, scale) +
          kCaptionGapPx;
  for (const std::string& line : {label, scale.caption}) {
    const int width_px = fonts.text_width_px(line, kCaptionFontPx);
    const int bottom_px = strip.y_px + (strip.height_px + width_px) / 2;
    fonts.draw_vertical(image, line, x, bottom_px, kCaptionFontPx, kTextColour);
    x += caption_line_px;
  }
}

}  // namespace attnviz
