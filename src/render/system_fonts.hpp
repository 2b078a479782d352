// Installed fonts for a character the chosen fonts lack, found through fontconfig (the way
// desktop applications fall back): so CJK labels draw, with no flag, when a CJK font such as
// fonts-noto-cjk is installed. Does not load or check the files (font.cpp does).
#pragma once

#include <string>
#include <vector>

namespace attnviz {

/// Scalable font files that fontconfig says cover `code_point`, best match first; only files
/// whose first face (index 0) covers it (attnviz reads the first face of a collection). Empty
/// when none is installed or fontconfig cannot be initialised. Thread-safe.
std::vector<std::string> system_fonts_for(char32_t code_point);

}  // namespace attnviz
