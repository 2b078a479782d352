// The SVG pictures (issue 14): the PNG's layout, one <rect> per cell in the colour-map colour,
// masked cells hatched, escaped text, the raster fallback, and deterministic bytes.
#include <catch2/catch.hpp>

#include <regex>

#include "render/colormap.hpp"
#include "render/head_grid.hpp"
#include "render/heatmap.hpp"
#include "render/svg_document.hpp"
#include "render/svg_grid.hpp"

using namespace attnviz;

namespace {

// DejaVu Sans alone: what it lacks stays missing on a machine with more fonts (issue 24).
const FontSet& fonts() {
  static const FontSet set({ATTNVIZ_DEFAULT_FONT}, nullptr);
  return set;
}

// Fixture F-A's head 0 (3 tokens) with a causal mask and a token that is markup.
GridRequest causal_request() {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"I", "<saw>", "her & \"him\""};
  Matrix w(3, 3);
  w << 1, 0, 0, 0.25f, 0.75f, 0, 0.2f, 0.3f, 0.5f;
  request.panels = {share(w)};
  MaskMatrix allowed(3, 3);
  allowed << 1, 0, 0, 1, 1, 0, 1, 1, 1;
  request.allowed = share(allowed);
  request.panel_titles = {"L0H0 · head 0 of 1"};
  request.figure_title = "attention · layer 0";
  return request;
}

std::vector<std::smatch> cells(const std::string& svg) {
  static const std::regex rect(R"re(<rect class="(c|m)" x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)" fill="([^"]+)"/>)re");
  std::vector<std::smatch> found;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) found.push_back(*it);
  return found;
}

}  // namespace

TEST_CASE("svg_grid: one rect per cell at the PNG's cell, in the colour map's colour", "[render]") {
  const GridRequest request = causal_request();
  const std::string svg = svg_document({grid_svg(request, fonts(), "g")});
  const GridLayout layout = layout_grid(request, fonts());
  const std::vector<std::smatch> found = cells(svg);
  REQUIRE(found.size() == 9);
  const Colormap& viridis = colormap_by_name("viridis");
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const std::smatch& rect = found[static_cast<std::size_t>(3 * i + j)];
      const int x = std::stoi(rect[2]), y = std::stoi(rect[3]), side = std::stoi(rect[4]);
      const Point centre = cell_centre_px(layout, 0, i, j);
      CHECK(x + side / 2 == centre.x_px);
      CHECK(y + side / 2 == centre.y_px);
      if (j > i) {
        CHECK(rect[1] == "m");
        CHECK(rect[6] == "url(#ghatch0)");
      } else {
        CHECK(rect[1] == "c");
        CHECK(rect[6] == svg_colour(viridis.at((*request.panels[0])(i, j))));
      }
    }
  }
  CHECK(svg.find("width=\"" + std::to_string(layout.width_px) + "\" height=\"" + std::to_string(layout.height_px) + "\"") !=
        std::string::npos);
}

TEST_CASE("svg_grid: masked cells use the PNG's 1-px hatch, labels are escaped text", "[render]") {
  const std::string svg = svg_document({grid_svg(causal_request(), fonts(), "g")});
  // The hatch pattern: grey fill, light pixels where (x + y) % 6 == 0.
  CHECK(svg.find("<rect width=\"6\" height=\"6\" fill=\"#bfbfbf\"/><rect x=\"0\" y=\"0\" width=\"1\" height=\"1\" "
                 "fill=\"#ebebeb\"/><rect x=\"1\" y=\"5\"") != std::string::npos);
  CHECK(svg.find(">&lt;saw&gt;</text>") != std::string::npos);
  CHECK(svg.find(">her &amp; &quot;him&quot;</text>") != std::string::npos);
  CHECK(svg.find("<saw>") == std::string::npos);
  CHECK(svg.find("font-family=\"DejaVu Sans, Verdana, sans-serif\"") != std::string::npos);
  CHECK(svg.find(">grey hatched: masked (causal/padding), not attended</text>") != std::string::npos);
  CHECK(svg.find(">fixed scale 0–1</text>") != std::string::npos);
}

