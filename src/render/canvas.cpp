#include "render/canvas.hpp"

#include "render/svg_document.hpp"

namespace attnviz {

void SvgCanvas::rect(const Rect& r, Rgb colour) {
  if (r.width_px <= 0 || r.height_px <= 0) return;
  body_ += "<rect x=\"" + std::to_string(r.x_px) + "\" y=\"" + std::to_string(r.y_px) + "\" width=\"" +
           std::to_string(r.width_px) + "\" height=\"" + std::to_string(r.height_px) + "\" fill=\"" + svg_colour(colour) +
           "\"/>\n";
}

void SvgCanvas::text(std::string_view utf8, int left_px, int top_px, int size_px, Rgb colour) {
  const int baseline = top_px + fonts_.line_metrics(size_px).ascent_px;
  body_ += "<text x=\"" + std::to_string(left_px) + "\" y=\"" + std::to_string(baseline) + "\" font-size=\"" +
           std::to_string(size_px) + "\" fill=\"" + svg_colour(colour) + "\">" + xml_text(utf8) + "</text>\n";
}

}  // namespace attnviz
