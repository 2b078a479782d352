#include "render/font.hpp"

#include <stb_truetype.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include "core/error.hpp"
#include "render/font_file.hpp"
#include "render/utf8.hpp"

namespace attnviz {

namespace {

constexpr int kFirstFontInFile = 0;  // for .ttc collections we use the first face
constexpr int kNoGlyph = 0;          // stbtt_FindGlyphIndex's "not in this font"
constexpr int kSizeKeyShift = 32;    // glyph cache key: size_px << 32 | code point

struct LoadedFont {
  std::vector<unsigned char> bytes;  // stbtt_fontinfo points into this buffer
  stbtt_fontinfo info{};
};

// A rasterised glyph at one size. The coverage bitmap's top-left corner sits at
// (pen_x + x_offset_px, baseline + y_offset_px).
struct Glyph {
  int font = 0;   // index into FontSet::Impl::fonts
  int index = 0;  // glyph index inside that font
  float scale = 0;
  float advance_px = 0;
  int x_offset_px = 0, y_offset_px = 0, width_px = 0, height_px = 0;
  std::vector<unsigned char> coverage;  // width_px × height_px, 0 = none, 255 = full
};

// One glyph of a laid-out line: where the pen was when it was drawn.
struct PlacedGlyph {
  const Glyph* glyph;
  int pen_x_px;
};

LoadedFont load_font(const std::string& path) {
  LoadedFont font;
  font.bytes = read_font_file(path);
  const int offset = font.bytes.empty()
                         ? -1
                         : stbtt_GetFontOffsetForIndex(font.bytes.data(), kFirstFontInFile);
  if (offset < 0 || stbtt_InitFont(&font.info, font.bytes.data(), offset) == 0) {
    throw InputError::unreadable(path, "not a TrueType/OpenType font");
  }
  return font;
}

}  // namespace

std::string default_font_path() { return ATTNVIZ_DEFAULT_FONT; }

struct FontSet::Impl {
  std::vector<std::string> paths;
  std::vector<LoadedFont> fonts;
  // Guards both caches, so that pictures can be drawn on several threads with one FontSet. Glyph
  // references stay valid after the lock is released: entries are never erased or moved.
  mutable std::mutex cache_mutex;
  // Code point -> (font index or -1 if none has it, glyph index).
  mutable std::unordered_map<char32_t, std::pair<int, int>> resolved;
  // (size, code point) -> glyph. unordered_map keeps element addresses stable on rehash.
  mutable std::unordered_map<std::uint64_t, Glyph> glyphs;

  std::pair<int, int> resolve(char32_t code_point) const {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    return resolve_locked(code_point);
  }

  // Requires: cache_mutex held.
  std::pair<int, int> resolve_locked(char32_t code_point) const {
    const auto found = resolved.find(code_point);
    if (found != resolved.end()) return found->second;
    std::pair<int, int> result{-1, kNoGlyph};
    for (std::size_t f = 0; f < fonts.size(); ++f) {
      const int index = stbtt_FindGlyphIndex(&fonts[f].info, static_cast<int>(code_point));
      if (index != kNoGlyph) {
        result = {static_cast<int>(f), index};
        break;
      }
    }
    resolved.emplace(code_point, result);
    return result;
  }

  float scale(int font, int size_px) const {
    return stbtt_ScaleForMappingEmToPixels(&fonts[static_cast<std::size_t>(font)].info,
                                           static_cast<float>(size_px));
  }

  // Requires: resolve(code_point) found a font.
  const Glyph& glyph(char32_t code_point, int size_px) const {
    const std::lock_guard<std::mutex> lock(cache_mutex);
    const std::uint64_t key = (static_cast<std::uint64_t>(size_px) << kSizeKeyShift) | code_point;
    const auto found = glyphs.find(key);
    if (found != glyphs.end()) return found->second;
    Glyph g;
    std::tie(g.font, g.index) = resolve_locked(code_point);
    const stbtt_fontinfo* info = &fonts[static_cast<std::size_t>(g.font)].info;
    g.scale = scale(g.font, size_px);
    int advance = 0, left_bearing = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    stbtt_GetGlyphHMetrics(info, g.index, &advance, &left_bearing);
    stbtt_GetGlyphBitmapBox(info, g.index, g.scale, g.scale, &x0, &y0, &x1, &y1);
    g.advance_px = static_cast<float>(advance) * g.scale;
    g.x_offset_px = x0;
    g.y_offset_px = y0;
    g.width_px = x1 - x0;
    g.height_px = y1 - y0;
    g.coverage.resize(static_cast<std::size_t>(g.width_px * g.height_px));
    if (!g.coverage.empty()) {
      stbtt_MakeGlyphBitmap(info, g.coverage.data(), g.width_px, g.height_px, g.width_px,
                            g.scale, g.scale, g.index);
    }
    return glyphs.emplace(key, std::move(g)).first->second;
  }

