// The attention picture: orientation, colours, scales, masks, labels, grid geometry and size
// limits, checked on the in-memory image (issue 3; cases BH-16, BH-17, BH-19, BH-20, BH-22).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "render/colormap.hpp"
#include "render/grid_marks.hpp"
#include "render/grid_notes.hpp"
#include "render/head_grid.hpp"
#include "render/heatmap.hpp"
#include "render/token_label.hpp"

using namespace attnviz;

namespace {

constexpr Rgb kWhite{255, 255, 255};

// DejaVu Sans alone: what it lacks stays missing on a machine with more fonts (issue 24).
const FontSet& fonts() {
  static const FontSet set({ATTNVIZ_DEFAULT_FONT}, nullptr);
  return set;
}

Rgb viridis(double t) { return colormap_by_name("viridis").at(t); }

Rgb centre(const RenderedGrid& grid, int panel, int row, int col) {
  const Point p = cell_centre_px(grid.layout, panel, row, col);
  return grid.image.at(p.x_px, p.y_px);
}

Matrix matrix(int rows, int cols, std::initializer_list<float> values) {
  Matrix m(rows, cols);
  std::copy(values.begin(), values.end(), m.data());
  return m;
}

// Fixture F-A (cases file): 3 tokens, 2 heads.
GridRequest fixture_a() {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"I", "saw", "her"};
  request.panels = {share(matrix(3, 3, {0.00423168f, 0.85056513f, 0.14520318f, 0.29635406f, 0.10260583f,
                                        0.60104011f, 0.26807470f, 0.18823897f, 0.54368632f})),
                    share(matrix(3, 3, {0.16902193f, 0.34279590f, 0.48818217f, 0.29635406f, 0.60104011f,
                                        0.10260583f, 0.09955862f, 0.83053245f, 0.06990892f}))};
  request.panel_titles = {"head 0 of 2", "head 1 of 2"};
  return request;
}

// Fixture F-B: 2 queries × 4 keys, unmasked.
GridRequest fixture_b() {
  GridRequest request;
  request.query_tokens = {"the", "cat"};
  request.key_tokens = {"le", "chat", "noir", "<pad>"};
  request.panels = {share(matrix(2, 4, {0.10609352f, 0.43638920f, 0.30642748f, 0.15108980f, 0.24234742f,
                                        0.24234742f, 0.34513158f, 0.17017357f})),
                    share(matrix(2, 4, {0.12859166f, 0.37140834f, 0.37140834f, 0.12859166f, 0.24530663f,
                                        0.17225150f, 0.08493182f, 0.49751005f}))};
  return request;
}

// BH-19: head A constant 0.5, head B = [[1, 0], [0.5, 0.5]].
GridRequest fixture_bh19(ScaleMode scale) {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"x", "y"};
  request.panels = {share(matrix(2, 2, {0.5f, 0.5f, 0.5f, 0.5f})), share(matrix(2, 2, {1.0f, 0.0f, 0.5f, 0.5f}))};
  request.scale = scale;
  return request;
}

MaskMatrix causal(int n) {
  MaskMatrix allowed = MaskMatrix::Zero(n, n);
  for (int i = 0; i < n; ++i) allowed.row(i).head(i + 1).setOnes();
  return allowed;
}

GridRequest numbered_tokens(int n_q, int n_k) {
  GridRequest request;
  for (int i = 0; i < n_q; ++i) request.query_tokens.push_back("t" + std::to_string(i));
  for (int j = 0; j < n_k; ++j) request.key_tokens.push_back("t" + std::to_string(j));
  request.panels = {share<Matrix>(Matrix::Constant(n_q, n_k, 1.0f / static_cast<float>(n_k)))};
  return request;
}

bool has_ink(const Image& image, const Rect& rect) {
  for (int y = rect.y_px; y < rect.bottom_px(); ++y) {
    for (int x = rect.x_px; x < rect.right_px(); ++x) {
      if (image.at(x, y) != kWhite) return true;
    }
  }
  return false;
}

bool inside(const Rect& inner, const Rect& outer) {
  return inner.x_px >= outer.x_px && inner.y_px >= outer.y_px &&
         inner.right_px() <= outer.right_px() && inner.bottom_px() <= outer.bottom_px();
}

bool overlap(const Rect& a, const Rect& b) {
  return a.x_px < b.right_px() && b.x_px < a.right_px() && a.y_px < b.bottom_px() &&
         b.y_px < a.bottom_px();
}

bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("head_grid: row 0 is query 0 at the top and columns are keys (BH-16, F-A)", "[render]") {
  const RenderedGrid grid = render_grid(fixture_a(), fonts());
  CHECK(centre(grid, 0, 0, 2) == viridis(0.14520318));  // row "I", column "her"
  CHECK(centre(grid, 0, 2, 0) == viridis(0.26807470));  // row "her", column "I"
  CHECK(centre(grid, 1, 2, 1) == viridis(0.83053245));
  const Point top_left = cell_centre_px(grid.layout, 0, 0, 0);
  const Point below = cell_centre_px(grid.layout, 0, 1, 0);
  const Point right = cell_centre_px(grid.layout, 0, 0, 1);
  CHECK(below.y_px - top_left.y_px == grid.layout.cell_px);
  CHECK(right.x_px - top_left.x_px == grid.layout.cell_px);
  CHECK(grid.warnings.empty());
}

TEST_CASE("head_grid: cross-attention has n_q rows and n_k columns of whole cells (BH-16, F-B)", "[render]") {
  const RenderedGrid grid = render_grid(fixture_b(), fonts());
  const GridLayout& layout = grid.layout;
  CHECK(layout.drawn_rows == 2);
  CHECK(layout.drawn_cols == 4);
  CHECK(layout.block == 1);
  for (const PanelLayout& panel : layout.panels) {
    CHECK(panel.cells.width_px == 4 * layout.cell_px);
    CHECK(panel.cells.height_px == 2 * layout.cell_px);
  }
  CHECK(centre(grid, 0, 1, 2) == viridis(0.34513158));  // head 0, row "cat", column "noir"
  CHECK(centre(grid, 1, 1, 3) == viridis(0.49751005));  // head 1, row "cat", column "<pad>"
  CHECK(centre(grid, 1, 0, 0) == viridis(0.12859166));  // head 1, row "the", column "le"
  CHECK(layout.query_labels == std::vector<std::string>{"the", "cat"});
  CHECK(layout.key_labels == std::vector<std::string>{"le", "chat", "noir", "<pad>"});
}

TEST_CASE("head_grid: equal weights have equal colours under fixed and shared scales (BH-19)", "[render]") {
  const ScaleMode scale = GENERATE(ScaleMode::Fixed, ScaleMode::Shared);
  const RenderedGrid grid = render_grid(fixture_bh19(scale), fonts());
  const Rgb a00 = centre(grid, 0, 0, 0);
  CHECK(centre(grid, 0, 1, 1) == a00);
  CHECK(centre(grid, 1, 1, 0) == a00);
  CHECK(centre(grid, 1, 1, 1) == a00);
  CHECK(centre(grid, 1, 0, 0) != a00);
  CHECK(centre(grid, 1, 0, 0) == viridis(1.0));
  CHECK(grid.layout.colorbar_scale.range.vmax == 1.0);
}

TEST_CASE("head_grid: fixed scale is 0-1 with ticks 0 to 1 and says so (BH-19)", "[render]") {
  const GridLayout layout = layout_grid(fixture_bh19(ScaleMode::Fixed), fonts());
  const ColorbarScale& bar = layout.colorbar_scale;
  CHECK(bar.caption == "fixed scale 0\u20131");
  REQUIRE(bar.ticks.size() == 5);
  CHECK(bar.ticks.front().label == "0");
  CHECK(bar.ticks[1].label == "0.25");
  CHECK(bar.ticks.back().label == "1");
  CHECK(bar.ticks.back().value == 1.0);
}

TEST_CASE("head_grid: per-head scaling gives a constant panel the mid colour and its real range (BH-19)", "[render]") {
  const RenderedGrid grid = render_grid(fixture_bh19(ScaleMode::Head), fonts());
  CHECK(centre(grid, 0, 0, 0) == viridis(0.5));
  CHECK(centre(grid, 0, 1, 1) == viridis(0.5));
  CHECK(centre(grid, 1, 0, 0) == viridis(1.0));
  CHECK(centre(grid, 1, 0, 1) == viridis(0.0));
  CHECK(grid.layout.ranges[0] == ValueRange{0.5, 0.5});
  CHECK(grid.layout.panel_titles[0].find("0.5\u20130.5") != std::string::npos);
  CHECK(grid.layout.colorbar_scale.caption.find("per-head min\u2013max") != std::string::npos);
}

TEST_CASE("head_grid: symmetric scale maps 0 to the middle of rdbu", "[render]") {
  GridRequest request = fixture_bh19(ScaleMode::Symmetric);
  request.panels = {share(matrix(2, 2, {-0.4f, 0.0f, 0.2f, 0.4f}))};
  request.cmap = "rdbu";
  const RenderedGrid grid = render_grid(request, fonts());
  const Colormap& rdbu = colormap_by_name("rdbu");
  CHECK(centre(grid, 0, 0, 1) == rdbu.at(0.5));
  CHECK(centre(grid, 0, 0, 0) == rdbu.at(0.0));
  CHECK(centre(grid, 0, 1, 1) == rdbu.at(1.0));
  CHECK(grid.layout.colorbar_scale.caption == "symmetric \u00B10.4");
}

