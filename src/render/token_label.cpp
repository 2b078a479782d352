#include "render/token_label.hpp"

#include <algorithm>

#include "core/utf8.hpp"
#include "render/graphemes.hpp"

namespace attnviz {

namespace {

constexpr char32_t kVisibleSpace = U'\u2423';   // ␣ OPEN BOX
constexpr char32_t kVisibleTab = U'\u21E5';     // ⇥ RIGHTWARDS ARROW TO BAR
constexpr char32_t kVisibleNewline = U'\u21B5';  // ↵ DOWNWARDS ARROW WITH CORNER LEFTWARDS
constexpr char32_t kEllipsis = U'\u2026';
const char* const kEmptyPlaceholder = "(empty)";

// Unicode White_Space characters (PropList.txt).
bool is_whitespace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

// Characters that draw nothing: zero-width and format characters (Unicode Cf, the common ones).
bool is_zero_width(char32_t cp) {
  return cp == 0xAD || cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2060 && cp <= 0x2064) ||
         cp == 0xFEFF;
}

// C0 and C1 control characters: drawn in caret notation (ESC -> "^[", DEL -> "^?"), which every
// font can draw; DejaVu Sans has no Control Pictures (U+2400…) but ␢ and ␣.
bool is_control(char32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }
constexpr char32_t kCaretToggle = 0x40;

char32_t visible_whitespace(char32_t cp) {
  if (cp == U'\t') return kVisibleTab;
  if (cp == U'\n' || cp == U'\r') return kVisibleNewline;
  return kVisibleSpace;
}

std::u32string visible_control(char32_t cp) {
  if (cp < 0x20 || cp == 0x7F) return {U'^', cp ^ kCaretToggle};
  return U"\uFFFD";  // C1 controls have no caret form
}

}  // namespace

std::string display_label(const std::string& token) {
  if (token.empty()) return kEmptyPlaceholder;
  std::u32string text = decode_utf8(token);
  const bool blank = std::all_of(text.begin(), text.end(),
                                 [](char32_t cp) { return is_whitespace(cp) || is_zero_width(cp); });
  std::u32string shown;
  for (const char32_t cp : text) {
    if (blank || cp == U'\t' || cp == U'\n' || cp == U'\r') {
      shown.push_back(visible_whitespace(cp));
    } else if (is_control(cp)) {
      shown += visible_control(cp);
    } else {
      shown.push_back(cp);
    }
  }
  text = std::move(shown);
  const std::vector<std::size_t> characters = grapheme_starts(text);
  if (characters.size() > kMaxLabelCharacters) {
    text.resize(characters[kMaxLabelCharacters - 1]);
    text.push_back(kEllipsis);
  }
  return encode_utf8(text);
}

int label_stride(int pitch_px, int line_height_px) {
  static constexpr int kSmallStrides[] = {1, 2, 3, 4, 5};
  static constexpr int kRoundMultiples[] = {10, 20, 25, 50};
  static constexpr int kDecade = 10;
  for (int k : kSmallStrides) {
    if (k * pitch_px >= line_height_px) return k;
  }
  for (int scale = 1;; scale *= kDecade) {
    for (int multiple : kRoundMultiples) {
      if (multiple * scale * pitch_px >= line_height_px) return multiple * scale;
    }
  }
}

std::string indexed_label(int index, const std::string& label) {
  return "#" + std::to_string(index) + " " + label;
}

std::string ordinal(int n) {
  static constexpr int kTeenFirst = 11, kTeenLast = 13, kHundred = 100, kTen = 10;
  const int last_two = n % kHundred;
  const char* suffix = "th";
  if (last_two < kTeenFirst || last_two > kTeenLast) {
    switch (n % kTen) {
      case 1: suffix = "st"; break;
      case 2: suffix = "nd"; break;
      case 3: suffix = "rd"; break;
      default: break;
    }
  }
  return std::to_string(n) + suffix;
}

}  // namespace attnviz
