// The fonts every picture of a run draws its text with.
#pragma once

#include "render/font.hpp"
#include "render/picture_settings.hpp"

namespace attnviz {

/// The label fonts of a run: options.fonts (--font, in order) then DejaVu Sans
/// (label_font_paths), with missing characters looked for in options.fallback_fonts (unset: the
/// installed fonts through fontconfig). One rule for every picture of a run, so that the PNG, SVG
/// and HTML of one command draw the same glyphs. Throws InputError::unreadable as FontSet does.
FontSet picture_fonts(const PictureSettings& options);

}  // namespace attnviz