TEST_CASE("head_grid: masked cells are grey-hatched, not colour 0, and explained", "[render]") {
  GridRequest request = fixture_a();
  MaskMatrix allowed = causal(3);
  allowed(0, 0) = 0;  // query 0 now sees no key at all
  request.allowed = share(allowed);
  const RenderedGrid grid = render_grid(request, fonts());
  const Rect& cells = grid.layout.panels[0].cells;
  const int cell_px = grid.layout.cell_px;
  int fill = 0, hatch = 0, other = 0;
  for (int y = cells.y_px; y < cells.y_px + cell_px; ++y) {  // cell (0, 2), masked
    for (int x = cells.x_px + 2 * cell_px; x < cells.x_px + 3 * cell_px; ++x) {
      const Rgb c = grid.image.at(x, y);
      fill += c == kMaskedFill;
      hatch += c == kMaskedHatch;
      other += c != kMaskedFill && c != kMaskedHatch;
    }
  }
  CHECK(other == 0);
  CHECK(fill > hatch);
  CHECK(hatch > cell_px);  // diagonal lines cross the cell
  CHECK(centre(grid, 0, 1, 0) == viridis(0.29635406));  // allowed cells keep their colour
  CHECK(any_contains(grid.layout.legend_lines, "grey hatched: masked"));
  CHECK(any_contains(grid.layout.legend_lines, "all keys masked: query 0 \"I\""));
  CHECK(grid.layout.query_labels[0] == "\u00D7 I");
  CHECK(has_ink(grid.image, grid.layout.legend));
}

TEST_CASE("head_grid: labels leave ink inside their margins and the border stays clean", "[render]") {
  const RenderedGrid grid = render_grid(fixture_b(), fonts());
  for (const PanelLayout& panel : grid.layout.panels) {
    CHECK(has_ink(grid.image, panel.query_labels));
    CHECK(has_ink(grid.image, panel.key_labels));
    CHECK(has_ink(grid.image, panel.title));
    CHECK(has_ink(grid.image, panel.query_axis_title));
    CHECK(has_ink(grid.image, panel.key_axis_title));
    CHECK(inside(panel.query_labels, panel.bounds));
    CHECK(inside(panel.key_labels, panel.bounds));
  }
  const Image& image = grid.image;
  const int w = image.width_px(), h = image.height_px();
  CHECK_FALSE(has_ink(image, {0, 0, w, 4}));
  CHECK_FALSE(has_ink(image, {0, h - 4, w, 4}));
  CHECK_FALSE(has_ink(image, {0, 0, 4, h}));
  CHECK_FALSE(has_ink(image, {w - 4, 0, 4, h}));
}

TEST_CASE("head_grid: automatic grid shapes and panels that never overlap", "[render]") {
  const auto [n_panels, rows, cols] = GENERATE(table<int, int, int>(
      {{1, 1, 1}, {3, 1, 3}, {4, 2, 2}, {8, 2, 4}, {12, 3, 4}}));
  GridRequest request = fixture_b();
  request.panels.assign(static_cast<std::size_t>(n_panels), request.panels.front());
  const GridLayout layout = layout_grid(request, fonts());
  CHECK(layout.panel_rows == rows);
  CHECK(layout.panel_cols == cols);
  const Rect image{0, 0, layout.width_px, layout.height_px};
  REQUIRE(layout.panels.size() == static_cast<std::size_t>(n_panels));
  for (std::size_t p = 0; p < layout.panels.size(); ++p) {
    CHECK(inside(layout.panels[p].bounds, image));
    CHECK(inside(layout.panels[p].cells, layout.panels[p].bounds));
    CHECK_FALSE(overlap(layout.panels[p].bounds, layout.colorbar));
    for (std::size_t q = p + 1; q < layout.panels.size(); ++q) {
      CHECK_FALSE(overlap(layout.panels[p].bounds, layout.panels[q].bounds));
    }
  }
  CHECK(inside(layout.colorbar, image));
}

TEST_CASE("head_grid: explicit cols are honoured and a 1x1 grid is the single-head image", "[render]") {
  GridRequest request = fixture_a();
  request.cols = 1;
  const GridLayout layout = layout_grid(request, fonts());
  CHECK(layout.panel_rows == 2);
  CHECK(layout.panel_cols == 1);
  request.panels.resize(1);
  request.panel_titles.resize(1);
  const RenderedGrid single = render_grid(request, fonts());
  CHECK(single.layout.panels.size() == 1);
  CHECK(centre(single, 0, 0, 2) == viridis(0.14520318));
}

