// SVG 1.1 text for the vector pictures: escaping of text content, colours, and the document
// that stacks one or more pictures vertically (as stack_vertically() does for rasters). Knows
// nothing about heatmaps (see svg_grid.hpp). Output is deterministic: integers only, fixed order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "render/image.hpp"

namespace attnviz {

/// A picture as SVG elements: `body` is drawn in the box [0, width_px) × [0, height_px);
/// `defs` holds the patterns it refers to (ids unique within the document).
struct SvgPicture {
  int width_px = 0, height_px = 0;
  std::string defs;
  std::string body;
};

/// `text` as XML character data / attribute value: & < > " escaped, invalid UTF-8 and the
/// control characters XML 1.0 forbids replaced by U+FFFD, so any token gives valid XML.
std::string xml_text(std::string_view text);

/// "#rrggbb".
std::string svg_colour(Rgb colour);

/// A whole SVG file: the pictures one above the other, each centred horizontally (the widest
/// sets the width) on a white background, sizes in px (1 user unit = 1 PNG pixel).
/// Requires: at least one picture.
std::string svg_document(const std::vector<SvgPicture>& pictures);

}  // namespace attnviz
