// Value ranges, colour positions, ticks and captions of the four scale modes (BH-19).
#include <catch2/catch.hpp>

#include "render/color_scale.hpp"

using namespace attnviz;

TEST_CASE("color_scale: a constant range maps to the middle, never dividing by zero", "[render]") {
  CHECK(color_position({0.5, 0.5}, 0.5) == 0.5);
  CHECK(color_position({0, 1}, 0.25) == 0.25);
  CHECK(color_position({0, 1}, 2.0) == 1.0);
  CHECK(color_position({-1, 1}, 0.0) == 0.5);
}

TEST_CASE("color_scale: ranges per mode ignore masked cells", "[render]") {
  Matrix a(2, 2), b(2, 2);
  a << 0.1f, 0.9f, 0.3f, 0.4f;
  b << -0.5f, 0.2f, 0.2f, 0.2f;
  MaskMatrix allowed(2, 2);
  allowed << 1, 0, 1, 1;  // hides a's 0.9
  const auto head = panel_ranges({borrow(a), borrow(b)}, allowed, ScaleMode::Head);
  CHECK(head[0].vmin == 0.1f);
  CHECK(head[0].vmax == 0.4f);
  CHECK(head[1].vmin == -0.5f);
  const auto shared = panel_ranges({borrow(a), borrow(b)}, allowed, ScaleMode::Shared);
  CHECK(shared[0] == shared[1]);
  CHECK(shared[0].vmin == -0.5f);
  CHECK(shared[0].vmax == 0.4f);
  const auto symmetric = panel_ranges({borrow(a), borrow(b)}, allowed, ScaleMode::Symmetric);
  CHECK(symmetric[0].vmin == -0.5f);
  CHECK(symmetric[0].vmax == 0.5f);
  CHECK(panel_ranges({borrow(a)}, MaskMatrix(), ScaleMode::Fixed)[0] == ValueRange{0, 1});
}

TEST_CASE("color_scale: captions name the scale and its real range", "[render]") {
  const std::vector<ValueRange> shared = {{0.02, 0.91}, {0.02, 0.91}};
  const ColorbarScale bar = colorbar_scale(ScaleMode::Shared, shared);
  CHECK(bar.caption == "shared scale 0.02\u20130.91");
  REQUIRE(bar.ticks.size() == 4);
  CHECK(bar.ticks.front().label == "0.2");
  CHECK(bar.ticks.back().label == "0.8");
  CHECK(colorbar_scale(ScaleMode::Symmetric, {{-0.4, 0.4}}).caption == "symmetric \u00B10.4");
  CHECK(colorbar_scale(ScaleMode::Shared, {{0.5, 0.5}}).caption.find("0.5\u20130.5") != std::string::npos);
  const ColorbarScale heads = colorbar_scale(ScaleMode::Head, {{0, 0.5}, {0.1, 0.2}});
  CHECK(heads.ticks.front().label == "min");
  CHECK(heads.ticks.back().label == "max");
  CHECK(colorbar_scale(ScaleMode::Head, {{0.25, 0.75}}).caption == "per-head min\u2013max 0.25\u20130.75");
  // Issue 24 §4: the census's panels are statistics, not heads.
  CHECK(colorbar_scale(ScaleMode::Head, {{0, 0.5}, {0.1, 0.2}}, "statistic").caption ==
        "per-statistic min\u2013max (each panel's range in its title)");
}

// Issue 15: --scale head titles printed a head's minimum weight as "1.03e-11".
TEST_CASE("color_scale: tiny and huge values are written as a figure writes them, not as printf does",
          "[render]") {
  CHECK(format_value(0.912345) == "0.912");
  CHECK(format_value(1.03e-11) == "1.03×10⁻¹¹");
  CHECK(format_value(1e-5) == "10⁻⁵");
  CHECK(format_value(-2.5e-7) == "-2.5×10⁻⁷");
  CHECK(format_value(2.5e6) == "2.5×10⁶");
  CHECK(format_value(-0.0) == "0");
  CHECK(format_range({1.03e-11, 0.98}) == "1.03×10⁻¹¹–0.98");
  CHECK(format_range({8.67e-43, 1.0}) == "0–1");  // float32 noise beside 1 reads as 0 (a caption once said 8.67×10⁻⁴³–1)
}

// Issue 23: --scale log and --exclude-sink.
TEST_CASE("color_scale: log scale maps log10 of the weight over 1e-4..1, below the floor to the first colour", "[render]") {
  const ValueRange log = panel_ranges({share<Matrix>(Matrix::Constant(2, 2, 0.5f))}, {}, ScaleMode::Log).front();
  CHECK(log == ValueRange{kLogFloor, 1, true});
  CHECK_THAT(color_position(log, 1e-2), Catch::Matchers::WithinAbs(0.5, 1e-12));
  CHECK_THAT(color_position(log, 1e-3), Catch::Matchers::WithinAbs(0.25, 1e-12));
  CHECK(color_position(log, 1.0) == 1.0);
  CHECK(color_position(log, 0.0) == 0.0);
  CHECK(color_position(log, 1e-7) == 0.0);
  CHECK_THAT(value_at_position(log, 0.75), Catch::Matchers::WithinAbs(0.1, 1e-12));
  CHECK_THAT(value_at_position({0.2, 0.6}, 0.5), Catch::Matchers::WithinAbs(0.4, 1e-12));
  const ColorbarScale bar = colorbar_scale(ScaleMode::Log, {log});
  REQUIRE(bar.ticks.size() == 5);
  CHECK(bar.ticks.front().label == "0.0001");
  CHECK(bar.ticks.back().label == "1");
  CHECK(bar.caption == "log\u2081\u2080 scale, floor 0.0001 (below: first colour)");
}

TEST_CASE("color_scale: without_sink leaves key 0 and queries 0-3 out of a range", "[render]") {
  Matrix w = Matrix::Constant(6, 6, 0.1f);
  w(5, 0) = 0.9f;   // the sink column
  w(2, 1) = 0.8f;   // an early query row
  w(5, 3) = 0.3f;
  const MaskMatrix cells = without_sink({}, 6, 6);
  CHECK(cells.col(0).sum() == 0);
  CHECK(cells.topRows(kSinkQueryRows).sum() == 0);
  CHECK(cells.bottomRightCorner(2, 5).minCoeff() == 1);
  const ValueRange range = panel_ranges({borrow(w)}, cells, ScaleMode::Head).front();
  CHECK(range.vmin == 0.1f);
  CHECK(range.vmax == 0.3f);
  MaskMatrix causal = MaskMatrix::Ones(6, 6).triangularView<Eigen::Lower>();
  CHECK(without_sink(causal, 6, 6)(5, 5) == 1);
  CHECK(without_sink(causal, 6, 6)(4, 5) == 0);
  // --rows generated from position 2: rows 0 and 1 are positions 2 and 3, left out; row 2 stays.
  const MaskMatrix window = without_sink({}, 4, 6, 2);
  CHECK(window.topRows(2).sum() == 0);
  CHECK(window.row(2).sum() == 5);
  CHECK(without_sink({}, 4, 6, 9).rightCols(5).minCoeff() == 1);
}
