// An RGB raster in memory (8 bits per channel, row-major, top row first) and the few drawing
// primitives the renderer needs: rectangles, alpha-blended pixels, copying one image into another.
// Does not know about text, colour maps or files (see font.hpp, colormap.hpp, png.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/huge_page_allocator.hpp"

namespace attnviz {

/// One 8-bit-per-channel colour.
struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

/// A pixel position; y grows downwards.
struct Point {
  int x_px = 0, y_px = 0;
  friend bool operator==(const Point&, const Point&) = default;
};

/// Axis-aligned rectangle in pixels; (x_px, y_px) is the top-left corner, y grows downwards.
struct Rect {
  int x_px = 0, y_px = 0, width_px = 0, height_px = 0;
  int right_px() const { return x_px + width_px; }    // one past the last column
  int bottom_px() const { return y_px + height_px; }  // one past the last row
  bool contains(int x, int y) const {
    return x >= x_px && x < right_px() && y >= y_px && y < bottom_px();
  }
  friend bool operator==(const Rect&, const Rect&) = default;
};

/// RGB8 image (3 bytes per pixel: R, G, B). at(), set() and row() are inline and unchecked
/// (hot loops); every other drawing call clips to the image, so callers may draw partly outside it.
class Image {
 public:
  static constexpr int kBytesPerPixel = 3;  // R, G, B

  Image() = default;
  /// A width_px × height_px image filled with `background`. Requires: both sizes >= 0.
  Image(int width_px, int height_px, Rgb background);

  int width_px() const { return width_px_; }
  int height_px() const { return height_px_; }
  /// Requires: 0 <= x < width_px, 0 <= y < height_px.
  Rgb at(int x, int y) const {
    const std::uint8_t* p = row(y) + static_cast<std::size_t>(x) * kBytesPerPixel;
    return {p[0], p[1], p[2]};
  }
  void set(int x, int y, Rgb colour) {  // same precondition as at()
    std::uint8_t* p = row(y) + static_cast<std::size_t>(x) * kBytesPerPixel;
    p[0] = colour.r;
    p[1] = colour.g;
    p[2] = colour.b;
  }

  /// Fills the rectangle (clipped to the image) with `colour`.
  void fill_rect(const Rect& rect, Rgb colour);
  /// Blends `colour` over pixel (x, y) with coverage alpha (0 = keep, 255 = replace); clipped.
  void blend(int x, int y, Rgb colour, std::uint8_t alpha);
  /// Copies `source` so that its top-left pixel lands on (x, y); clipped.
  void blit(const Image& source, int x, int y);
  /// Copies pixel row y, columns [x, x + width), onto the `count` rows below it (clipped):
  /// how cells of many pixels are filled from one drawn row.
  void repeat_row_span(int x, int y, int width, int count);

  /// Start of pixel row y: width_px × 3 bytes, R G B per pixel. Requires: 0 <= y < height_px.
  std::uint8_t* row(int y) { return pixels_.data() + row_offset(y); }
  const std::uint8_t* row(int y) const { return pixels_.data() + row_offset(y); }
  /// All rows, top first, no padding (the layout image encoders and decoders expect).
  const std::uint8_t* data() const { return pixels_.data(); }

  friend bool operator==(const Image&, const Image&) = default;

 private:
  std::size_t row_offset(int y) const {
    return static_cast<std::size_t>(y) * static_cast<std::size_t>(width_px_) * kBytesPerPixel;
  }

  int width_px_ = 0;
  int height_px_ = 0;
  // Rasters of a megabyte or more (a grid, an overview) sit on huge pages: few page faults.
  std::vector<std::uint8_t, HugePageAllocator<std::uint8_t>> pixels_;  // height_px × width_px × 3 bytes
};

/// The images one above the other, each centred horizontally, on `background`; the result is as
/// wide as the widest image (used by `compare`: weights grid above differences grid).
Image stack_vertically(const std::vector<Image>& images, Rgb background);

}  // namespace attnviz
