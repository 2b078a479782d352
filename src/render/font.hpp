// TrueType text for labels and titles, via stb_truetype: loads a primary font plus fallbacks,
// measures and draws UTF-8 strings anti-aliased (horizontal, or rotated 90° reading bottom to
// top), and reports code points no font has. Caches each rasterised (code point, size) glyph.
// Does not lay out labels or decide what a token displays as (see head_grid.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "render/image.hpp"

namespace attnviz {

/// The font used when the user names none (ATTNVIZ_DEFAULT_FONT, DejaVu Sans on Debian).
std::string default_font_path();

/// Vertical metrics of one line of text at a size, in whole pixels.
struct LineMetrics {
  int ascent_px = 0;       // from the top of the line box down to the baseline
  int line_height_px = 0;  // height of the line box (ascent + descent + line gap)
};

/// An ordered list of fonts: for each code point the first font that has a glyph draws it.
/// A code point no font has is drawn as U+FFFD from the first font that has that, else as the
/// ASCII text "<U+XXXX>"; missing_code_points() lists such code points so callers can warn.
/// Sizes are em sizes in pixels (the font size, as in CSS px). Thread-safe: const calls may run
/// on several threads at once (a mutex guards the glyph cache).
class FontSet {
 public:
  /// Loads every file in `paths` (at least one). Throws InputError::unreadable naming the path
  /// if a file cannot be read or is not a TrueType/OpenType font.
  explicit FontSet(const std::vector<std::string>& paths = {default_font_path()});
  ~FontSet();
  FontSet(FontSet&&) noexcept;
  FontSet& operator=(FontSet&&) noexcept;
  FontSet(const FontSet&) = delete;
  FontSet& operator=(const FontSet&) = delete;

  /// The font files, primary first, as given.
  const std::vector<std::string>& paths() const;
  /// Line metrics of the primary font at `size_px` (> 0).
  LineMetrics line_metrics(int size_px) const;
  /// True if some font in the set has a glyph for `code_point`.
  bool has_glyph(char32_t code_point) const;
  /// Code points of `utf8` that no font has, each once, in order of first appearance.
  std::vector<char32_t> missing_code_points(std::string_view utf8) const;
  /// Advance width of `utf8` drawn at `size_px`, kerning included: the pixels draw() uses.
  int text_width_px(std::string_view utf8, int size_px) const;

  /// Draws `utf8` with the top of its line box at top_px and its pen starting at left_px,
  /// blending anti-aliased coverage over the image (clipped to it).
  void draw(Image& image, std::string_view utf8, int left_px, int top_px, int size_px,
            Rgb colour) const;
  /// Draws `utf8` rotated 90° counter-clockwise, reading bottom to top: the line box occupies
  /// columns [left_px, left_px + line_height_px) and the text starts at row bottom_px - 1
  /// and ends text_width_px rows above it.
  void draw_vertical(Image& image, std::string_view utf8, int left_px, int bottom_px,
                     int size_px, Rgb colour) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnviz
