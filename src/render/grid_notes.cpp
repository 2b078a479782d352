#include "render/grid_notes.hpp"

#include <algorithm>

#include "core/counted.hpp"
#include "render/font_advice.hpp"
#include "render/token_label.hpp"
#include "render/utf8.hpp"

namespace attnviz {

namespace {

const char* const kTimes = " \u00D7 ";
const std::string kNoGlyph = ": no glyph for ";  // before the code point in a missing-glyph warning

std::string thinning_note(const GridLayout& layout) {
  const int q = layout.query_label_stride, k = layout.key_label_stride;
  if (q == 1 && k == 1) return "";
  if (q == k) return "every " + ordinal(q) + " query and key label shown";
  std::string note;
  if (q > 1) note = "every " + ordinal(q) + " query label shown";
  if (k > 1) note += (note.empty() ? "every " : ", every ") + ordinal(k) + " key label shown";
  return note;
}

std::string downsampling_note(const GridLayout& layout, ScaleMode scale) {
  if (layout.block == 1) return "";
  const std::string rule = scale == ScaleMode::Symmetric ? "the largest-magnitude value" : "the max";
  return "each pixel shows " + rule + " over " + std::to_string(layout.block) + kTimes +
         std::to_string(layout.block) + " cells (" + std::to_string(layout.n_q) + kTimes +
         std::to_string(layout.n_k) + " cells do not fit in the image)";
}

std::string thumbnail_note(const GridRequest& request, const GridLayout& layout) {
  if (!layout.thumbnail) return "";
  return "the grid of " + counted(static_cast<long long>(request.panels.size()), request.panel_noun) +
         " is drawn as a " + std::to_string(layout.width_px) + kTimes + std::to_string(layout.height_px) +
         " px thumbnail of its cells alone: with its labels, titles and colour bar it needs at least " +
         std::to_string(layout.labelled_width_px) + kTimes + std::to_string(layout.labelled_height_px) +
         " px (raise --max-size to see them)";
}

std::string annotation_note(const GridRequest& request, const GridLayout& layout) {
  if (!request.annotate || layout.annotation_font_px > 0) return "";
  return "values not printed: cells of " + std::to_string(layout.cell_px) + " px are too small" +
         (layout.block > 1 ? " (and aggregated)" : "");
}

std::string font_list(const FontSet& fonts) {
  std::string list;
  for (const std::string& path : fonts.paths()) list += (list.empty() ? "" : ", ") + path;
  return list;
}

}  // namespace

std::vector<std::string> layout_notes(const GridRequest& request, const GridLayout& layout) {
  std::vector<std::string> notes{thumbnail_note(request, layout), thinning_note(layout),
                                 downsampling_note(layout, request.scale), annotation_note(request, layout)};
  notes.erase(std::remove(notes.begin(), notes.end(), std::string()), notes.end());
  return notes;
}

std::vector<std::string> missing_glyph_warnings(const GridRequest& request, const FontSet& fonts,
                                                const GridLayout& layout) {
  if (layout.thumbnail) return {};  // no text is drawn
  std::vector<std::pair<std::string, std::string>> texts;  // (where, text as drawn)
  const auto quoted = [](const std::string& text) { return " \"" + text + "\""; };
  const bool self = request.query_tokens == request.key_tokens;
  for (std::size_t i = 0; i < layout.query_labels.size(); ++i) {
    texts.emplace_back((self ? "token " : "query token ") + std::to_string(i) + quoted(request.query_tokens[i]),
                       layout.query_labels[i]);
  }
  for (std::size_t j = 0; j < layout.key_labels.size() && !self; ++j) {
    texts.emplace_back("key token " + std::to_string(j) + quoted(request.key_tokens[j]), layout.key_labels[j]);
  }
  for (const std::string& title : layout.panel_titles) texts.emplace_back("panel title" + quoted(title), title);
  texts.emplace_back("figure title" + quoted(request.figure_title), request.figure_title);
  texts.emplace_back("axis title" + quoted(request.query_axis_title), request.query_axis_title);
  texts.emplace_back("axis title" + quoted(request.key_axis_title), request.key_axis_title);
  texts.emplace_back("colour bar label" + quoted(request.colorbar_label), request.colorbar_label);
  std::vector<char32_t> reported;
  std::vector<std::string> warnings;
  const std::string substitute = fonts.has_glyph(kReplacementCharacter) ? "U+FFFD" : "\"<U+XXXX>\"";
  for (const auto& [where, text] : texts) {
    for (char32_t cp : fonts.missing_code_points(text)) {
      if (std::find(reported.begin(), reported.end(), cp) != reported.end()) continue;
      reported.push_back(cp);
      warnings.push_back(where + kNoGlyph + code_point_name(cp) + " in " +
                         font_list(fonts) +
                         (fonts.fallback() ? " or " + fonts.fallback()->description() : "") +
                         "; drawn as " + substitute +
                         " (" + missing_font_advice(cp) + ")");
    }
  }
  return warnings;
}

std::string missing_glyph_code(const std::string& warning) {
  const std::size_t at = warning.find(kNoGlyph);
  if (at == std::string::npos) return "";
  const std::size_t start = at + kNoGlyph.size();
  return warning.substr(start, warning.find(' ', start) - start);
}

}  // namespace attnviz
