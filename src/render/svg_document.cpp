#include "render/svg_document.hpp"

#include <algorithm>
#include <cassert>
#include <cstdio>

#include "core/utf8.hpp"

namespace attnviz {

namespace {

// XML 1.0 §2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF].
bool xml_char(char32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
         (c >= 0x10000 && c <= 0x10FFFF);
}

}  // namespace

std::string xml_text(std::string_view text) {
  std::u32string kept;
  for (char32_t c : decode_utf8(text)) kept.push_back(xml_char(c) ? c : kReplacementCharacter);
  std::string escaped;
  for (char c : encode_utf8(kept)) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

std::string svg_colour(Rgb colour) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", colour.r, colour.g, colour.b);
  return text;
}

std::string svg_document(const std::vector<SvgPicture>& pictures) {
  assert(!pictures.empty());
  int width_px = 0, height_px = 0;
  for (const SvgPicture& picture : pictures) {
    width_px = std::max(width_px, picture.width_px);
    height_px += picture.height_px;
  }
  const std::string w = std::to_string(width_px), h = std::to_string(height_px);
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
                    "version=\"1.1\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h + "\">\n";
  svg += "<defs>\n";
  for (const SvgPicture& picture : pictures) svg += picture.defs;
  svg += "</defs>\n<rect width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";
  int y = 0;
  for (const SvgPicture& picture : pictures) {
    // The same centring as stack_vertically(), so a stacked SVG lines up with its PNG.
    const int x = (width_px - picture.width_px) / 2;
    svg += "<g transform=\"translate(" + std::to_string(x) + "," + std::to_string(y) + ")\">\n" + picture.body + "</g>\n";
    y += picture.height_px;
  }
  return svg + "</svg>\n";
}

}  // namespace attnviz
