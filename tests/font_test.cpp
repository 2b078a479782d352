// TrueType text: loading, fallbacks, missing-glyph reporting, measuring and drawing (BH-20).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "render/font.hpp"

using attnviz::FontSet;
using attnviz::Image;
using attnviz::Rgb;

namespace {

constexpr Rgb kWhite{255, 255, 255};
constexpr Rgb kBlack{0, 0, 0};
constexpr int kSizePx = 16;

// Bounding box of non-white pixels; width 0 if there are none.
attnviz::Rect ink_box(const Image& image) {
  int x0 = image.width_px(), y0 = image.height_px(), x1 = -1, y1 = -1;
  for (int y = 0; y < image.height_px(); ++y) {
    for (int x = 0; x < image.width_px(); ++x) {
      if (image.at(x, y) == kWhite) continue;
      x0 = std::min(x0, x);
      y0 = std::min(y0, y);
      x1 = std::max(x1, x);
      y1 = std::max(y1, y);
    }
  }
  return x1 < 0 ? attnviz::Rect{} : attnviz::Rect{x0, y0, x1 - x0 + 1, y1 - y0 + 1};
}

// A DejaVu file beside the default font (fonts-dejavu-core).
std::string dejavu(const std::string& name) {
  return (std::filesystem::path(ATTNVIZ_DEFAULT_FONT).parent_path() / name).string();
}

}  // namespace

TEST_CASE("font: a missing or invalid font file is an InputError naming the path", "[render][errors]") {
  CHECK_THROWS_AS(FontSet({"/nonexistent/font.ttf"}), attnviz::InputError);
  CHECK_THROWS_WITH(FontSet({"/nonexistent/font.ttf"}), Catch::Contains("/nonexistent/font.ttf"));
  CHECK_THROWS_WITH(FontSet({ATTNVIZ_DATA_DIR "/README.md"}),
                    Catch::Contains("README.md") && Catch::Contains("not a TrueType"));
}

// Without fallback fonts: with them, a machine with a CJK font installed draws 我 and 猫 (issue 24).
TEST_CASE("font: DejaVu Sans has the subword markers and accents but not CJK (BH-20)", "[render]") {
  const FontSet fonts({ATTNVIZ_DEFAULT_FONT}, nullptr);
  CHECK(fonts.paths() == std::vector<std::string>{ATTNVIZ_DEFAULT_FONT});
  CHECK(FontSet().paths() == fonts.paths());
  CHECK(fonts.missing_code_points("\xE2\x96\x81" "cat \xC4\xA0" "dog \xC3\xA9").empty());
  CHECK(fonts.missing_code_points("\xE2\x96\x81\xE6\x88\x91\xE7\x8C\xAB\xE6\x88\x91") ==
        std::vector<char32_t>{0x6211, 0x732B});
  CHECK(fonts.has_glyph(0x0627));  // Arabic alef
}

TEST_CASE("font: a later font is a per-glyph fallback", "[render]") {
  // DejaVu Sans Mono lacks Arabic; DejaVu Sans (the fallback) has it.
  const FontSet fonts({dejavu("DejaVuSansMono.ttf"), ATTNVIZ_DEFAULT_FONT}, nullptr);
  CHECK(fonts.missing_code_points("\xD8\xA7" "a").empty());
}

TEST_CASE("font: text is measured and drawn where asked, horizontally", "[render]") {
  const FontSet fonts;
  const int width_px = fonts.text_width_px("Hello", kSizePx);
  const attnviz::LineMetrics line = fonts.line_metrics(kSizePx);
  CHECK(width_px > 2 * kSizePx);
  CHECK(width_px < 4 * kSizePx);
  CHECK(line.ascent_px > kSizePx / 2);
  CHECK(line.line_height_px >= kSizePx);
  Image image(100, 40, kWhite);
  fonts.draw(image, "Hello", 10, 5, kSizePx, kBlack);
  const attnviz::Rect ink = ink_box(image);
  CHECK(ink.x_px >= 10);
  CHECK(ink.right_px() <= 10 + width_px + 1);
  CHECK(ink.y_px >= 5);
  CHECK(ink.bottom_px() <= 5 + line.line_height_px);
  CHECK(ink.width_px > ink.height_px);
}

