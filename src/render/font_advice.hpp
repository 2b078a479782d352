// Which font package to suggest for a character that no font could draw: chosen by the
// character's Unicode script (HarfBuzz) and, for emoji, its Extended_Pictographic class
// (utf8proc, as UAX #29 uses it). Words only; installs and looks up nothing.
#pragma once

#include <string>

namespace attnviz {

/// What to do about `code_point`: "install a font that has it, e.g. PACKAGE, or add one with
/// --font", PACKAGE a Debian package with a font attnviz can draw (outlines, not colour bitmaps):
///   CJK (Han, Hiragana, Katakana, Hangul, Bopomofo) -> "fonts-noto-cjk for CJK"
///   emoji (Extended_Pictographic, regional indicators) -> "fonts-symbola for emoji", and the
///                                                         advice adds that colour emoji fonts
///                                                         (fonts-noto-color-emoji) cannot be drawn
///   other symbols (general category So or Sm)         -> "fonts-symbola for symbols"
///   any other script                                   -> "fonts-noto-core for the Deva script"
///                                                         (its ISO 15924 code)
///   anything else                                      -> "fonts-noto-core"
std::string missing_font_advice(char32_t code_point);

}  // namespace attnviz