TEST_CASE("svg_grid: --annotate prints each allowed value in its cell in black or white", "[render]") {
  GridRequest request = causal_request();
  request.annotate = true;
  const std::string svg = svg_document({grid_svg(request, fonts(), "g")});
  // Dark viridis (0.25) takes white text, bright viridis (1.00) black; masked cells none.
  CHECK(svg.find("fill=\"#ffffff\" text-anchor=\"middle\">0.25</text>") != std::string::npos);
  CHECK(svg.find("fill=\"#000000\" text-anchor=\"middle\">1.00</text>") != std::string::npos);
  CHECK(svg.find(">0.00</text>") == std::string::npos);
}

TEST_CASE("svg_grid: the same request gives the same bytes", "[render]") {
  CHECK(svg_document({grid_svg(causal_request(), fonts(), "g")}) == svg_document({grid_svg(causal_request(), fonts(), "g")}));
}

TEST_CASE("svg_grid: past kMaxVectorCells each panel is one embedded PNG", "[render]") {
  const int n = 230;  // 230 x 230 = 52 900 cells > 50 000
  REQUIRE(static_cast<long>(n) * n > kMaxVectorCells);
  GridRequest request;
  for (int i = 0; i < n; ++i) request.query_tokens.push_back("t" + std::to_string(i));
  request.key_tokens = request.query_tokens;
  request.panels = {share<Matrix>(Matrix::Constant(n, n, 1.0f / n))};
  const std::string svg = svg_document({grid_svg(request, fonts(), "g")});
  CHECK(cells(svg).empty());
  CHECK(svg.find("<image class=\"raster\"") != std::string::npos);
  CHECK(svg.find("xlink:href=\"data:image/png;base64,iVBORw0KGgo") != std::string::npos);
  CHECK(svg.find(">t0</text>") != std::string::npos);
}

// Issue 23: thinned labels name their token's position, as in the PNG.
TEST_CASE("svg_grid: labels of a thinned axis carry their token index", "[render]") {
  GridRequest request;
  for (int i = 0; i < 470; ++i) request.query_tokens.push_back("t" + std::to_string(i));
  request.key_tokens = request.query_tokens;
  request.panels = {share<Matrix>(Matrix::Constant(470, 470, 1.0f / 470))};
  const SvgPicture picture = grid_svg(request, fonts(), "g");
  CHECK(picture.width_px <= 4096);
  CHECK(picture.height_px <= 4096);
  const std::string svg = svg_document({picture});
  CHECK(svg.find(">#212 t212</text>") != std::string::npos);
  CHECK(svg.find(">t212</text>") == std::string::npos);
  CHECK(svg.find("t213</text>") == std::string::npos);  // every 2nd label: 213 is not drawn
}

TEST_CASE("svg_document: stacks pictures centred and keeps text valid XML", "[render]") {
  const std::string svg = svg_document({{100, 10, "", "<rect/>\n"}, {50, 20, "", "<rect/>\n"}});
  CHECK(svg.find("width=\"100\" height=\"30\" viewBox=\"0 0 100 30\"") != std::string::npos);
  CHECK(svg.find("<g transform=\"translate(0,0)\">") != std::string::npos);
  CHECK(svg.find("<g transform=\"translate(25,10)\">") != std::string::npos);
  CHECK(xml_text("a<b>&\"c\"") == "a&lt;b&gt;&amp;&quot;c&quot;");
  CHECK(xml_text("\x01x\xff") == "\xef\xbf\xbdx\xef\xbf\xbd");
  CHECK(svg_colour(Rgb{68, 1, 84}) == "#440154");
}

// Issue 23: --scale log colours a cell by log10 of its weight over 1e-4..1, as the PNG does.
TEST_CASE("svg_grid: --scale log colours a weight of 0.01 with the middle of the map", "[render]") {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"a", "b"};
  Matrix w(2, 2);
  w << 0.01f, 1e-6f, 1.0f, 0.01f;
  request.panels = {share(w)};
  request.scale = ScaleMode::Log;
  const std::string svg = svg_document({grid_svg(request, fonts(), "g")});
  const std::vector<std::smatch> found = cells(svg);
  REQUIRE(found.size() == 4);
  const Colormap& viridis = colormap_by_name("viridis");
  CHECK(found[0][6] == svg_colour(viridis.at(color_position({kLogFloor, 1, true}, 0.01f))));
  CHECK(found[1][6] == svg_colour(viridis.at(0.0)));
  CHECK(found[2][6] == svg_colour(viridis.at(1.0)));
  CHECK_THAT(svg, Catch::Contains("log\u2081\u2080 scale, floor 0.0001"));
}
