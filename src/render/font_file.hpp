// Reading a font file safely: stb_truetype trusts every offset in the file, so a truncated or
// corrupt font would make it read past the end of the buffer. This unit reads the file (regular
// files only, bounded size) and checks the table directory, the tables stb_truetype needs and
// every glyph's location against the file's size first. Does not rasterise anything.
#pragma once

#include <string>
#include <vector>

namespace attnviz {

/// Largest font file read (the largest common CJK collections are ~40 MB).
inline constexpr std::size_t kMaxFontFileBytes = 256u * 1024u * 1024u;

/// The bytes of the font at `path`. Throws InputError::unreadable naming `path` when it is
/// not a regular file, is larger than kMaxFontFileBytes, cannot be read, or fails
/// check_font_bytes.
std::vector<unsigned char> read_font_file(const std::string& path);

/// Checks that the first font of `bytes` (a TrueType/OpenType file or a collection) has a
/// table directory inside the file, the tables cmap, head, hhea, hmtx and maxp, every table
/// inside the file, and, for glyf outlines, every loca entry inside glyf.
/// Throws InputError::unreadable(path, "…") describing the first problem found.
void check_font_bytes(const std::vector<unsigned char>& bytes, const std::string& path);

}  // namespace attnviz
