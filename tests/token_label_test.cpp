// What a token looks like on a picture (render/token_label): placeholders for invisible tokens.
#include "render/token_label.hpp"

#include "core/utf8.hpp"
#include "render/font.hpp"
#include "render/graphemes.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

TEST_CASE("token_label: control characters are drawn in caret notation, blank tokens visibly", "[render]") {
  // Attack finding: "x\x1by" was drawn as "x�y" because DejaVu Sans has no Control Pictures.
  CHECK(display_label("x\x1by") == "x^[y");
  CHECK(display_label(std::string("a\x7f", 2)) == "a^?");
  CHECK(display_label("\xe2\x80\x8b") == "\xe2\x90\xa3");  // U+200B alone -> ␣
  CHECK(display_label("") == "(empty)");
  CHECK(FontSet().missing_code_points(display_label("x\x1by")).empty());
}

// Issue 15: the 24-character limit counted code points, so 13 × (e + U+0301) was cut after 11
// "é" and a bare "e". It counts user-perceived characters (grapheme clusters) now.
TEST_CASE("token_label: the length limit counts and cuts whole user-perceived characters", "[render]") {
  std::string e_acute;  // "e" + U+0301 COMBINING ACUTE ACCENT
  for (int i = 0; i < 13; ++i) e_acute += "e\xCC\x81";
  CHECK(display_label(e_acute) == e_acute);  // 13 characters: within 24, drawn whole
  std::string long_accents;
  for (int i = 0; i < 30; ++i) long_accents += "e\xCC\x81";
  std::string expected;
  for (int i = 0; i < 23; ++i) expected += "e\xCC\x81";
  CHECK(display_label(long_accents) == expected + "\xE2\x80\xA6");  // 23 whole "é", then "…"
  const std::string thumbs = "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD";  // 👍🏽: emoji + skin-tone modifier
  std::string thumbs_30, thumbs_23;
  for (int i = 0; i < 30; ++i) thumbs_30 += thumbs;
  for (int i = 0; i < 23; ++i) thumbs_23 += thumbs;
  CHECK(display_label(thumbs_30) == thumbs_23 + "\xE2\x80\xA6");
  CHECK(grapheme_starts(decode_utf8(thumbs + "a")) == std::vector<std::size_t>{0, 2});
}
