// What a token label shows on an axis, and how densely labels can be drawn. Labels keep the
// token's text exactly (subword markers "▁" and "Ġ", accents, quotes are not cleaned up) except
// where it would be invisible or huge; see display_label(). Does not measure or draw text.
#pragma once

#include <string>

namespace attnviz {

/// Longest label drawn, in user-perceived characters (grapheme clusters: "e" + U+0301 is one);
/// longer tokens end in "…" so margins stay bounded.
inline constexpr std::size_t kMaxLabelCharacters = 24;

/// The text drawn for `token`:
///   - empty token -> "(empty)";
///   - whitespace-only token -> one visible symbol per character: space "␣" (U+2423),
///     tab "⇥" (U+21E5), newline or carriage return "↵" (U+21B5), other spaces "␣";
///   - tab, newline and carriage return inside other tokens -> the same symbols;
///   - a token of only zero-width or format characters (U+200B, U+FEFF, …) -> "␣" each;
///   - other control characters -> caret notation ("^[" for ESC, "^?" for DEL), U+FFFD for C1;
///   - more than kMaxLabelCharacters grapheme clusters -> the first kMaxLabelCharacters − 1
///     clusters (never a letter without its accents) and "…".
/// Otherwise the token unchanged, in logical order: FontSet orders (BiDi) and shapes it.
std::string display_label(const std::string& token);

/// Draw every k-th label so that labels `pitch_px` apart (one cell) never overlap lines of
/// `line_height_px`: the smallest k in 1, 2, 3, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500, ...
/// with k · pitch_px >= line_height_px. Requires: pitch_px >= 1.
int label_stride(int pitch_px, int line_height_px);

/// The label of a thinned axis (only every k-th drawn): "#212 ▁park", the token's 0-based
/// position (BOS counted) before its label, so a reader knows where a fragment sits (issue 23).
std::string indexed_label(int index, const std::string& label);

/// "1st", "2nd", "3rd", "4th", "11th", "22nd": for notes like "every 4th key label shown".
std::string ordinal(int n);

}  // namespace attnviz
