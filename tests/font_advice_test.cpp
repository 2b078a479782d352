// The font package suggested for a character no font has fits its script (issue 24: an emoji
// was told to install a CJK font).
#include <catch2/catch.hpp>

#include "render/font_advice.hpp"
#include "render/grid_notes.hpp"

using namespace attnviz;
using Catch::Matchers::EndsWith;

namespace {

// The package part of the advice: "e.g. PACKAGE, or add one".
std::string package(char32_t code_point) {
  const std::string advice = missing_font_advice(code_point);
  const std::size_t start = advice.find("e.g. ") + 5;
  return advice.substr(start, advice.find(", or add one") - start);
}

}  // namespace

TEST_CASE("font_advice: the package fits the character's script", "[render]") {
  CHECK(package(U'\u732B') == "fonts-noto-cjk for CJK");  // 猫, Han
  CHECK(package(U'\u3042') == "fonts-noto-cjk for CJK");  // あ, Hiragana
  CHECK(package(U'\uD55C') == "fonts-noto-cjk for CJK");  // 한, Hangul
  for (const char32_t emoji : {U'\U0001F642', U'\U0001F600', U'\u2764', U'\U0001F1EB'}) {  // 🙂 😀 ❤ 🇫
    INFO("U+" << std::hex << static_cast<unsigned>(emoji));
    CHECK(package(emoji) == "fonts-symbola for emoji");
    CHECK_THAT(missing_font_advice(emoji), EndsWith("; colour emoji fonts such as fonts-noto-color-emoji cannot be drawn"));
  }
  CHECK(package(U'\u2A0C') == "fonts-symbola for symbols");            // ⨌, Sm
  CHECK(package(U'\u0905') == "fonts-noto-core for the Deva script");  // अ
  CHECK(package(U'\u1780') == "fonts-noto-core for the Khmr script");  // ក
  CHECK(package(U'\u0378') == "fonts-noto-core");  // unassigned
  CHECK(missing_font_advice(U'\u732B') == "install a font that has it, e.g. fonts-noto-cjk for CJK, or add one with --font");
}

TEST_CASE("grid_notes: a missing-glyph warning names its code point, others none", "[render]") {
  CHECK(missing_glyph_code("token 1 \"x\": no glyph for U+1F642 in a.ttf; drawn as U+FFFD (…)") == "U+1F642");
  CHECK(missing_glyph_code("every 4th key label shown") == "");
}
