#include "render/font.hpp"

#include <hb.h>
#include <stb_truetype.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "render/bidi.hpp"
#include "render/font_file.hpp"
#include "render/graphemes.hpp"
#include "render/system_fonts.hpp"

namespace attnviz {

namespace {

constexpr int kFirstFontInFile = 0;  // for .ttc collections we use the first face
constexpr int kNoGlyph = 0;          // stbtt_FindGlyphIndex's "not in this font"
constexpr int kNoFont = -1;
constexpr int kFontKeyShift = 48;    // glyph cache key: font << 48 | size_px << 32 | glyph index
constexpr int kSizeKeyShift = 32;

// One font file: stb_truetype rasterises its outlines, HarfBuzz shapes text with it. Both read
// `bytes`, which stays in place (fonts are held by unique_ptr).
struct LoadedFont {
  std::vector<unsigned char> bytes;
  stbtt_fontinfo info{};
  std::unique_ptr<hb_blob_t, decltype(&hb_blob_destroy)> blob{nullptr, hb_blob_destroy};
  std::unique_ptr<hb_face_t, decltype(&hb_face_destroy)> face{nullptr, hb_face_destroy};
  std::unique_ptr<hb_font_t, decltype(&hb_font_destroy)> font{nullptr, hb_font_destroy};
};

// A rasterised glyph at one size. The coverage bitmap's top-left corner sits at
// (pen_x + x_offset_px, baseline + y_offset_px).
struct Glyph {
  int x_offset_px = 0, y_offset_px = 0, width_px = 0, height_px = 0;
  std::vector<unsigned char> coverage;  // width_px × height_px, 0 = none, 255 = full
};

// One glyph of a laid-out line, with the glyph cache entry that draws it.
struct PlacedGlyph {
  const Glyph* glyph;
  ShapedGlyph shaped;
};

std::unique_ptr<LoadedFont> load_font(const std::string& path) {
  auto font = std::make_unique<LoadedFont>();
  font->bytes = read_font_file(path);
  const int offset = font->bytes.empty()
                         ? -1
                         : stbtt_GetFontOffsetForIndex(font->bytes.data(), kFirstFontInFile);
  if (offset < 0 || stbtt_InitFont(&font->info, font->bytes.data(), offset) == 0) {
    throw InputError::unreadable(path, "not a TrueType/OpenType font");
  }
  font->blob.reset(hb_blob_create(reinterpret_cast<const char*>(font->bytes.data()),
                                  static_cast<unsigned>(font->bytes.size()), HB_MEMORY_MODE_READONLY, nullptr,
                                  nullptr));
  font->face.reset(hb_face_create(font->blob.get(), kFirstFontInFile));
  font->font.reset(hb_font_create(font->face.get()));  // scale: font units (upem)
  return font;
}

// A run of text drawn with one font in one direction: clusters of equal font and level.
struct Run {
  std::u32string text;
  int font = 0;
  std::uint8_t level = 0;
};

}  // namespace

std::string default_font_path() { return ATTNVIZ_DEFAULT_FONT; }

std::vector<std::string> label_font_paths(const std::vector<std::string>& chosen) {
  std::vector<std::string> paths = chosen;
  if (std::find(paths.begin(), paths.end(), default_font_path()) == paths.end()) {
    paths.push_back(default_font_path());
  }
  return paths;
}

struct FontSet::Impl {
  std::vector<std::string> paths;
  std::shared_ptr<const FallbackFonts> fallback;  // null: only `paths`
  // Guards everything below, so that pictures can be drawn on several threads with one FontSet
  // (fallback fonts are added while drawing). Glyph references stay valid after the lock is
  // released: entries are never erased or moved.
  mutable std::mutex mutex;
  mutable std::vector<std::unique_ptr<LoadedFont>> fonts;
  mutable std::vector<std::string> fallback_paths;  // loaded through fontconfig, after `paths`
  mutable std::set<std::string> refused_paths;      // fontconfig candidates that did not load
  // Code point -> index of the first font that has it (kNoFont if none, after fallback).
  mutable std::unordered_map<char32_t, int> resolved;
  mutable std::unordered_map<std::uint64_t, Glyph> glyphs;
  // Laid-out lines by size and text: a model run draws the same token labels in every picture
  // of every layer (issue 11: shaping them again was 8% of `heatmaps --model`'s time). Valid for
  // good: a code point's font, once resolved, never changes. Emptied when it grows past
  // kMaxCachedLines (long titles are measured prefix by prefix while wrapping).
  struct Line {
    std::vector<PlacedGlyph> placed;
    int width_px = 0;
  };
  static constexpr std::size_t kMaxCachedLines = 1 << 16;
  mutable std::unordered_map<std::string, Line> lines;