TEST_CASE("font: vertical text reads bottom to top inside its line box", "[render]") {
  const FontSet fonts;
  const int width_px = fonts.text_width_px("Hello", kSizePx);
  const attnviz::LineMetrics line = fonts.line_metrics(kSizePx);
  Image image(40, 100, kWhite);
  fonts.draw_vertical(image, "Hello", 5, 90, kSizePx, kBlack);
  const attnviz::Rect ink = ink_box(image);
  CHECK(ink.x_px >= 5);
  CHECK(ink.right_px() <= 5 + line.line_height_px);
  CHECK(ink.bottom_px() <= 90);
  CHECK(ink.y_px >= 90 - width_px - 1);
  CHECK(ink.height_px > ink.width_px);
  // "H" comes first, so the bottom rows hold the H's two stems: ink in the lowest ink row spans
  // the cap height, i.e. more than half the ink box's width.
  int lowest_row_ink = 0;
  for (int x = 0; x < image.width_px(); ++x) lowest_row_ink += image.at(x, ink.bottom_px() - 1) != kWhite;
  CHECK(lowest_row_ink > ink.width_px / 2);
}

TEST_CASE("font: a missing glyph is drawn as U+FFFD, never as nothing", "[render]") {
  const FontSet fonts({ATTNVIZ_DEFAULT_FONT}, nullptr);
  CHECK(fonts.text_width_px("\xE7\x8C\xAB", kSizePx) == fonts.text_width_px("\xEF\xBF\xBD", kSizePx));
  Image image(40, 30, kWhite);
  fonts.draw(image, "\xE7\x8C\xAB", 2, 2, kSizePx, kBlack);
  CHECK(ink_box(image).width_px > 0);
}

TEST_CASE("font: glyphs are cached, drawing twice gives identical pixels", "[render]") {
  const FontSet fonts;
  Image first(80, 30, kWhite), second(80, 30, kWhite);
  fonts.draw(first, "caf\xC3\xA9", 3, 3, kSizePx, kBlack);
  fonts.draw(second, "caf\xC3\xA9", 3, 3, kSizePx, kBlack);
  CHECK(first == second);
}

TEST_CASE("font: shaped lines are cached per size, and stay right after the cache is emptied (issue 11)",
          "[render]") {
  const FontSet fresh(std::vector<std::string>{attnviz::default_font_path()}, nullptr);
  const FontSet busy(std::vector<std::string>{attnviz::default_font_path()}, nullptr);
  const std::vector<attnviz::ShapedGlyph> first = busy.shape("attention", kSizePx);
  const int small = busy.text_width_px("attention", kSizePx);
  const int large = busy.text_width_px("attention", 2 * kSizePx);
  CHECK(large >= 2 * small - 2);  // not the 16 px line served for 32 px
  CHECK(large <= 2 * small + 2);
  // More distinct lines than the cache keeps (65 536), so it is emptied on the way.
  for (int i = 0; i < 70000; ++i) (void)busy.text_width_px(std::to_string(i), kSizePx);
  const std::vector<attnviz::ShapedGlyph> again = busy.shape("attention", kSizePx);
  const std::vector<attnviz::ShapedGlyph> expected = fresh.shape("attention", kSizePx);
  REQUIRE(again.size() == expected.size());
  REQUIRE(first.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(again[i].glyph == expected[i].glyph);
    CHECK(again[i].pen_x_px == expected[i].pen_x_px);
    CHECK(first[i].pen_x_px == expected[i].pen_x_px);
  }
  CHECK(busy.text_width_px("attention", kSizePx) == fresh.text_width_px("attention", kSizePx));
}