  // The code points actually drawn: missing ones become U+FFFD, or "<U+XXXX>" if no font has
  // U+FFFD either.
  std::u32string drawable(std::string_view utf8) const {
    std::u32string out;
    for (char32_t cp : decode_utf8(utf8)) {
      if (resolve(cp).first >= 0) {
        out.push_back(cp);
      } else if (resolve(kReplacementCharacter).first >= 0) {
        out.push_back(kReplacementCharacter);
      } else {
        for (char c : "<" + code_point_name(cp) + ">") out.push_back(static_cast<char32_t>(c));
      }
    }
    return out;
  }

  // Pen positions of each glyph (kerning applied between glyphs of the same font); returns the
  // total advance in `width_px`.
  std::vector<PlacedGlyph> layout(std::string_view utf8, int size_px, int& width_px) const {
    std::vector<PlacedGlyph> placed;
    float pen = 0;
    const Glyph* previous = nullptr;
    for (char32_t cp : drawable(utf8)) {
      const Glyph& g = glyph(cp, size_px);
      if (previous != nullptr && previous->font == g.font) {
        const stbtt_fontinfo* info = &fonts[static_cast<std::size_t>(g.font)].info;
        pen += static_cast<float>(stbtt_GetGlyphKernAdvance(info, previous->index, g.index)) *
               g.scale;
      }
      placed.push_back({&g, static_cast<int>(std::lround(pen))});
      pen += g.advance_px;
      previous = &g;
    }
    width_px = static_cast<int>(std::lround(pen));
    return placed;
  }
};

FontSet::FontSet(const std::vector<std::string>& paths) : impl_(std::make_unique<Impl>()) {
  if (paths.empty()) throw InputError::unreadable("--font", "no font file given");
  impl_->paths = paths;
  impl_->fonts.reserve(paths.size());  // fontinfo points into bytes: keep buffers in place
  for (const std::string& path : paths) impl_->fonts.push_back(load_font(path));
}

FontSet::~FontSet() = default;
FontSet::FontSet(FontSet&&) noexcept = default;
FontSet& FontSet::operator=(FontSet&&) noexcept = default;

const std::vector<std::string>& FontSet::paths() const { return impl_->paths; }

LineMetrics FontSet::line_metrics(int size_px) const {
  int ascent = 0, descent = 0, line_gap = 0;
  stbtt_GetFontVMetrics(&impl_->fonts.front().info, &ascent, &descent, &line_gap);
  const float scale = impl_->scale(0, size_px);
  return {static_cast<int>(std::ceil(static_cast<float>(ascent) * scale)),
          static_cast<int>(std::ceil(static_cast<float>(ascent - descent + line_gap) * scale))};
}

bool FontSet::has_glyph(char32_t code_point) const { return impl_->resolve(code_point).first >= 0; }

std::vector<char32_t> FontSet::missing_code_points(std::string_view utf8) const {
  std::vector<char32_t> missing;
  for (char32_t cp : decode_utf8(utf8)) {
    if (!has_glyph(cp) && std::find(missing.begin(), missing.end(), cp) == missing.end()) {
      missing.push_back(cp);
    }
  }
  return missing;
}

int FontSet::text_width_px(std::string_view utf8, int size_px) const {
  int width_px = 0;
  impl_->layout(utf8, size_px, width_px);
  return width_px;
}

void FontSet::draw(Image& image, std::string_view utf8, int left_px, int top_px, int size_px,
                   Rgb colour) const {
  int width_px = 0;
  const int baseline_px = top_px + line_metrics(size_px).ascent_px;
  for (const PlacedGlyph& placed : impl_->layout(utf8, size_px, width_px)) {
    const Glyph& g = *placed.glyph;
    const int x0 = left_px + placed.pen_x_px + g.x_offset_px;
    const int y0 = baseline_px + g.y_offset_px;
    for (int gy = 0; gy < g.height_px; ++gy) {
      const unsigned char* coverage = g.coverage.data() + gy * g.width_px;
      for (int gx = 0; gx < g.width_px; ++gx) image.blend(x0 + gx, y0 + gy, colour, coverage[gx]);
    }
  }
}

void FontSet::draw_vertical(Image& image, std::string_view utf8, int left_px, int bottom_px,
                            int size_px, Rgb colour) const {
  // In the unrotated line, pixel (u, v) (u along the text, v down from the line top) lands on
  // image pixel (left_px + v, bottom_px - 1 - u): a 90° counter-clockwise turn.
  int width_px = 0;
  const int ascent_px = line_metrics(size_px).ascent_px;
  for (const PlacedGlyph& placed : impl_->layout(utf8, size_px, width_px)) {
    const Glyph& g = *placed.glyph;
    const int u0 = placed.pen_x_px + g.x_offset_px;
    const int v0 = ascent_px + g.y_offset_px;
    for (int gy = 0; gy < g.height_px; ++gy) {
      const unsigned char* coverage = g.coverage.data() + gy * g.width_px;
      for (int gx = 0; gx < g.width_px; ++gx) {
        image.blend(left_px + v0 + gy, bottom_px - 1 - (u0 + gx), colour, coverage[gx]);
      }
    }
  }
}

}  // namespace attnviz