TEST_CASE("head_grid: missing glyphs are warned once per code point, subword markers are not (BH-20)", "[render]") {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"\xE2\x96\x81\xE6\x88\x91", "\xC4\xA0" "cat", "\xC3\xA9",
                                               "\xE7\x8C\xAB"};
  request.panels = {share<Matrix>(Matrix::Constant(4, 4, 0.25f))};
  const RenderedGrid grid = render_grid(request, fonts());
  REQUIRE(grid.warnings.size() == 2);
  CHECK_THAT(grid.warnings[0], Catch::Contains("token 0 \"\xE2\x96\x81\xE6\x88\x91\"") &&
                                   Catch::Contains("U+6211") && Catch::Contains(ATTNVIZ_DEFAULT_FONT) &&
                                   Catch::Contains("U+FFFD"));
  CHECK_THAT(grid.warnings[1], Catch::Contains("token 3") && Catch::Contains("U+732B"));
  CHECK(grid.layout.key_labels[1] == "\xC4\xA0" "cat");  // the raw marker is drawn as-is
  CHECK_THAT(grid.warnings[0], !Catch::Contains(".ttf or "));  // these fonts have no fallback
  // The warning names where else it looked: here, fallback fonts pinned to one named file.
  const std::string mono = (std::filesystem::path(ATTNVIZ_DEFAULT_FONT).parent_path() / "DejaVuSansMono.ttf").string();
  const FontSet with_fallback({ATTNVIZ_DEFAULT_FONT}, FallbackFonts::only({mono}));
  const RenderedGrid searched = render_grid(request, with_fallback);
  REQUIRE(searched.warnings.size() == 2);
  CHECK_THAT(searched.warnings[0], Catch::Contains(std::string(ATTNVIZ_DEFAULT_FONT) + " or the fallback fonts " + mono + ";"));
}

// A new user's 👍🏽 (U+1F44D U+1F3FD, one grapheme cluster) gave two warnings, the second advising
// fonts-noto-core for the skin-tone modifier alone; pictures.md says a character is reported once.
TEST_CASE("head_grid: a character of several code points that no font has is one warning, advised by its first", "[render]") {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"I", "\U0001F44D\U0001F3FD", "\U0001F44D"};
  request.panels = {share<Matrix>(Matrix::Constant(3, 3, 1.0f / 3))};
  const RenderedGrid grid = render_grid(request, fonts());
  REQUIRE(grid.warnings.size() == 2);
  CHECK_THAT(grid.warnings[0], Catch::StartsWith("token 1 \"\U0001F44D\U0001F3FD\": no glyph for U+1F44D+U+1F3FD in ") &&
                                   Catch::Contains("fonts-symbola for emoji"));
  CHECK(missing_glyph_code(grid.warnings[0]) == "U+1F44D+U+1F3FD");
  CHECK_THAT(grid.warnings[1], Catch::StartsWith("token 2 \"\U0001F44D\": no glyph for U+1F44D in "));
}

TEST_CASE("head_grid: empty and whitespace tokens get visible placeholders", "[render]") {
  CHECK(display_label("") == "(empty)");
  CHECK(display_label(" ") == "\u2423");
  CHECK(display_label("\n") == "\u21B5");
  CHECK(display_label("a\tb") == "a\u21E5b");
  CHECK(display_label("\xE2\x96\x81the") == "\xE2\x96\x81the");
  CHECK(display_label(std::string(30, 'x')) == std::string(23, 'x') + "\u2026");
  CHECK(label_stride(3, 14) == 5);
  CHECK(label_stride(1, 14) == 20);
  CHECK(ordinal(4) == "4th");
  CHECK(ordinal(22) == "22nd");
}

TEST_CASE("head_grid: short inputs get large cells, 48 px or as tall as the colour bar", "[render]") {
  CHECK(layout_grid(numbered_tokens(10, 10), fonts()).cell_px == 48);
  CHECK(layout_grid(fixture_a(), fonts()).cell_px == 54);  // 3 rows: 3 x 54 = 162 px, the bar's height
  CHECK(layout_grid(numbered_tokens(32, 32), fonts()).cell_px == 15);  // 480 / 32: about matplotlib's grid size
}

TEST_CASE("head_grid: 600 tokens fit in 4096 px with thinned labels, and say so (BH-22)", "[render]") {
  GridRequest request = numbered_tokens(600, 600);
  const RenderedGrid grid = render_grid(request, fonts());
  const GridLayout& layout = grid.layout;
  CHECK(layout.width_px <= 4096);
  CHECK(layout.height_px <= 4096);
  CHECK(layout.block == 1);
  CHECK(layout.query_label_stride > 1);
  const int line_px = fonts().line_metrics(layout.label_font_px).line_height_px;
  CHECK(layout.query_label_stride * layout.cell_px >= line_px);  // labels never overlap
  CHECK(layout.key_label_stride * layout.cell_px >= line_px);
  const std::string note = "every " + ordinal(layout.query_label_stride) + " query and key label shown";
  CHECK(any_contains(grid.warnings, note));
  CHECK(any_contains(layout.legend_lines, note));
  CHECK(has_ink(grid.image, layout.legend));
}

