#include "render/html_report.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "render/base64.hpp"
#include "render/colormap.hpp"
#include "render/html_report_page.hpp"
#include "render/html_report_views.hpp"
#include "render/script_json.hpp"
#include "render/svg_document.hpp"

namespace attnviz {

namespace {

constexpr int kColormapEntries = 256;     // matplotlib's tables, as Colormap::at looks them up
constexpr double kU16Steps = 65535.0;     // 16-bit storage: q = round((v − lo) / (hi − lo) · 65535)

// [vmin, vmax], or [vmin, vmax, 1] for a log10 range (the page's position() reads the flag).
std::string number_pair(const ValueRange& range) {
  return "[" + script_json_number(range.vmin) + "," + script_json_number(range.vmax) + (range.log10 ? ",1]" : "]");
}

// Little-endian bytes of each value, whatever the host's order.
template <typename T>
void append_le(std::string& bytes, T value) {
  for (std::size_t b = 0; b < sizeof(T); ++b) bytes += static_cast<char>((value >> (8 * b)) & 0xff);
}

std::string float32_values(const std::vector<float>& values) {
  std::string bytes;
  bytes.reserve(values.size() * sizeof(float));
  for (float v : values) append_le(bytes, std::bit_cast<std::uint32_t>(v));
  return "\"encoding\":\"f32\",\"values\":\"" + base64_encode(bytes) + "\"";
}

// 16-bit steps over the view's own range, so the rounding error is at most half a step.
std::string u16_values(const std::vector<float>& values) {
  double lo = 0, hi = 0;
  if (!values.empty()) {
    const auto [min, max] = std::minmax_element(values.begin(), values.end());
    lo = *min;
    hi = *max;
  }
  const double step = hi > lo ? (hi - lo) / kU16Steps : 0;
  std::string bytes;
  bytes.reserve(values.size() * 2);
  for (float v : values) {
    const double q = step > 0 ? std::round((v - lo) / step) : 0;
    append_le(bytes, static_cast<std::uint16_t>(std::clamp(q, 0.0, kU16Steps)));
  }
  return "\"encoding\":\"u16\",\"lo\":" + script_json_number(lo) + ",\"hi\":" + script_json_number(hi) +
         ",\"values\":\"" + base64_encode(bytes) + "\"";
}

std::string view_json(const ReportView& view, bool compact) {
  std::string json = "{\"name\":" + script_json_string(view.name) + ",\"title\":" + script_json_string(view.figure_title);
  json += ",\"queryTokens\":" + script_json_strings(view.query_tokens) + ",\"keyTokens\":" + script_json_strings(view.key_tokens);
  json += ",\"queryLabels\":" + script_json_strings(view.query_labels) + ",\"keyLabels\":" + script_json_strings(view.key_labels);
  json += ",\"queryAxis\":" + script_json_string(view.query_axis_title) + ",\"keyAxis\":" + script_json_string(view.key_axis_title);
  json += ",\"panels\":[";
  for (std::size_t p = 0; p < view.panel_titles.size(); ++p) {
    json += (p == 0 ? "{" : ",{") + std::string("\"name\":") + script_json_string(view.panel_names[p]) +
            ",\"title\":" + script_json_string(view.panel_titles[p]) + ",\"range\":" + number_pair(view.ranges[p]) + "}";
  }
  json += "],\"cmap\":" + script_json_string(view.cmap);
  json += ",\"colorbar\":{\"label\":" + script_json_string(view.colorbar_label) +
          ",\"caption\":" + script_json_string(view.colorbar.caption) + ",\"range\":" + number_pair(view.colorbar.range) +
          ",\"ticks\":[";
  for (std::size_t t = 0; t < view.colorbar.ticks.size(); ++t) {
    const Tick& tick = view.colorbar.ticks[t];
    json += (t == 0 ? "[" : ",[") + script_json_number(tick.value) + "," + script_json_string(tick.label) + "]";
  }
  json += "]}";
  const std::string allowed(view.allowed.begin(), view.allowed.end());
  json += std::string(",\"symmetric\":") + (view.symmetric ? "true" : "false");
  json += ",\"allowed\":" + (view.allowed.empty() ? std::string("null") : "\"" + base64_encode(allowed) + "\"");
  json += ",\"promptRows\":" + std::to_string(view.prompt_rows) + ",\"promptCols\":" + std::to_string(view.prompt_cols) +
          ",\"firstQuery\":" + std::to_string(view.first_query) + ",\"excludeSink\":" + (view.exclude_sink ? "true" : "false");
  json += "," + (compact ? u16_values(view.values) : float32_values(view.values));
  if (view.measure != "weights") json += ",\"measure\":" + script_json_string(view.measure);  // absent: weights
  if (!view.one_run_legend.empty()) json += ",\"oneRunLegend\":" + script_json_string(view.one_run_legend);
  if (!view.panel_allowed.empty()) {
    json += ",\"panelAllowed\":[";
    for (std::size_t p = 0; p < view.panel_allowed.size(); ++p) {
      const std::string cells(view.panel_allowed[p].begin(), view.panel_allowed[p].end());
      json += (p == 0 ? "\"" : ",\"") + base64_encode(cells) + "\"";
    }
    json += "]";
  }
  return json + "}";
}

// Every entry of each colour map the page uses, as "rrggbb" × 256.
std::string colormaps_json(const std::vector<ReportView>& views) {
  std::vector<std::string> names;
  for (const ReportView& view : views) {
    if (std::find(names.begin(), names.end(), view.cmap) == names.end()) names.push_back(view.cmap);
  }
  std::sort(names.begin(), names.end());
  std::string json = "{";
  for (std::size_t n = 0; n < names.size(); ++n) {
    const Colormap& colormap = colormap_by_name(names[n]);
    std::string hex;
    for (int i = 0; i < kColormapEntries; ++i) hex += svg_colour(colormap.at((i + 0.5) / kColormapEntries)).substr(1);
    json += (n == 0 ? "" : ",") + script_json_string(names[n]) + ":\"" + hex + "\"";
  }
  return json + "}";
}

std::string table_json(const TextTable& table) {
  std::string rows;
  for (std::size_t r = 0; r < table.rows.size(); ++r) rows += (r == 0 ? "" : ",") + script_json_strings(table.rows[r]);
  return "{\"title\":" + script_json_string(table.title) + ",\"header\":" + script_json_strings(table.header) +
         ",\"rows\":[" + rows + "],\"note\":" + script_json_string(table.note) + "}";
}

std::string page_json(const ReportPage& page, bool compact) {
  std::string json = "{\"format\":\"attnviz.report\",\"version\":1,\"title\":" + script_json_string(page.title) +
                     ",\"layered\":" + (page.layered ? "true" : "false") +
                     ",\"promptLength\":" + std::to_string(page.prompt_length) + ",\"colormaps\":" + colormaps_json(page.views) +
                     ",\"turns\":[";
  for (std::size_t t = 0; t < page.turns.size(); ++t)
    json += (t == 0 ? "{\"role\":" : ",{\"role\":") + script_json_string(page.turns[t].role) +
            ",\"first\":" + std::to_string(page.turns[t].first) + ",\"end\":" + std::to_string(page.turns[t].end) + "}";
  json += "],\"turnsNote\":" + script_json_string(page.turns_note) + ",\"views\":[";
  for (std::size_t v = 0; v < page.views.size(); ++v) json += (v == 0 ? "" : ",") + view_json(page.views[v], compact);
  json += "],\"tables\":[";
  for (std::size_t t = 0; t < page.tables.size(); ++t) json += (t == 0 ? "" : ",") + table_json(page.tables[t]);
  json += "],\"links\":[";
  for (std::size_t l = 0; l < page.links.size(); ++l) {
    json += (l == 0 ? "{" : ",{") + std::string("\"href\":") + script_json_string(page.links[l].href) +
            ",\"text\":" + script_json_string(page.links[l].text) + ",\"main\":" + (l < page.main_links ? "true" : "false") + "}";
  }
  return json + "]}";
}

}  // namespace

ReportView report_view(const GridRequest& request, const FontSet& fonts, std::string name,
                       const std::vector<std::string>& panel_names) {
  GridRequest measured = request;
  measured.max_memory_bytes = std::numeric_limits<double>::infinity();  // nothing is drawn here
  const GridLayout layout = layout_grid(measured, fonts);
  ReportView view;
  view.name = std::move(name);
  view.figure_title = request.figure_title;
  view.query_tokens = request.query_tokens;
  view.key_tokens = request.key_tokens;
  view.query_labels = layout.query_labels;
  view.key_labels = layout.key_labels;
  view.query_axis_title = request.query_axis_title;
  view.key_axis_title = request.key_axis_title;
  view.panel_titles = layout.panel_titles;
  for (std::size_t p = 0; p < request.panels.size(); ++p) {
    view.panel_names.push_back(p < panel_names.size() ? panel_names[p] : "head " + std::to_string(p));
  }
  view.ranges = layout.ranges;
  view.colorbar = layout.colorbar_scale;
  view.colorbar_label = request.colorbar_label;
  view.cmap = request.cmap;
  view.symmetric = request.scale == ScaleMode::Symmetric;
  view.prompt_rows = request.prompt_query_rows;
  view.prompt_cols = request.prompt_key_cols;
  view.first_query = request.first_query_index;
  view.exclude_sink = request.exclude_sink;
  const bool masked = request.allowed && request.allowed->size() != 0 && (request.allowed->array() == 0).any();
  const Eigen::Index n_q = static_cast<Eigen::Index>(request.query_tokens.size());
  const Eigen::Index n_k = static_cast<Eigen::Index>(request.key_tokens.size());
  const bool one_run = request.one_run_masked && request.one_run_masked->size() != 0;
  if (masked) {
    for (Eigen::Index i = 0; i < n_q; ++i) {
      for (Eigen::Index j = 0; j < n_k; ++j) {
        const bool apart = one_run && (*request.one_run_masked)(i, j) != 0;
        view.allowed.push_back((*request.allowed)(i, j) != 0 ? 1 : apart ? 2 : 0);
      }
    }
  }
  if (masked && std::find(view.allowed.begin(), view.allowed.end(), 2) != view.allowed.end())
    view.one_run_legend = request.one_run_legend.empty() ? "cross-hatched: masked in one run only" : request.one_run_legend;
  const bool own_masks = std::any_of(request.panel_allowed.begin(), request.panel_allowed.end(),
                                     [](const SharedMask& m) { return m && m->size() != 0; });
  for (std::size_t p = 0; p < request.panels.size(); ++p) {
    const Matrix& panel = *request.panels[p];
    const MaskMatrix* own = p < request.panel_allowed.size() && request.panel_allowed[p] && request.panel_allowed[p]->size() != 0
                                ? request.panel_allowed[p].get()
                                : (masked ? request.allowed.get() : nullptr);
    if (own_masks) view.panel_allowed.emplace_back();
    for (Eigen::Index i = 0; i < n_q; ++i) {
      for (Eigen::Index j = 0; j < n_k; ++j) {
        const bool allowed = own == nullptr || (*own)(i, j) != 0;
        if (own_masks) view.panel_allowed.back().push_back(allowed ? 1 : one_run && (*request.one_run_masked)(i, j) != 0 ? 2 : 0);
        if (allowed) view.values.push_back(panel(i, j));
      }
    }
  }
  return view;
}

std::string html_report(const ReportPage& page) {
  double stored = 0;
  for (const ReportView& view : page.views) stored += static_cast<double>(view.values.size());
  const bool compact = stored > kMaxExactReportValues;
  return report_head() + "<title>" + xml_text(page.title) + "</title>\n<style>\n" + kReportCss +
         kReportViewsCss + "</style>\n</head>\n<body>\n" + kReportBody + kReportViewsBody + "<script type=\"application/json\" id=\"attnviz-data\">" +
         page_json(page, compact) + "</script>\n<script>\n" + kReportScript + kReportViewsScript + "</script>\n</body>\n</html>\n";
}

}  // namespace attnviz
