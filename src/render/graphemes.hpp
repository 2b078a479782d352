// User-perceived characters (extended grapheme clusters, Unicode UAX #29) via utf8proc: "e" +
// U+0301 is one character, 👍🏽 (emoji + skin-tone modifier) is one. Used to count and cut labels
// and to draw a cluster no font has as one replacement glyph. Also which code points are
// default-ignorable (never drawn, never missing).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace attnviz {

/// Start index of every grapheme cluster of `text`, in order (empty for empty text); cluster k
/// is [starts[k], starts[k + 1]) with text.size() as the last end.
std::vector<std::size_t> grapheme_starts(const std::u32string& text);

/// True for Unicode Default_Ignorable_Code_Point characters (ZWJ, ZWNJ, variation selectors,
/// directional marks, soft hyphen, …): a font need not have them and they draw nothing.
bool is_default_ignorable(char32_t code_point);

}  // namespace attnviz