TEST_CASE("utf8: decoding is exact for valid text and defensive for bad bytes", "[render]") {
  CHECK(attnviz::decode_utf8("\xE2\x96\x81\xE6\x88\x91") == std::u32string{0x2581, 0x6211});
  CHECK(attnviz::decode_utf8("a\xFF" "b") == std::u32string{U'a', 0xFFFD, U'b'});
  CHECK(attnviz::decode_utf8("\xC0\xAF") == std::u32string{0xFFFD, 0xFFFD});  // overlong '/'
  CHECK(attnviz::decode_utf8("\xE6\x88") == std::u32string{0xFFFD, 0xFFFD});  // truncated
  CHECK(attnviz::encode_utf8(attnviz::decode_utf8("\xC4\xA0" "cat")) == "\xC4\xA0" "cat");
  CHECK(attnviz::code_point_name(0x732B) == "U+732B");
  CHECK(attnviz::code_point_name(0xE9) == "U+00E9");
}

TEST_CASE("font: one FontSet draws on several threads at once as it does on one (issue 7)",
          "[render]") {
  const FontSet fonts;  // fresh: the threads fill its glyph cache concurrently
  const std::vector<std::string> texts = {"attention · head 3 of 8", "▁the Ġcat", "é ü ß ½ 123",
                                          "queries", "keys: source"};
  const auto draw_all = [&](int size_px) {
    Image image(400, 40 * static_cast<int>(texts.size()), kWhite);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      fonts.draw(image, texts[i], 2, 40 * static_cast<int>(i), size_px, kBlack);
    }
    return image;
  };
  constexpr int kThreads = 4;
  std::vector<Image> parallel(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { parallel[static_cast<std::size_t>(t)] = draw_all(kSizePx + t % 2); });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    CHECK(parallel[static_cast<std::size_t>(t)] == draw_all(kSizePx + t % 2));
  }
}

namespace {

// Glyph indices of `utf8` as drawn, left to right.
std::vector<int> glyph_ids(const FontSet& fonts, const std::string& utf8) {
  std::vector<int> ids;
  for (const attnviz::ShapedGlyph& g : fonts.shape(utf8, kSizePx)) ids.push_back(g.glyph);
  return ids;
}

// The image of `utf8` drawn at (0, 0), as wide as its advance.
Image drawn(const FontSet& fonts, const std::string& utf8) {
  Image image(fonts.text_width_px(utf8, kSizePx) + 4, 2 * kSizePx, kWhite);
  fonts.draw(image, utf8, 0, 0, kSizePx, kBlack);
  return image;
}

// Pixels of `part` in columns [from, to) equal those of `image` in [x0 + from, x0 + to): the
// part drawn alone at x0. (Columns at a glyph's edge may hold a neighbour's anti-aliasing.)
bool same_columns(const Image& image, int x0, const Image& part, int from, int to) {
  for (int y = 0; y < part.height_px(); ++y) {
    for (int x = from; x < to; ++x) {
      if (!(image.at(x0 + x, y) == part.at(x, y))) return false;
    }
  }
  return true;
}

}  // namespace

// Issue 15: a Hebrew token "שלום" was drawn mirrored ("םולש"): code points left to right.
TEST_CASE("font: right-to-left text is drawn in its visual order, first letter rightmost", "[render]") {
  const FontSet fonts({ATTNVIZ_DEFAULT_FONT}, nullptr);
  const std::string shalom = "\xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D";  // ש ל ו ם
  const std::string shin = "\xD7\xA9", final_mem = "\xD7\x9D";
  const std::vector<int> ids = glyph_ids(fonts, shalom);
  REQUIRE(ids.size() == 4);
  CHECK(ids.front() == glyph_ids(fonts, final_mem).front());  // the last letter on the left
  CHECK(ids.back() == glyph_ids(fonts, shin).front());        // the first letter on the right
  // The ink says the same: the word's left columns are ם's, its right columns ש's.
  const Image word = drawn(fonts, shalom);
  const int word_w = fonts.text_width_px(shalom, kSizePx);
  const int mem_w = fonts.text_width_px(final_mem, kSizePx);
  const int shin_w = fonts.text_width_px(shin, kSizePx);
  CHECK(same_columns(word, 0, drawn(fonts, final_mem), 0, mem_w - 1));
  CHECK(same_columns(word, word_w - shin_w, drawn(fonts, shin), 2, shin_w - 1));
  CHECK_FALSE(same_columns(word, 0, drawn(fonts, shin), 0, shin_w - 1));
}

