// The colour bar beside a grid: a vertical strip of the colour map (top = range.vmax), tick marks
// with numbers, and two rotated lines reading bottom to top: the quantity ("attention weight") and
// the scale caption ("fixed scale 0–1"). Does not choose the range (see color_scale.hpp).
#pragma once

#include <string>

#include "render/color_scale.hpp"
#include "render/colormap.hpp"
#include "render/font.hpp"
#include "render/image.hpp"

namespace attnviz {

/// Space a colour bar needs besides its strip height.
struct ColorbarSize {
  int width_px = 0;          // strip, ticks, numbers and both caption lines
  int min_height_px = 0;     // strip height needed for ticks and the longer caption line
  int overhang_px = 0;       // tick numbers reach this far above the strip top and below its bottom
};

ColorbarSize measure_colorbar(const FontSet& fonts, const ColorbarScale& scale,
                                 const std::string& label);

/// Draws the bar with its strip's top-left corner at area's, strip height area.height_px.
/// Requires: area.height_px >= measure_colorbar(...).min_height_px.
void draw_colorbar(Image& image, const FontSet& fonts, const Rect& area,
                     const ColorbarScale& scale, const Colormap& colormap,
                     const std::string& label);

}  // namespace attnviz
