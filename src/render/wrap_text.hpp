// Breaking a line of text into lines no wider than a width, at spaces, for titles, legends and
// notes that would otherwise make an image wider than its limit.
#pragma once

#include <string>
#include <vector>

#include "render/font.hpp"

namespace attnviz {

/// `text` broken at spaces into lines of at most `width_px` at `font_px` (greedy; a word wider
/// than that stays whole on its own line). {text} when it fits (also for an empty text).
std::vector<std::string> wrap_text(const FontSet& fonts, const std::string& text, int font_px, int width_px);

}  // namespace attnviz
