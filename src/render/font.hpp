// Text for labels and titles as people write it: a primary font plus fallbacks (and, when asked,
// the installed fonts fontconfig finds for missing characters); each label in its visual order
// (Unicode BiDi, bidi.hpp) and shaped by HarfBuzz (Arabic joining, marks, ligatures); glyphs
// rasterised by stb_truetype and drawn anti-aliased, horizontally or rotated 90° reading bottom
// to top. A user-perceived character (grapheme cluster) no font has is drawn as one U+FFFD and
// reported. Caches each rasterised (font, glyph, size) and each shaped line. Does not lay out
// labels or decide what a token displays as (see head_grid.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "render/image.hpp"
#include "render/system_fonts.hpp"

namespace attnviz {

/// The font used when the user names none (ATTNVIZ_DEFAULT_FONT, DejaVu Sans on Debian).
std::string default_font_path();

/// The fonts for labels: the user's --font files in order, then the default font (so that
/// what it draws still draws when a font is added), each once.
std::vector<std::string> label_font_paths(const std::vector<std::string>& chosen);

/// One glyph of a shaped line, in visual order: which font, which glyph, where.
struct ShapedGlyph {
  int font = 0;       ///< index into the set's fonts (fallbacks found later come after paths())
  int glyph = 0;      ///< glyph index in that font
  int pen_x_px = 0;   ///< left edge of the glyph's advance, from the line's start
  int y_shift_px = 0; ///< vertical offset, down positive (marks placed by the font)
};

/// Vertical metrics of one line of text at a size, in whole pixels.
struct LineMetrics {
  int ascent_px = 0;       // from the top of the line box down to the baseline
  int line_height_px = 0;  // height of the line box (ascent + descent + line gap)
};

/// An ordered list of fonts: each grapheme cluster is drawn by the first font that has all its
/// (not default-ignorable) code points, else by a font fontconfig finds among the fallback fonts
/// (the installed ones unless a test pins them). A cluster no font has is drawn as one U+FFFD
/// from the first font that has that, else as the ASCII text "<U+XXXX>"; missing_code_points()
/// lists such code points so callers can warn. Explicit direction marks and other default-ignorable characters are never drawn and
/// never missing.
/// Sizes are em sizes in pixels (the font size, as in CSS px). Thread-safe: const calls may run
/// on several threads at once (a mutex guards the glyph cache).
class FontSet {
 public:
  /// Loads every file in `paths` (at least one). Characters none of them has are looked for in
  /// `fallback` (null: nowhere; a test that needs the same result on every machine passes null or
  /// FallbackFonts::only). Throws InputError::unreadable naming the path if a file cannot be read
  /// or is not a TrueType/OpenType font.
  explicit FontSet(const std::vector<std::string>& paths = {default_font_path()},
                   std::shared_ptr<const FallbackFonts> fallback = FallbackFonts::installed());
  ~FontSet();
  FontSet(FontSet&&) noexcept;
  FontSet& operator=(FontSet&&) noexcept;
  FontSet(const FontSet&) = delete;
  FontSet& operator=(const FontSet&) = delete;

  /// The font files, primary first, as given.
  const std::vector<std::string>& paths() const;
  /// Where missing glyphs may come from besides paths(); null if nowhere.
  const FallbackFonts* fallback() const;
  /// Line metrics of the primary font at `size_px` (> 0).
  LineMetrics line_metrics(int size_px) const;
  /// True if some font in the set has a glyph for `code_point`.
  bool has_glyph(char32_t code_point) const;
  /// Code points of `utf8` that no font has, each once, in order of first appearance.
  std::vector<char32_t> missing_code_points(std::string_view utf8) const;
  /// Advance width of `utf8` drawn at `size_px`, kerning included: the pixels draw() uses.
  int text_width_px(std::string_view utf8, int size_px) const;
  /// The glyphs draw() draws for `utf8`, left to right as they appear (visual order).
  std::vector<ShapedGlyph> shape(std::string_view utf8, int size_px) const;

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