  float scale(int font, int size_px) const {
    return stbtt_ScaleForMappingEmToPixels(&fonts[static_cast<std::size_t>(font)]->info,
                                           static_cast<float>(size_px));
  }

  bool font_has(int font, char32_t code_point) const {
    return stbtt_FindGlyphIndex(&fonts[static_cast<std::size_t>(font)]->info, static_cast<int>(code_point)) !=
           kNoGlyph;
  }

  // A font of `fallback` that fontconfig offers for `code_point`, loads and has an outline for
  // it, added to the set; kNoFont when none does.
  int find_fallback(char32_t code_point) const {
    for (const std::string& path : fallback->fonts_for(code_point)) {
      if (std::find(paths.begin(), paths.end(), path) != paths.end() ||
          std::find(fallback_paths.begin(), fallback_paths.end(), path) != fallback_paths.end() ||
          refused_paths.count(path) != 0) {
        continue;
      }
      try {
        std::unique_ptr<LoadedFont> font = load_font(path);
        const int glyph = stbtt_FindGlyphIndex(&font->info, static_cast<int>(code_point));
        // A colour-bitmap font (Noto Color Emoji) has no outlines stb_truetype can draw.
        stbtt_vertex* shape = nullptr;
        const int vertices = glyph == kNoGlyph ? 0 : stbtt_GetGlyphShape(&font->info, glyph, &shape);
        stbtt_FreeShape(&font->info, shape);
        if (vertices == 0) {
          refused_paths.insert(path);
          continue;
        }
        fonts.push_back(std::move(font));
        fallback_paths.push_back(path);
        return static_cast<int>(fonts.size()) - 1;
      } catch (const InputError&) {
        refused_paths.insert(path);
      }
    }
    return kNoFont;
  }

  // Requires: mutex held.
  int resolve(char32_t code_point) const {
    const auto found = resolved.find(code_point);
    if (found != resolved.end()) return found->second;
    int result = kNoFont;
    for (std::size_t f = 0; f < fonts.size() && result == kNoFont; ++f) {
      if (font_has(static_cast<int>(f), code_point)) result = static_cast<int>(f);
    }
    if (result == kNoFont && fallback) result = find_fallback(code_point);
    resolved.emplace(code_point, result);
    return result;
  }

  // Code points a font must have to draw them: not default-ignorable (ZWJ, variation
  // selectors, direction marks draw nothing).
  static bool needs_glyph(char32_t code_point) {
    return !is_default_ignorable(code_point) && !is_bidi_control(code_point);
  }

  // The first font that has every needed code point of the cluster (a fallback found for one of
  // them counts too); kNoFont if none. A cluster with nothing to draw takes font 0.
  // Requires: mutex held.
  int cluster_font(std::u32string_view cluster) const {
    for (const char32_t cp : cluster) {
      if (needs_glyph(cp)) resolve(cp);  // loads a fallback font if one is needed and exists
    }
    for (std::size_t f = 0; f < fonts.size(); ++f) {
      const bool all = std::all_of(cluster.begin(), cluster.end(), [&](char32_t cp) {
        return !needs_glyph(cp) || font_has(static_cast<int>(f), cp);
      });
      if (all) return static_cast<int>(f);
    }
    return kNoFont;
  }

  // Requires: mutex held.
  const Glyph& glyph(int font, int index, int size_px) const {
    const std::uint64_t key = (static_cast<std::uint64_t>(font) << kFontKeyShift) |
                              (static_cast<std::uint64_t>(size_px) << kSizeKeyShift) |
                              static_cast<std::uint32_t>(index);
    const auto found = glyphs.find(key);
    if (found != glyphs.end()) return found->second;
    const stbtt_fontinfo* info = &fonts[static_cast<std::size_t>(font)]->info;
    const float s = scale(font, size_px);
    Glyph g;
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    stbtt_GetGlyphBitmapBox(info, index, s, s, &x0, &y0, &x1, &y1);
    g.x_offset_px = x0;
    g.y_offset_px = y0;
    g.width_px = x1 - x0;
    g.height_px = y1 - y0;
    g.coverage.resize(static_cast<std::size_t>(g.width_px * g.height_px));
    if (!g.coverage.empty()) {
      stbtt_MakeGlyphBitmap(info, g.coverage.data(), g.width_px, g.height_px, g.width_px, s, s, index);
    }
    return glyphs.emplace(key, std::move(g)).first->second;
  }

