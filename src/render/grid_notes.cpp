#include "render/grid_notes.hpp"

#include <algorithm>

#include "core/counted.hpp"
#include "core/utf8.hpp"
#include "render/font_advice.hpp"
#include "render/graphemes.hpp"
#include "render/token_label.hpp"

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

// The code points no font has, grouped by the grapheme cluster they belong to (👍🏽 is one
// character drawn as one U+FFFD, so it is one warning, advised by its first code point, not one
// per code point with advice for a skin-tone modifier alone).
std::vector<std::u32string> missing_by_cluster(const FontSet& fonts, const std::string& text) {
  const std::vector<char32_t> missing = fonts.missing_code_points(text);
  if (missing.empty()) return {};
  const std::u32string code_points = decode_utf8(text);
  const std::vector<std::size_t> starts = grapheme_starts(code_points);
  std::vector<std::u32string> clusters;
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t end = k + 1 < starts.size() ? starts[k + 1] : code_points.size();
    std::u32string cluster;
    for (std::size_t i = starts[k]; i < end; ++i)
      if (std::find(missing.begin(), missing.end(), code_points[i]) != missing.end()) cluster += code_points[i];
    if (!cluster.empty() && std::find(clusters.begin(), clusters.end(), cluster) == clusters.end()) clusters.push_back(cluster);
  }
  return clusters;
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
  std::vector<std::u32string> reported;  // the missing code points of each cluster reported
  std::vector<std::string> warnings;
  const std::string substitute = fonts.has_glyph(kReplacementCharacter) ? "U+FFFD" : "\"<U+XXXX>\"";
  for (const auto& [where, text] : texts) {
    for (const std::u32string& missing : missing_by_cluster(fonts, text)) {
      if (std::find(reported.begin(), reported.end(), missing) != reported.end()) continue;
      reported.push_back(missing);
      std::string names;
      for (const char32_t cp : missing) names += (names.empty() ? "" : "+") + code_point_name(cp);
      warnings.push_back(where + kNoGlyph + names + " in " + font_list(fonts) +
                         (fonts.fallback() ? " or " + fonts.fallback()->description() : "") + "; drawn as " + substitute +
                         " (" + missing_font_advice(missing.front()) + ")");
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
