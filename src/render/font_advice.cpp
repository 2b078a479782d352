#include "render/font_advice.hpp"

#include <hb.h>
#include <utf8proc.h>

namespace attnviz {

namespace {

bool is_emoji(char32_t code_point) {
  const utf8proc_property_t* p = utf8proc_get_property(static_cast<utf8proc_int32_t>(code_point));
  return p->boundclass == UTF8PROC_BOUNDCLASS_EXTENDED_PICTOGRAPHIC ||
         p->boundclass == UTF8PROC_BOUNDCLASS_E_ZWG || p->boundclass == UTF8PROC_BOUNDCLASS_REGIONAL_INDICATOR;
}

bool is_symbol(char32_t code_point) {
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(code_point));
  return category == UTF8PROC_CATEGORY_SO || category == UTF8PROC_CATEGORY_SM;
}

// The package of missing_font_advice.
std::string font_package(char32_t code_point) {
  if (is_emoji(code_point)) return "fonts-symbola for emoji";
  const hb_script_t script = hb_unicode_script(hb_unicode_funcs_get_default(), code_point);
  switch (script) {
    case HB_SCRIPT_HAN:
    case HB_SCRIPT_HIRAGANA:
    case HB_SCRIPT_KATAKANA:
    case HB_SCRIPT_HANGUL:
    case HB_SCRIPT_BOPOMOFO:
      return "fonts-noto-cjk for CJK";
    case HB_SCRIPT_COMMON:
    case HB_SCRIPT_INHERITED:
    case HB_SCRIPT_UNKNOWN:
      return is_symbol(code_point) ? "fonts-symbola for symbols" : "fonts-noto-core";
    default:
      break;
  }
  char tag[5] = {};
  hb_tag_to_string(hb_script_to_iso15924_tag(script), tag);
  return "fonts-noto-core for the " + std::string(tag) + " script";
}

}  // namespace

std::string missing_font_advice(char32_t code_point) {
  // Emoji are tested first: most are script Common. Noto Color Emoji, the usual emoji font, has
  // colour bitmaps only, which stb_truetype cannot draw (font.cpp refuses it); Symbola has outlines.
  return "install a font that has it, e.g. " + font_package(code_point) + ", or add one with --font" +
         (is_emoji(code_point) ? "; colour emoji fonts such as fonts-noto-color-emoji cannot be drawn" : "");
}

}  // namespace attnviz