  // The runs of `utf8` in logical order: grapheme clusters grouped by font and bidi level,
  // explicit direction marks dropped, a cluster no font has replaced by U+FFFD (or
  // "<U+XXXX>" when no font has that either). Requires: mutex held.
  std::vector<Run> runs(std::string_view utf8) const {
    const std::u32string text = decode_utf8(utf8);
    const std::vector<std::uint8_t> levels = bidi_levels(text);
    const std::vector<std::size_t> starts = grapheme_starts(text);
    std::vector<Run> runs;
    for (std::size_t k = 0; k < starts.size(); ++k) {
      const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : text.size();
      std::u32string cluster;
      for (std::size_t i = starts[k]; i < end; ++i) {
        if (!is_bidi_control(text[i])) cluster.push_back(text[i]);
      }
      if (cluster.empty()) continue;
      int font = cluster_font(cluster);
      if (font == kNoFont) {
        font = resolve(kReplacementCharacter);
        cluster = font != kNoFont ? std::u32string(1, kReplacementCharacter) : std::u32string();
        if (font == kNoFont) {
          font = 0;
          for (const char c : "<" + code_point_name(text[starts[k]]) + ">") cluster.push_back(static_cast<char32_t>(c));
        }
      }
      const std::uint8_t level = levels[starts[k]];
      if (runs.empty() || runs.back().font != font || runs.back().level != level) runs.push_back({{}, font, level});
      runs.back().text += cluster;
    }
    return runs;
  }

  // layout() of `utf8` at `size_px`, from the cache when it was laid out before. The reference
  // is valid until the next call. Requires: mutex held.
  const Line& cached_layout(std::string_view utf8, int size_px) const {
    std::string key(reinterpret_cast<const char*>(&size_px), sizeof size_px);
    key += utf8;
    if (const auto found = lines.find(key); found != lines.end()) return found->second;
    if (lines.size() >= kMaxCachedLines) lines.clear();
    Line line;
    line.placed = layout(utf8, size_px, line.width_px);
    return lines.emplace(std::move(key), std::move(line)).first->second;
  }

