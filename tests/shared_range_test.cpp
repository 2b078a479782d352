// Per-head images under --scale shared keep the grid's range (issue #3): one head drawn alone
// must not fall back to its own min–max.
#include "render/colormap.hpp"
#include "render/head_grid.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::matrix;

TEST_CASE("head_grid: a range override draws one panel on the shared scale of a grid", "[render]") {
  const FontSet fonts;
  GridRequest grid;
  grid.query_tokens = grid.key_tokens = {"x", "y"};
  grid.panels = {share(matrix({{0.5, 0.5}, {0.5, 0.5}})), share(matrix({{0.9, 0.1}, {0.3, 0.7}}))};
  grid.scale = ScaleMode::Shared;
  const RenderedGrid both = render_grid(grid, fonts);
  const ValueRange shared_range = both.layout.ranges.front();
  REQUIRE_THAT(shared_range.vmin, Catch::Matchers::WithinAbs(0.1, 1e-7));
  REQUIRE_THAT(shared_range.vmax, Catch::Matchers::WithinAbs(0.9, 1e-7));

  GridRequest alone = grid;
  alone.panels = {grid.panels[0]};
  const RenderedGrid own_range = render_grid(alone, fonts);
  alone.range = shared_range;
  const RenderedGrid shared = render_grid(alone, fonts);

  const Colormap& viridis = colormap_by_name("viridis");
  const Point centre = cell_centre_px(shared.layout, 0, 0, 0);
  CHECK(shared.image.at(centre.x_px, centre.y_px) == viridis.at(color_position(shared_range, 0.5)));
  const Point in_grid = cell_centre_px(both.layout, 0, 0, 0);
  CHECK(both.image.at(in_grid.x_px, in_grid.y_px) == shared.image.at(centre.x_px, centre.y_px));
  // Without the override a constant panel is its own flat range: the mid colour too, but the
  // caption says so; the override keeps the grid's caption.
  CHECK(shared.layout.colorbar_scale.caption == both.layout.colorbar_scale.caption);
  CHECK(own_range.layout.colorbar_scale.caption != both.layout.colorbar_scale.caption);
}
