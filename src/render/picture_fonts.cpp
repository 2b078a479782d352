#include "render/picture_fonts.hpp"

#include "render/system_fonts.hpp"

namespace attnviz {

FontSet picture_fonts(const PictureSettings& options) {
  return FontSet(label_font_paths(options.fonts),
                 options.fallback_fonts ? FallbackFonts::only(*options.fallback_fonts) : FallbackFonts::installed());
}

}  // namespace attnviz
