#include "render/wrap_text.hpp"

#include <algorithm>

namespace attnviz {

std::vector<std::string> wrap_text(const FontSet& fonts, const std::string& text, int font_px, int width_px) {
  if (text.empty() || fonts.text_width_px(text, font_px) <= width_px) return {text};
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t space = std::min(text.find(' ', start), text.size());
    const std::string word = text.substr(start, space - start);
    const std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && fonts.text_width_px(longer, font_px) > width_px) {
      lines.push_back(line);
      line = word;
    } else {
      line = longer;
    }
    start = space + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace attnviz
