// The fonts every picture of a run draws its text with.
#pragma once

#include "cli/options.hpp"
#include "render/font.hpp"

namespace attnviz {

/// The label fonts of a run: options.fonts (--font, in order) then DejaVu Sans
/// (label_font_paths), with missing characters looked for in options.fallback_fonts (unset: the
/// installed fonts through fontconfig). One rule for every picture of a run, so that the PNG, SVG
/// and HTML of one command draw the same glyphs. Throws InputError::unreadable as FontSet does.
FontSet picture_fonts(const Options& options);

}  // namespace attnviz