  // Shapes each run with HarfBuzz in its direction and places the runs in visual order (UAX #9
  // rule L2). Returns the glyphs left to right; `width_px` is the total advance.
  // Requires: mutex held.
  std::vector<PlacedGlyph> layout(std::string_view utf8, int size_px, int& width_px) const {
    const std::vector<Run> logical = runs(utf8);
    std::vector<std::uint8_t> run_levels;
    for (const Run& run : logical) run_levels.push_back(run.level);
    std::vector<PlacedGlyph> placed;
    float pen = 0;
    const std::unique_ptr<hb_buffer_t, decltype(&hb_buffer_destroy)> buffer(hb_buffer_create(), hb_buffer_destroy);
    for (const std::size_t r : visual_run_order(run_levels)) {
      const Run& run = logical[r];
      hb_buffer_clear_contents(buffer.get());
      hb_buffer_add_utf32(buffer.get(), reinterpret_cast<const std::uint32_t*>(run.text.data()),
                          static_cast<int>(run.text.size()), 0, static_cast<int>(run.text.size()));
      hb_buffer_set_direction(buffer.get(), run.level % 2 == 1 ? HB_DIRECTION_RTL : HB_DIRECTION_LTR);
      hb_buffer_guess_segment_properties(buffer.get());  // script and language; direction kept
      hb_buffer_set_flags(buffer.get(), HB_BUFFER_FLAG_REMOVE_DEFAULT_IGNORABLES);
      hb_shape(fonts[static_cast<std::size_t>(run.font)]->font.get(), buffer.get(), nullptr, 0);
      unsigned count = 0;
      const hb_glyph_info_t* infos = hb_buffer_get_glyph_infos(buffer.get(), &count);
      const hb_glyph_position_t* positions = hb_buffer_get_glyph_positions(buffer.get(), &count);
      const float s = scale(run.font, size_px);  // HarfBuzz positions are in font units
      for (unsigned i = 0; i < count; ++i) {
        const int index = static_cast<int>(infos[i].codepoint);
        ShapedGlyph shaped{run.font, index, static_cast<int>(std::lround(pen + positions[i].x_offset * s)),
                           static_cast<int>(std::lround(-positions[i].y_offset * s))};
        placed.push_back({&glyph(run.font, index, size_px), shaped});
        pen += static_cast<float>(positions[i].x_advance) * s;
      }
    }
    width_px = static_cast<int>(std::lround(pen));
    return placed;
  }
};

FontSet::FontSet(const std::vector<std::string>& paths, std::shared_ptr<const FallbackFonts> fallback)
    : impl_(std::make_unique<Impl>()) {
  if (paths.empty()) throw InputError::unreadable("--font", "no font file given");
  impl_->paths = paths;
  impl_->fallback = std::move(fallback);
  for (const std::string& path : paths) impl_->fonts.push_back(load_font(path));
}

FontSet::~FontSet() = default;
FontSet::FontSet(FontSet&&) noexcept = default;
FontSet& FontSet::operator=(FontSet&&) noexcept = default;

const std::vector<std::string>& FontSet::paths() const { return impl_->paths; }

const FallbackFonts* FontSet::fallback() const { return impl_->fallback.get(); }

LineMetrics FontSet::line_metrics(int size_px) const {
  int ascent = 0, descent = 0, line_gap = 0;
  const std::lock_guard<std::mutex> lock(impl_->mutex);  // fallback fonts may be added meanwhile
  stbtt_GetFontVMetrics(&impl_->fonts.front()->info, &ascent, &descent, &line_gap);
  const float scale = impl_->scale(0, size_px);
  return {static_cast<int>(std::ceil(static_cast<float>(ascent) * scale)),
          static_cast<int>(std::ceil(static_cast<float>(ascent - descent + line_gap) * scale))};
}

bool FontSet::has_glyph(char32_t code_point) const {
  if (!Impl::needs_glyph(code_point)) return true;
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->resolve(code_point) != kNoFont;
}

std::vector<char32_t> FontSet::missing_code_points(std::string_view utf8) const {
  const std::u32string text = decode_utf8(utf8);
  const std::vector<std::size_t> starts = grapheme_starts(text);
  std::vector<char32_t> missing;
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : text.size();
    const std::u32string_view cluster = std::u32string_view(text).substr(starts[k], end - starts[k]);
    if (impl_->cluster_font(cluster) != kNoFont) continue;
    for (const char32_t cp : cluster) {
      if (Impl::needs_glyph(cp) && impl_->resolve(cp) == kNoFont &&
          std::find(missing.begin(), missing.end(), cp) == missing.end()) {
        missing.push_back(cp);
      }
    }
  }
  return missing;
}

int FontSet::text_width_px(std::string_view utf8, int size_px) const {
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->cached_layout(utf8, size_px).width_px;
}

std::vector<ShapedGlyph> FontSet::shape(std::string_view utf8, int size_px) const {
  std::vector<ShapedGlyph> shaped;
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  for (const PlacedGlyph& placed : impl_->cached_layout(utf8, size_px).placed) shaped.push_back(placed.shaped);
  return shaped;
}

void FontSet::draw(Image& image, std::string_view utf8, int left_px, int top_px, int size_px,
                   Rgb colour) const {
  const int baseline_px = top_px + line_metrics(size_px).ascent_px;
  std::vector<PlacedGlyph> placed;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    placed = impl_->cached_layout(utf8, size_px).placed;
  }
  for (const PlacedGlyph& p : placed) {
    const Glyph& g = *p.glyph;
    const int x0 = left_px + p.shaped.pen_x_px + g.x_offset_px;
    const int y0 = baseline_px + p.shaped.y_shift_px + g.y_offset_px;
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
  const int ascent_px = line_metrics(size_px).ascent_px;
  std::vector<PlacedGlyph> placed;
  {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    placed = impl_->cached_layout(utf8, size_px).placed;
  }
  for (const PlacedGlyph& p : placed) {
    const Glyph& g = *p.glyph;
    const int u0 = p.shaped.pen_x_px + g.x_offset_px;
    const int v0 = ascent_px + p.shaped.y_shift_px + g.y_offset_px;
    for (int gy = 0; gy < g.height_px; ++gy) {
      const unsigned char* coverage = g.coverage.data() + gy * g.width_px;
      for (int gx = 0; gx < g.width_px; ++gx) {
        image.blend(left_px + v0 + gy, bottom_px - 1 - (u0 + gx), colour, coverage[gx]);
      }
    }
  }
}

}  // namespace attnviz