// Issue 23: a reader of a thinned axis could not tell where "▁park" sat among 470 tokens.
TEST_CASE("head_grid: labels of a thinned axis carry their 0-based token index, and their margin fits them", "[render]") {
  const GridLayout thinned = layout_grid(numbered_tokens(470, 470), fonts());
  CHECK(thinned.width_px <= 4096);
  CHECK(thinned.height_px <= 4096);
  GridRequest eight = numbered_tokens(470, 470);
  eight.panels.resize(8, eight.panels.front());
  const GridLayout grid = layout_grid(eight, fonts());  // grid.png of 8 heads
  CHECK(grid.width_px <= 4096);
  CHECK(grid.height_px <= 4096);
  REQUIRE(thinned.query_label_stride == 2);
  REQUIRE(thinned.key_label_stride == 2);
  CHECK(drawn_query_label(thinned, 212) == "#212 t212");
  CHECK(drawn_key_label(thinned, 0) == "#0 t0");
  const int widest = fonts().text_width_px("#468 t468", thinned.label_font_px);
  CHECK(thinned.panels[0].query_labels.width_px >= widest);
  CHECK(thinned.panels[0].key_labels.height_px >= widest);
  const GridLayout full = layout_grid(numbered_tokens(32, 32), fonts());
  REQUIRE(full.query_label_stride == 1);
  CHECK(drawn_query_label(full, 12) == "t12");
  CHECK(drawn_key_label(full, 12) == "t12");
}

TEST_CASE("head_grid: 20000 tokens are downsampled by max over blocks within the size limit (BH-22)", "[render]") {
  GridRequest request = numbered_tokens(20000, 200);
  Matrix peaked = *request.panels.front();
  peaked(12345, 77) = 0.9f;  // a single peak survives the max
  request.panels.front() = share(std::move(peaked));
  const RenderedGrid grid = render_grid(request, fonts());
  const GridLayout& layout = grid.layout;
  CHECK(layout.block > 1);
  CHECK(layout.cell_px == 1);
  CHECK(layout.width_px <= 4096);
  CHECK(layout.height_px <= 4096);
  CHECK(layout.drawn_rows == (20000 + layout.block - 1) / layout.block);
  CHECK(centre(grid, 0, 12345, 77) == viridis(0.9));
  const std::string note = "each pixel shows the max over " + std::to_string(layout.block) + " \u00D7 " +
                           std::to_string(layout.block) + " cells";
  CHECK(any_contains(grid.warnings, note));
  CHECK(any_contains(layout.legend_lines, note));
}

TEST_CASE("head_grid: refuses before allocating when over the memory or size limit", "[render][errors]") {
  GridRequest request = numbered_tokens(600, 600);
  request.max_memory_bytes = 1e6;
  CHECK_THROWS_AS(layout_grid(request, fonts()), LimitError);
  CHECK_THROWS_WITH(render_grid(request, fonts()), Catch::Contains("MiB") && Catch::Contains("px grid image"));
  request = fixture_a();
  request.max_size_px = 8;  // not even a thumbnail: 2 px margins, 4 px between the panels
  CHECK_THROWS_AS(render_grid(request, fonts()), LimitError);
  CHECK_THROWS_WITH(render_grid(request, fonts()), Catch::Contains("over the limit of 8 px") &&
                                                       Catch::Contains("raise --max-size") &&
                                                       !Catch::Contains("fewer heads"));
  request.max_size_px = 1 << 20;  // capped at the hard limit
  CHECK(layout_grid(request, fonts()).width_px <= kMaxSidePx);
}

TEST_CASE("head_grid: an unknown colour map is a usage error", "[render][errors]") {
  GridRequest request = fixture_a();
  request.cmap = "jet";
  CHECK_THROWS_AS(render_grid(request, fonts()), UsageError);
}

TEST_CASE("head_grid: values are printed in big cells and omitted with a note in small ones", "[render]") {
  GridRequest request = fixture_a();
  request.annotate = true;
  const RenderedGrid grid = render_grid(request, fonts());
  CHECK(grid.layout.annotation_font_px > 0);
  const Rect& cells = grid.layout.panels[0].cells;
  const Rgb background = viridis(0.85056513);  // cell (0, 1): light green, so black text
  int text = 0;
  for (int y = cells.y_px; y < cells.y_px + grid.layout.cell_px; ++y) {
    for (int x = cells.x_px + grid.layout.cell_px; x < cells.x_px + 2 * grid.layout.cell_px; ++x) {
      text += grid.image.at(x, y) == Rgb{0, 0, 0};
    }
  }
  CHECK(text > 0);
  CHECK(grid.image.at(cells.x_px + grid.layout.cell_px + 1, cells.y_px + 1) == background);
  GridRequest big = numbered_tokens(300, 300);
  big.annotate = true;
  const RenderedGrid small = render_grid(big, fonts());
  CHECK(small.layout.annotation_font_px == 0);
  CHECK(any_contains(small.warnings, "values not printed"));
}