// Issue 15: an Arabic word was drawn as unjoined letters from left to right.
TEST_CASE("font: Arabic is shaped into joined forms, right to left", "[render]") {
  const FontSet fonts({ATTNVIZ_DEFAULT_FONT}, nullptr);
  const std::string bayt = "\xD8\xA8\xD9\x8A\xD8\xAA";  // ب ي ت: three joining letters
  const std::vector<int> ids = glyph_ids(fonts, bayt);
  REQUIRE(ids.size() == 3);
  const int ba = glyph_ids(fonts, "\xD8\xA8").front();  // each letter alone: isolated forms
  const int ya = glyph_ids(fonts, "\xD9\x8A").front();
  const int ta = glyph_ids(fonts, "\xD8\xAA").front();
  // Right to left: ba (initial form) on the right, ya (medial) in the middle, ta (final) on the
  // left; none is its isolated form.
  CHECK(ids[2] != ba);
  CHECK(ids[1] != ya);
  CHECK(ids[0] != ta);
  CHECK(glyph_ids(fonts, "\xD8\xAA\xD9\x8A\xD8\xA8").size() == 3);
  CHECK(fonts.missing_code_points(bayt).empty());
  // The same letters with no neighbour to join keep their isolated forms, in visual order.
  CHECK(glyph_ids(fonts, "\xD8\xA8 \xD8\xAA") == std::vector<int>{ta, glyph_ids(fonts, " ").front(), ba});
}

// Issue 15: direction marks and overrides are honoured and never drawn.
TEST_CASE("font: explicit direction marks steer the order and draw nothing", "[render]") {
  const FontSet fonts({ATTNVIZ_DEFAULT_FONT}, nullptr);
  CHECK(glyph_ids(fonts, "a\xE2\x80\x8F" "b") == glyph_ids(fonts, "ab"));  // RLM between Latin letters
  CHECK(fonts.text_width_px("a\xE2\x80\x8E" "b", kSizePx) == fonts.text_width_px("ab", kSizePx));  // LRM
  CHECK(fonts.missing_code_points("a\xE2\x80\x8F\xE2\x80\xAE" "b\xE2\x80\xAC\xE2\x81\xA7" "c\xE2\x81\xA9").empty());
  // RLO "abc" PDF: drawn "cba".
  CHECK(glyph_ids(fonts, "\xE2\x80\xAE" "abc\xE2\x80\xAC") == glyph_ids(fonts, "cba"));
  // LRI around a Latin word inside Hebrew keeps it left to right, placed as one unit.
  const std::vector<int> mixed = glyph_ids(fonts, "\xD7\xA9 \xE2\x81\xA6" "ab\xE2\x81\xA9");
  const std::vector<int> ab = glyph_ids(fonts, "ab");
  REQUIRE(mixed.size() == 4);
  CHECK(std::vector<int>(mixed.begin(), mixed.begin() + 2) == ab);  // "ab" on the left, in order
  CHECK(mixed.back() == glyph_ids(fonts, "\xD7\xA9").front());       // ש on the right
}

// Issue 15: 👍🏽 (emoji + skin-tone modifier) was two replacement glyphs; a cluster no font has
// is one, and "e" + U+0301 is one letter with its accent placed on it.
TEST_CASE("font: a user-perceived character is drawn, or replaced, as one", "[render]") {
  const FontSet fonts({ATTNVIZ_DEFAULT_FONT}, nullptr);
  const std::string thumbs = "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";
  if (!fonts.has_glyph(0x1F44D)) {
    CHECK(glyph_ids(fonts, thumbs) == glyph_ids(fonts, "\xEF\xBF\xBD"));  // one U+FFFD
    CHECK(fonts.missing_code_points(thumbs) == std::vector<char32_t>{0x1F44D, 0x1F3FD});
  }
  const std::vector<attnviz::ShapedGlyph> accent = fonts.shape("e\xCC\x81", kSizePx);
  const int e_width = fonts.text_width_px("e", kSizePx);
  if (accent.size() == 2) {  // e + a positioned mark: the mark sits over the e, not after it
    CHECK(accent[1].pen_x_px < e_width);
    CHECK(fonts.text_width_px("e\xCC\x81", kSizePx) == e_width);
  } else {  // composed into the precomposed é glyph
    REQUIRE(accent.size() == 1);
    CHECK(accent[0].glyph == glyph_ids(fonts, "\xC3\xA9").front());
  }
}

