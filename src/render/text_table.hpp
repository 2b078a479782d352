// A table of text drawn as an image: a title line, a header row, body rows and a note, in
// columns (the first left-aligned, the others right-aligned, as numbers are). Used by `compare`
// to put its statistics table in the figure. Does not compute or format the numbers.
#pragma once

#include <string>
#include <vector>

#include "render/font.hpp"
#include "render/image.hpp"

namespace attnviz {

/// What to draw. Every row has the header's number of cells (missing cells are empty).
struct TextTable {
  std::string title;                           // above the table; empty: none
  std::vector<std::string> header;             // column names
  std::vector<std::vector<std::string>> rows;  // body rows
  std::string note;                            // below the table, wrapped; empty: none
};

/// The table on a white image with a margin, no wider than `max_width_px` when the largest font
/// size from 13 px down to 8 px fits (the note wraps at spaces); at 8 px it is drawn at its own
/// width. Same table and fonts -> identical pixels.
Image render_text_table(const TextTable& table, const FontSet& fonts, int max_width_px);

}  // namespace attnviz