TEST_CASE("head_grid: the same request gives identical pixels", "[render]") {
  GridRequest request = fixture_a();
  request.allowed = share(causal(3));
  request.annotate = true;
  const RenderedGrid first = render_grid(request, fonts());
  const RenderedGrid second = render_grid(request, fonts());
  CHECK(first.image == second.image);
  CHECK(first.warnings == second.warnings);
}

// Issue 15: padding query rows were drawn like real rows (only padded keys were hatched).
TEST_CASE("head_grid: a padding query's row keeps its colours under white hatching and is marked and listed",
          "[render]") {
  GridRequest request = fixture_a();
  request.query_tokens = request.key_tokens = {"I", "saw", "<pad>"};
  MaskMatrix allowed = MaskMatrix::Ones(3, 3);
  allowed.col(2).setZero();  // the padded key
  request.allowed = share(allowed);
  request.query_mask = {1, 1, 0};
  const RenderedGrid grid = render_grid(request, fonts());
  const Rect& cells = grid.layout.panels[0].cells;
  const int cell_px = grid.layout.cell_px;
  // Row 2 (padding), cell (2, 0): its colour and white hatch lines, nothing else.
  const Rgb colour = viridis(0.26807470);
  int coloured = 0, white = 0, other = 0;
  for (int y = cells.y_px + 2 * cell_px; y < cells.y_px + 3 * cell_px; ++y) {
    for (int x = cells.x_px; x < cells.x_px + cell_px; ++x) {
      const Rgb c = grid.image.at(x, y);
      coloured += c == colour;
      white += c == kWhite;
      other += c != colour && c != kWhite;
    }
  }
  CHECK(other == 0);
  CHECK(coloured > white);
  CHECK(white > cell_px);
  // Row 1 (a real token) has no white pixel in its cells.
  for (int y = cells.y_px + cell_px; y < cells.y_px + 2 * cell_px; ++y) {
    for (int x = cells.x_px; x < cells.x_px + 2 * cell_px; ++x) REQUIRE_FALSE(grid.image.at(x, y) == kWhite);
  }
  CHECK(grid.layout.query_labels[2] == "\u00D7 <pad>");
  CHECK(grid.layout.query_labels[1] == "saw");
  CHECK(any_contains(grid.layout.legend_lines,
                     "padding query, white-hatched row (computed, but not a real token): query 2 \"<pad>\""));
}

// Issue 15: a single-cell heatmap got a colour bar many times its height.
TEST_CASE("head_grid: a matrix of few rows is drawn as tall as its colour bar", "[render]") {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"only"};
  request.panels = {share(matrix(1, 1, {1.0f}))};
  const RenderedGrid single = render_grid(request, fonts());
  const Rect& cells = single.layout.panels[0].cells;
  CHECK(cells.height_px >= single.layout.colorbar.height_px);
  CHECK(single.layout.colorbar.height_px == 160);
  CHECK(single.layout.cell_px == 160);
  CHECK(centre(single, 0, 0, 0) == viridis(1.0));
  const RenderedGrid three = render_grid(fixture_a(), fonts());  // 3 rows: 54 px cells, not 48
  CHECK(three.layout.cell_px * 3 >= three.layout.colorbar.height_px);
  CHECK(three.layout.panels[0].cells.height_px == three.layout.colorbar.height_px);
}