// Issue 15: giving --font replaced DejaVu, and a character no listed font had was never looked
// for among the installed fonts. 𝐀 (U+1D400) is not in DejaVu Sans but in DejaVu Serif Bold
// (fonts-dejavu-core, beside the default font). The fallback fonts are pinned to named files, so
// that what is found does not depend on what else the machine has installed (issue 24).
TEST_CASE("font: fallback fonts fontconfig finds draw what the listed fonts lack", "[render]") {
  const std::string bold_a = "\xF0\x9D\x90\x80";
  const std::string serif_bold = dejavu("DejaVuSerif-Bold.ttf");
  const FontSet listed_only({ATTNVIZ_DEFAULT_FONT}, nullptr);
  CHECK(listed_only.fallback() == nullptr);
  CHECK_FALSE(listed_only.has_glyph(0x1D400));
  CHECK(listed_only.missing_code_points(bold_a) == std::vector<char32_t>{0x1D400});
  const FontSet with_fallback({ATTNVIZ_DEFAULT_FONT},
                              attnviz::FallbackFonts::only({dejavu("DejaVuSansMono.ttf"), serif_bold}));
  CHECK(with_fallback.has_glyph(0x1D400));
  CHECK(with_fallback.missing_code_points(bold_a).empty());
  CHECK(with_fallback.missing_code_points("\xE6\x88\x91") == std::vector<char32_t>{0x6211});  // no CJK font among them
  const std::vector<attnviz::ShapedGlyph> glyphs = with_fallback.shape("x" + bold_a, kSizePx);
  REQUIRE(glyphs.size() == 2);
  CHECK(glyphs[0].font == 0);
  CHECK(glyphs[1].font == 1);  // the fallback, after the listed font
  CHECK(with_fallback.paths() == std::vector<std::string>{ATTNVIZ_DEFAULT_FONT});
  // --font F keeps the default font after F, so what drew before still draws.
  CHECK(attnviz::label_font_paths({"/fonts/F.ttf"}) ==
        std::vector<std::string>{"/fonts/F.ttf", attnviz::default_font_path()});
  CHECK(attnviz::label_font_paths({attnviz::default_font_path()}) ==
        std::vector<std::string>{attnviz::default_font_path()});
  CHECK(attnviz::label_font_paths({}) == std::vector<std::string>{attnviz::default_font_path()});
}

TEST_CASE("font: the default fallback is every installed font, a pinned one only the files named", "[render][errors]") {
  CHECK(FontSet().fallback() == attnviz::FallbackFonts::installed().get());
  CHECK(attnviz::FallbackFonts::installed()->description() == "any installed font");
  const auto pinned = attnviz::FallbackFonts::only({dejavu("DejaVuSansMono.ttf"), dejavu("DejaVuSerif-Bold.ttf")});
  CHECK(pinned->description() ==
        "the fallback fonts " + dejavu("DejaVuSansMono.ttf") + ", " + dejavu("DejaVuSerif-Bold.ttf"));
  CHECK(pinned->fonts_for(0x1D400) == std::vector<std::string>{dejavu("DejaVuSerif-Bold.ttf")});
  CHECK(pinned->fonts_for(0x6211).empty());
  CHECK(pinned->fonts_for('A').size() == 2);
  CHECK(attnviz::FallbackFonts::only({})->fonts_for('A').empty());
  CHECK_THROWS_WITH(attnviz::FallbackFonts::only({"/nonexistent/font.ttf"}),
                    Catch::Contains("/nonexistent/font.ttf") && Catch::Contains("fontconfig cannot read it as a font"));
}
