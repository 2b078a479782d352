// The layer × head overview picture (issue 13): maps where they should be, the colours of
// their cells, the mean column apart, and the 32 × 32 heads × 2048 tokens case within 4096 px.
#include "render/overview.hpp"

#include "render/overview_collector.hpp"

#include "render/colormap.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::matrix;

namespace {

DrawnCells cells_of(const Matrix& values) { return {values, MaskMatrix::Ones(values.rows(), values.cols())}; }

OverviewRequest small_request() {
  OverviewRequest r;
  r.row_labels = {"L0", "L1"};
  r.column_labels = {"H0", "H1", "H2"};
  for (int layer = 0; layer < 2; ++layer) {
    std::vector<DrawnCells> heads;
    for (int h = 0; h < 3; ++h) heads.push_back(cells_of(matrix({{1, 0}, {0.1 * (h + 1) + 0.5 * layer, 0.9 - 0.1 * h - 0.5 * layer}})));
    r.maps.push_back(heads);
    r.means.push_back(cells_of(matrix({{1, 0}, {0.25, 0.75}})));
  }
  r.mean_label = "mean of 3 heads";
  r.n_q = r.n_k = 2;
  r.figure_title = "test";
  return r;
}

}  // namespace

TEST_CASE("overview: layers are rows from the top, heads columns, the mean column apart", "[overview][render]") {
  const OverviewRequest request = small_request();
  const RenderedOverview o = render_overview(request, FontSet());
  REQUIRE(o.map_rects.size() == 2);
  REQUIRE(o.map_rects[0].size() == 4);  // 3 heads and the mean
  CHECK(o.map_rects[0][0].y_px < o.map_rects[1][0].y_px);
  CHECK(o.map_rects[0][0].x_px < o.map_rects[0][1].x_px);
  const int head_gap = o.map_rects[0][2].x_px - o.map_rects[0][1].right_px();
  const int mean_gap = o.map_rects[0][3].x_px - o.map_rects[0][2].right_px();
  CHECK(mean_gap > head_gap);
  CHECK(o.block == 1);
  const Colormap& viridis = colormap_by_name("viridis");
  for (std::size_t layer = 0; layer < 2; ++layer) {
    for (std::size_t c = 0; c < 4; ++c) {
      const Matrix& values = c < 3 ? request.maps[layer][c].values : request.means[layer].values;
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          const Rect& map = o.map_rects[layer][c];
          INFO("layer " << layer << " column " << c << " cell " << i << "," << j);
          CHECK(o.image.at(map.x_px + j * o.cell_px + o.cell_px / 2, map.y_px + i * o.cell_px + o.cell_px / 2) ==
                viridis.at(values(i, j)));
        }
      }
    }
  }
}

TEST_CASE("overview: 32 layers x 32 heads at 2048 tokens fit 4096 px and say they are aggregated", "[overview][render]") {
  // What a model run keeps: each map aggregated to overview_cells_per_side before the picture.
  const int per_side = overview_cells_per_side(33, 4096);
  const int base_block = (2048 + per_side - 1) / per_side;
  const int drawn = (2048 + base_block - 1) / base_block;
  OverviewRequest r;
  r.n_q = r.n_k = 2048;
  r.base_block = base_block;
  r.mean_label = "mean of 32 heads";
  for (int h = 0; h < 32; ++h) r.column_labels.push_back("H" + std::to_string(h));
  const DrawnCells map = cells_of(Matrix::Constant(drawn, drawn, 0.5f));
  for (int layer = 0; layer < 32; ++layer) {
    r.row_labels.push_back("L" + std::to_string(layer));
    r.maps.emplace_back(32, map);
    r.means.push_back(map);
  }
  const RenderedOverview o = render_overview(r, FontSet());
  CHECK(o.image.width_px() <= 4096);
  CHECK(o.image.height_px() <= 4096);
  CHECK(o.block >= base_block);
  REQUIRE(o.notes.size() >= 2);
  CHECK(o.notes[1].find("each pixel shows the max over " + std::to_string(o.block)) == 0);
}

TEST_CASE("overview: maps that cannot fit even as a thumbnail at 1 px are refused with the limit",
          "[overview][render][errors]") {
  OverviewRequest r = small_request();
  r.max_size_px = 8;
  CHECK_THROWS_WITH(render_overview(r, FontSet()), Catch::Matchers::Contains("over the limit of 8") &&
                                                       Catch::Matchers::Contains("raise --max-size"));
}

