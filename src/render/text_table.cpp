#include "render/text_table.hpp"

#include <algorithm>

#include "render/wrap_text.hpp"

namespace attnviz {

namespace {

constexpr int kMaxFontPx = 13;
constexpr int kMinFontPx = 8;
constexpr int kMarginPx = 16;
constexpr int kColumnGapPx = 14;  // between the columns
constexpr int kRuleGapPx = 3;     // around the rule under the header
constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kTextColour{34, 34, 34};
constexpr Rgb kNoteColour{80, 80, 80};
constexpr Rgb kRuleColour{160, 160, 160};

// Widest cell of each column at `font_px`.
std::vector<int> column_widths(const TextTable& table, const FontSet& fonts, int font_px) {
  std::vector<int> widths(table.header.size(), 0);
  const auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], fonts.text_width_px(row[c], font_px));
    }
  };
  measure(table.header);
  for (const std::vector<std::string>& row : table.rows) measure(row);
  return widths;
}

int table_width(const std::vector<int>& widths) {
  int width = 0;
  for (const int w : widths) width += w;
  return width + kColumnGapPx * static_cast<int>(widths.empty() ? 0 : widths.size() - 1);
}

void draw_row(Image& image, const FontSet& fonts, const std::vector<std::string>& row, const std::vector<int>& widths,
              int y, int font_px) {
  int x = kMarginPx;
  for (std::size_t c = 0; c < widths.size(); ++c) {
    const std::string& text = c < row.size() ? row[c] : std::string();
    const int left = c == 0 ? x : x + widths[c] - fonts.text_width_px(text, font_px);
    fonts.draw(image, text, left, y, font_px, kTextColour);
    x += widths[c] + kColumnGapPx;
  }
}

}  // namespace

Image render_text_table(const TextTable& table, const FontSet& fonts, int max_width_px) {
  int font_px = kMaxFontPx;
  std::vector<int> widths = column_widths(table, fonts, font_px);
  while (font_px > kMinFontPx && table_width(widths) + 2 * kMarginPx > max_width_px) {
    widths = column_widths(table, fonts, --font_px);
  }
  const int line_px = fonts.line_metrics(font_px).line_height_px;
  const int body_w = std::max(table_width(widths), fonts.text_width_px(table.title, font_px));
  const int text_w = std::max(body_w, max_width_px - 2 * kMarginPx);
  const std::vector<std::string> note =
      table.note.empty() ? std::vector<std::string>{} : wrap_text(fonts, table.note, font_px, std::min(text_w, body_w));
  int note_w = 0;
  for (const std::string& line : note) note_w = std::max(note_w, fonts.text_width_px(line, font_px));
  const int title_lines = table.title.empty() ? 0 : 1;
  const int lines = title_lines + 1 + static_cast<int>(table.rows.size()) + static_cast<int>(note.size());
  Image image(2 * kMarginPx + std::max(body_w, note_w), 2 * kMarginPx + lines * line_px + 2 * kRuleGapPx + 1,
              kBackground);
  int y = kMarginPx;
  if (!table.title.empty()) {
    fonts.draw(image, table.title, kMarginPx, y, font_px, kTextColour);
    y += line_px;
  }
  draw_row(image, fonts, table.header, widths, y, font_px);
  y += line_px + kRuleGapPx;
  image.fill_rect({kMarginPx, y, table_width(widths), 1}, kRuleColour);
  y += 1 + kRuleGapPx;
  for (const std::vector<std::string>& row : table.rows) {
    draw_row(image, fonts, row, widths, y, font_px);
    y += line_px;
  }
  for (const std::string& line : note) {
    fonts.draw(image, line, kMarginPx, y, font_px, kNoteColour);
    y += line_px;
  }
  return image;
}

}  // namespace attnviz
