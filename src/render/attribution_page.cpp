#include "render/attribution_page.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "render/colormap.hpp"
#include "render/html_report_page.hpp"
#include "render/script_json.hpp"
#include "render/svg_document.hpp"

namespace attnviz {

namespace {

constexpr const char* kCss = R"page(body { font-family: "DejaVu Sans", Verdana, sans-serif; color: #222; margin: 16px; }
h1 { font-size: 18px; margin: 0 0 8px 0; }
h2 { font-size: 15px; margin: 18px 0 4px 0; }
#top { font-size: 13px; color: #333; margin: 0; padding-left: 18px; }
.note { color: #505050; font-size: 12px; margin: 2px 0 6px 0; }
table { border-collapse: collapse; font-size: 11px; display: inline-table; margin: 0 16px 8px 0; vertical-align: top; }
caption { text-align: left; font-size: 12px; color: #333; padding-bottom: 2px; }
th { font-weight: normal; color: #505050; padding: 1px 4px; }
td.v { width: 46px; height: 20px; text-align: center; font-variant-numeric: tabular-nums; }
)page";

std::string hex(const Rgb& c) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", c.r, c.g, c.b);
  return text;
}

// Three significant digits, as the PNG's cells print them.
std::string shown(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

}  // namespace

std::string attribution_page_html(const std::vector<GridRequest>& maps, const std::vector<std::vector<std::string>>& head_prefixes,
                                  const std::vector<std::string>& top_heads) {
  const std::string title = maps.empty() ? std::string("head attribution") : maps.front().figure_title;
  const Colormap& rdbu = colormap_by_name("rdbu");
  std::string html = report_head();
  html += "<title>" + xml_text(title) + "</title>\n<style>\n" + kCss + "</style>\n</head>\n<body>\n";
  html += "<h1>" + xml_text(title) + "</h1>\n<ul id=\"top\">\n";
  for (const std::string& line : top_heads) html += "<li>" + xml_text(line) + "</li>\n";
  html += "</ul>\n";
  for (std::size_t m = 0; m < maps.size(); ++m) {
    const GridRequest& map = maps[m];
    // One symmetric scale over the map's panels, as attribution.png's ScaleMode::Symmetric.
    double limit = 0;
    for (const SharedMatrix& panel : map.panels) limit = std::max(limit, static_cast<double>(panel->cwiseAbs().maxCoeff()));
    html += "<h2>" + xml_text(map.colorbar_label) + "</h2>\n<p class=\"note\">red: towards the target, blue: away; white = 0, full colour = \u00B1" +
            xml_text(shown(limit)) + ". Hover a cell for its head and value.</p>\n";
    for (std::size_t p = 0; p < map.panels.size(); ++p) {
      const Matrix& values = *map.panels[p];
      const std::string prefix = m < head_prefixes.size() && p < head_prefixes[m].size() ? head_prefixes[m][p] : "";
      const std::string panel_title = p < map.panel_titles.size() ? map.panel_titles[p] : "";
      html += "<table class=\"map\" data-map=\"" + std::to_string(m) + "\" data-panel=\"" + std::to_string(p) + "\">\n<caption>" +
              xml_text(panel_title) + "</caption>\n<tr><th></th>";
      for (Eigen::Index h = 0; h < values.cols(); ++h) html += "<th>H" + std::to_string(h) + "</th>";
      html += "</tr>\n";
      for (Eigen::Index l = 0; l < values.rows(); ++l) {
        html += "<tr><th>L" + std::to_string(l) + "</th>";
        for (Eigen::Index h = 0; h < values.cols(); ++h) {
          const double v = values(l, h);
          const double t = limit > 0 ? 0.5 + 0.5 * v / limit : 0.5;
          const Rgb colour = rdbu.at(t);
          const bool dark = std::abs(t - 0.5) > 0.35;  // white text on the saturated ends
          const std::string head = prefix + "L" + std::to_string(l) + "H" + std::to_string(h);
          html += "<td class=\"v\" data-layer=\"" + std::to_string(l) + "\" data-head=\"" + std::to_string(h) + "\" data-value=\"" +
                  script_json_number(v) + "\" title=\"" + xml_text(head + ": " + shown(v) + " (" + panel_title + ")") +
                  "\" style=\"background:" + hex(colour) + (dark ? ";color:#fff" : "") + "\">" + xml_text(shown(v)) + "</td>";
        }
        html += "</tr>\n";
      }
      html += "</table>\n";
    }
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace attnviz
