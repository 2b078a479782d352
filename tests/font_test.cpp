// TrueType text: loading, fallbacks, missing-glyph reporting, measuring and drawing (BH-20).
#include <catch2/catch.hpp>

#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "render/font.hpp"
#include "render/utf8.hpp"

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

}  // namespace

TEST_CASE("font: a missing or invalid font file is an InputError naming the path", "[render][errors]") {
  CHECK_THROWS_AS(FontSet({"/nonexistent/font.ttf"}), attnviz::InputError);
  CHECK_THROWS_WITH(FontSet({"/nonexistent/font.ttf"}), Catch::Contains("/nonexistent/font.ttf"));
  CHECK_THROWS_WITH(FontSet({ATTNVIZ_DATA_DIR "/README.md"}),
                    Catch::Contains("README.md") && Catch::Contains("not a TrueType"));
}

TEST_CASE("font: DejaVu Sans has the subword markers and accents but not CJK (BH-20)", "[render]") {
  const FontSet fonts;
  CHECK(fonts.paths() == std::vector<std::string>{ATTNVIZ_DEFAULT_FONT});
  CHECK(fonts.missing_code_points("\xE2\x96\x81" "cat \xC4\xA0" "dog \xC3\xA9").empty());
  CHECK(fonts.missing_code_points("\xE2\x96\x81\xE6\x88\x91\xE7\x8C\xAB\xE6\x88\x91") ==
        std::vector<char32_t>{0x6211, 0x732B});
  CHECK(fonts.has_glyph(0x0627));  // Arabic alef
}

TEST_CASE("font: a later font is a per-glyph fallback", "[render]") {
  // DejaVu Sans Mono lacks Arabic; DejaVu Sans (the fallback) has it.
  const FontSet fonts({"/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf", ATTNVIZ_DEFAULT_FONT});
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
  const FontSet fonts;
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