// Issue 15: compare drew cells masked in one run only as masked in both ("not attended"), hiding
// what the other run computed there. Each panel now has its own mask, and such cells get their
// own hatch (the other diagonal, darker) and legend line.
TEST_CASE("head_grid: cells masked in one run only get their own hatch and legend line", "[render]") {
  GridRequest request = fixture_a();  // panel 0: run A (no mask); panel 1: run B (causal)
  const MaskMatrix all = MaskMatrix::Ones(3, 3);
  const MaskMatrix b_mask = causal(3);
  request.allowed = share(b_mask);  // allowed in both runs
  request.panel_allowed = {share(all), share(b_mask)};
  request.one_run_masked = share(MaskMatrix((b_mask.array() == 0).cast<std::uint8_t>()));
  request.one_run_legend = "cross-hatched: masked by B only";
  const RenderedGrid grid = render_grid(request, fonts());
  CHECK(centre(grid, 0, 0, 2) == viridis(0.14520318));  // run A computed the cell: its colour
  const Rect& cells = grid.layout.panels[1].cells;
  const int cell_px = grid.layout.cell_px;
  int fill = 0, one_run = 0, other = 0;
  for (int y = cells.y_px; y < cells.y_px + cell_px; ++y) {  // run B's cell (0, 2)
    for (int x = cells.x_px + 2 * cell_px; x < cells.x_px + 3 * cell_px; ++x) {
      const Rgb c = grid.image.at(x, y);
      fill += c == kMaskedFill;
      one_run += c == kOneRunHatch;
      other += c != kMaskedFill && c != kOneRunHatch;
      // The one-run hatch runs along x − y: pixel (x, y) is hatched iff (x − y) % period == 0.
      const int dx = x - cells.x_px, dy = y - cells.y_px;
      REQUIRE((c == kOneRunHatch) == (((dx - dy) % kHatchPeriodPx + kHatchPeriodPx) % kHatchPeriodPx == 0));
    }
  }
  CHECK(other == 0);
  CHECK(one_run > cell_px);
  CHECK(fill > one_run);
  CHECK(grid.layout.legend_lines == std::vector<std::string>{"cross-hatched: masked by B only"});
  CHECK(grid.layout.legend_swatches == std::vector<std::uint8_t>{kCellMaskedInOneRun + 1});
}

// Issue 15: compare's divergence colour bar stood far from its 2 × 2 matrix (beyond the panel
// title, which is wider than the cells) and was taller than it.
TEST_CASE("head_grid: the colour bar stands beside the cells even under a wider title", "[render]") {
  GridRequest request;
  request.query_tokens = request.key_tokens = {"L0H3", "L0H1"};
  request.panels = {share(matrix(2, 2, {0.0f, 0.227f, 0.227f, 0.0f}))};
  request.panel_titles = {"Jensen–Shannon divergence between heads"};
  request.scale = ScaleMode::Shared;
  const RenderedGrid grid = render_grid(request, fonts());
  const Rect& cells = grid.layout.panels[0].cells;
  CHECK(grid.layout.panels[0].title.width_px > cells.width_px);
  CHECK(grid.layout.colorbar.x_px - cells.right_px() == 24);  // kColorbarGapPx
  CHECK(grid.layout.colorbar.height_px == cells.height_px);
  CHECK(grid.image.width_px() >= grid.layout.panels[0].title.right_px());
}

// Issue 24 §4: `--max-size 300` on an 8-head grid was refused with advice ("show fewer heads")
// that heatmaps cannot follow. Below the size where text fits, the cells alone, said so.
TEST_CASE("head_grid: below the size where text fits, a thumbnail of the cells alone, said in a warning",
          "[render]") {
  GridRequest request = numbered_tokens(6, 6);
  Matrix values(6, 6);
  for (int i = 0; i < 36; ++i) values(i / 6, i % 6) = 0.02f * static_cast<float>(i);
  request.panels.assign(8, share<Matrix>(Matrix(values)));
  request.panel_titles.assign(8, "L0H0 \u00B7 head 0 of 8");
  request.figure_title = "stories260K \u00B7 layer 0 \u00B7 self-attention weights";
  request.query_tokens[2] = "\u732B";  // no glyph in DejaVu Sans: but no text is drawn
  request.max_size_px = 300;
  const RenderedGrid grid = render_grid(request, fonts());
  const GridLayout& layout = grid.layout;
  REQUIRE(layout.thumbnail);
  CHECK(layout.width_px <= 300);
  CHECK(layout.height_px <= 300);
  CHECK(layout.block == 1);
  CHECK(layout.cell_px >= 8);  // the cells grow into the room the text would have taken
  CHECK(layout.legend_lines.empty());
  CHECK(layout.figure_title_lines.empty());
  CHECK(layout.labelled_width_px > 300);  // max(w, h) of the smallest labelled layout
  REQUIRE(grid.warnings.size() == 1);
  CHECK_THAT(grid.warnings[0], Catch::StartsWith("the grid of 8 heads is drawn as a " + std::to_string(layout.width_px) +
                                                 " \u00D7 " + std::to_string(layout.height_px) +
                                                 " px thumbnail of its cells alone") &&
                                   Catch::Contains("raise --max-size"));
  for (std::size_t p = 0; p < layout.panels.size(); ++p) {
    for (std::size_t q = p + 1; q < layout.panels.size(); ++q) CHECK_FALSE(overlap(layout.panels[p].cells, layout.panels[q].cells));
  }
  // The cells keep their colours; outside the cells and their frames the image is blank.
  CHECK(centre(grid, 0, 1, 4) == viridis(values(1, 4)));
  CHECK(centre(grid, 7, 5, 5) == viridis(values(5, 5)));
  const Rect& first = layout.panels[0].cells;
  CHECK_FALSE(has_ink(grid.image, {first.right_px() + 1, first.y_px, layout.panels[1].cells.x_px - first.right_px() - 2,
                                   first.height_px}));
  request.max_size_px = layout.labelled_width_px > layout.labelled_height_px ? layout.labelled_width_px
                                                                              : layout.labelled_height_px;
  CHECK_FALSE(layout_grid(request, fonts()).thumbnail);  // the size the warning names shows the text
}

