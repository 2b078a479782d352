// What a token looks like on a picture (render/token_label): placeholders for invisible tokens.
#include "render/token_label.hpp"

#include "render/font.hpp"
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
