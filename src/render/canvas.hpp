// One drawing surface for pictures drawn both as PNG and as SVG: filled rectangles and lines of
// text, in pixels (1 SVG user unit = 1 PNG pixel). The raster canvas draws into an Image with a
// FontSet (shaping, BiDi, fallback fonts); the SVG canvas writes <rect> and <text> elements that a
// browser lays out itself, measured with the same FontSet so that layouts agree.
#pragma once

#include <string>
#include <string_view>

#include "render/font.hpp"
#include "render/image.hpp"

namespace attnviz {

class Canvas {
 public:
  virtual ~Canvas() = default;
  /// Fills `rect` with `colour` (clipped to the picture).
  virtual void rect(const Rect& rect, Rgb colour) = 0;
  /// One line of `utf8` with the top of its line box at top_px, its pen starting at left_px.
  virtual void text(std::string_view utf8, int left_px, int top_px, int size_px, Rgb colour) = 0;
};

/// Draws into `image` with `fonts`.
class ImageCanvas : public Canvas {
 public:
  ImageCanvas(Image& image, const FontSet& fonts) : image_(image), fonts_(fonts) {}
  void rect(const Rect& rect, Rgb colour) override { image_.fill_rect(rect, colour); }
  void text(std::string_view utf8, int left_px, int top_px, int size_px, Rgb colour) override {
    fonts_.draw(image_, utf8, left_px, top_px, size_px, colour);
  }

 private:
  Image& image_;
  const FontSet& fonts_;
};

/// Collects SVG elements in body(); text baselines come from `fonts`' ascent, as the PNG's do.
class SvgCanvas : public Canvas {
 public:
  explicit SvgCanvas(const FontSet& fonts) : fonts_(fonts) {}
  void rect(const Rect& rect, Rgb colour) override;
  void text(std::string_view utf8, int left_px, int top_px, int size_px, Rgb colour) override;
  const std::string& body() const { return body_; }

 private:
  const FontSet& fonts_;
  std::string body_;
};

}  // namespace attnviz