// Issue 24 §4: an empty text's 1 × 1 panels have titles wider than their cells; the colour bar
// stood beside the cells and covered the second row's last title.
TEST_CASE("head_grid: the colour bar covers no title, label or axis title of any panel row", "[render]") {
  const int n_panels = GENERATE(2, 8, 12);
  GridRequest request;
  request.query_tokens = request.key_tokens = {"<s>"};
  request.panels.assign(static_cast<std::size_t>(n_panels), share<Matrix>(Matrix::Constant(1, 1, 1.0f)));
  for (int p = 0; p < n_panels; ++p) request.panel_titles.push_back("L0H" + std::to_string(p) + " \u00B7 head of 8");
  request.cols = n_panels == 2 ? 1 : 0;
  const RenderedGrid grid = render_grid(request, fonts());
  REQUIRE(grid.layout.panel_rows > 1);
  for (const PanelLayout& panel : grid.layout.panels) {
    CHECK(panel.title.width_px > panel.cells.width_px);
    for (const Rect& text : {panel.title, panel.key_labels, panel.key_axis_title, panel.bounds}) {
      CHECK_FALSE(overlap(text, grid.layout.colorbar));
    }
  }
}

// Issue 23: --exclude-sink takes the range without key 0 and queries 0–3, draws key 0 clipped at
// the top colour and marks it; the legend says so.
TEST_CASE("head_grid: exclude_sink ranges without the sink, draws it clipped and marks it", "[render]") {
  GridRequest request = numbered_tokens(10, 10);
  Matrix w = Matrix::Constant(10, 10, 0.02f);
  w.col(0).setConstant(0.9f);
  w(1, 1) = 0.6f;   // an early query: left out of the range too
  w(7, 4) = 0.2f;
  request.panels = {share(w)};
  request.scale = ScaleMode::Head;
  request.exclude_sink = true;
  const RenderedGrid grid = render_grid(request, fonts());
  REQUIRE(grid.layout.ranges[0].vmin == 0.02f);
  REQUIRE(grid.layout.ranges[0].vmax == 0.2f);
  CHECK(centre(grid, 0, 7, 0) == viridis(1.0));   // 0.9: clipped at the top of the range
  CHECK(centre(grid, 0, 7, 4) == viridis(1.0));
  CHECK(centre(grid, 0, 7, 5) == viridis(0.0));
  const Rect& cells = grid.layout.panels[0].cells;
  CHECK(grid.image.at(cells.x_px + 1, cells.y_px - 3) == kMarkColour);
  CHECK(grid.image.at(cells.x_px + grid.layout.cell_px + 2, cells.y_px - 3) != kMarkColour);
  CHECK(any_contains(grid.layout.legend_lines, "red bar over key 0: the sink column"));
  request.exclude_sink = false;
  CHECK(layout_grid(request, fonts()).ranges[0].vmax == 0.9f);
}

// Issue 23: with --generate a red line marks the prompt's end across rows and columns; rows of a
// window that starts past the text's beginning are labelled with their positions.
TEST_CASE("head_grid: the prompt's end is a line across rows and columns, said in the legend", "[render]") {
  GridRequest request = numbered_tokens(10, 10);
  request.prompt_query_rows = request.prompt_key_cols = 4;
  const RenderedGrid grid = render_grid(request, fonts());
  const Rect& cells = grid.layout.panels[0].cells;
  const int at = 4 * grid.layout.cell_px;
  CHECK(grid.image.at(cells.x_px + 2, cells.y_px + at) == kMarkColour);
  CHECK(grid.image.at(cells.x_px + 2, cells.y_px + at + 1) != kMarkColour);
  CHECK(grid.image.at(cells.x_px + at, cells.bottom_px() - 2) == kMarkColour);
  CHECK(any_contains(grid.layout.legend_lines,
                     "red lines: the prompt ends after token 3; rows below and columns right of it are generated tokens"));
  GridRequest window = numbered_tokens(3, 10);
  window.first_query_index = 7;
  window.prompt_key_cols = 7;
  const GridLayout layout = layout_grid(window, fonts());
  CHECK(drawn_query_label(layout, 0) == "#7 t0");
  CHECK(drawn_key_label(layout, 0) == "t0");
  CHECK(any_contains(layout.legend_lines, "red line: the prompt ends after token 6; columns right of it are generated tokens"));
}