// Issue 24 §4: an 8-head model's overview was refused at --max-size 600 (its legend line alone
// was wider) and below; the title and legend now wrap, and below the size where any text fits
// the maps are drawn alone, said in a warning.
TEST_CASE("overview: the title and legend wrap within the size limit", "[overview][render]") {
  OverviewRequest r = small_request();
  r.figure_title = "stories260K \u00B7 5 layers \u00D7 8 heads \u00B7 self-attention \u00B7 \u201COnce upon a time\u201D";
  r.max_size_px = 400;
  const RenderedOverview o = render_overview(r, FontSet());
  CHECK_FALSE(o.thumbnail);
  CHECK(o.image.width_px() <= 400);
  CHECK(o.image.height_px() <= 400);
  CHECK(o.warnings.empty());
}

TEST_CASE("overview: below the size where text fits, a thumbnail of the maps alone, said in a warning",
          "[overview][render]") {
  OverviewRequest r = small_request();
  r.max_size_px = 60;
  const RenderedOverview o = render_overview(r, FontSet());
  REQUIRE(o.thumbnail);
  CHECK(o.image.width_px() <= 60);
  CHECK(o.image.height_px() <= 60);
  CHECK(o.block == 1);
  REQUIRE(o.warnings.size() == 1);
  CHECK_THAT(o.warnings[0], Catch::Matchers::StartsWith("drawn as a " + std::to_string(o.image.width_px()) + " \u00D7 " +
                                                        std::to_string(o.image.height_px()) + " px thumbnail of its maps alone") &&
                                Catch::Matchers::Contains("raise --max-size"));
  const Colormap& viridis = colormap_by_name("viridis");
  for (std::size_t layer = 0; layer < 2; ++layer) {
    for (std::size_t c = 0; c < 4; ++c) {
      const Matrix& values = c < 3 ? r.maps[layer][c].values : r.means[layer].values;
      const Rect& map = o.map_rects[layer][c];
      INFO("layer " << layer << " column " << c);
      CHECK(o.image.at(map.x_px + o.cell_px + o.cell_px / 2, map.y_px + o.cell_px + o.cell_px / 2) == viridis.at(values(1, 1)));
    }
  }
  // Only maps: the row of pixels between the two layers is white.
  const int gap_y = o.map_rects[0][0].bottom_px();
  for (int x = 0; x < o.image.width_px(); ++x) CHECK(o.image.at(x, gap_y) == Rgb{255, 255, 255});
}

TEST_CASE("overview: what a model run keeps per map is what a thumbnail at that size could show", "[overview]") {
  // 9 columns (8 heads and the mean) at 300 px: (300 - 2 * 2 - 8) / 9 - 4 = 28 cells per side, not
  // the 1 that reserving room for labels left (every map arrived as one aggregated cell).
  CHECK(overview_cells_per_side(9, 300) == 28);
  CHECK(overview_cells_per_side(33, 4096) == 119);
}

TEST_CASE("overview: the title shows the text on one line, shortened", "[overview]") {
  CHECK(title_text("Once upon a time") == "\u201COnce upon a time\u201D");
  CHECK(title_text("abcdef", 3) == "\u201Cabc\u2026\u201D");
  CHECK(title_text("a\nb\tc\x1b", 10) == "\u201Ca\u21B5b\u21E5c \u201D");
  CHECK(title_text("\u00E9\u00E9\u00E9", 2) == "\u201C\u00E9\u00E9\u2026\u201D");  // code points, not bytes
}

// Issue 24 §4: an empty text was quoted as the model's name; an encoder-decoder's titles quoted
// the translation alone, not the source it came from.
TEST_CASE("overview: titles quote the run's text, the source and its translation, or say it is empty", "[overview]") {
  ModelRunInfo info;
  info.model.name = "stories260K";
  CHECK(run_text_title(info) == "empty text");
  info.text = "Once upon";
  CHECK(run_text_title(info) == "\u201COnce upon\u201D");
  info.model.name = "aren-translit";
  info.source_tokens = {"\u0645", "\u0627"};
  info.source_text = "\u0645\u0627";
  info.text = "ma";
  CHECK(run_text_title(info) == "\u201C\u0645\u0627\u201D \u2192 \u201Cma\u201D");
}
