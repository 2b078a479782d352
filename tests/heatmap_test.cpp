// render/heatmap: block aggregation of long inputs (max, or largest magnitude for signed data),
// with masked cells left out, checked on hand values.
#include "render/heatmap.hpp"

#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::matrix;

TEST_CASE("aggregate_cells: 2 x 2 blocks keep the max of allowed cells, edge blocks are partial", "[render]") {
  const Matrix values = matrix({{0.1, 0.9, 0.2, 0.3, 0.5},
                                {0.4, 0.0, 0.8, 0.1, 0.6},
                                {0.7, 0.2, 0.05, 0.0, 0.25}});
  MaskMatrix allowed = MaskMatrix::Ones(3, 5);
  allowed(0, 1) = 0;  // hides the 0.9: block (0, 0) is then max(0.1, 0.4, 0.0) = 0.4
  allowed(2, 2) = 0;
  allowed(2, 3) = 0;  // block (1, 1) has no allowed cell: masked
  const DrawnCells drawn = aggregate_cells(values, allowed, 2, false);
  REQUIRE(drawn.values.rows() == 2);
  REQUIRE(drawn.values.cols() == 3);
  CHECK(drawn.values(0, 0) == 0.4f);
  CHECK(drawn.values(0, 1) == 0.8f);
  CHECK(drawn.values(0, 2) == 0.6f);
  CHECK(drawn.values(1, 0) == 0.7f);
  CHECK(drawn.allowed(1, 1) == 0);
  CHECK(drawn.values(1, 2) == 0.25f);
  CHECK(drawn.allowed(0, 0) == 1);
  CHECK(drawn.allowed(1, 2) == 1);
}

TEST_CASE("aggregate_cells: signed data keeps the value of largest magnitude with its sign", "[render]") {
  const Matrix values = matrix({{0.1, -0.6, 0.3}, {0.5, 0.2, -0.1}});
  const DrawnCells drawn = aggregate_cells(values, MaskMatrix(), 2, true);
  REQUIRE(drawn.values.cols() == 2);
  CHECK(drawn.values(0, 0) == -0.6f);
  CHECK(drawn.values(0, 1) == 0.3f);
  const DrawnCells unsigned_max = aggregate_cells(values, MaskMatrix(), 2, false);
  CHECK(unsigned_max.values(0, 0) == 0.5f);
}

TEST_CASE("aggregate_cells: block 1 is the matrix itself", "[render]") {
  const Matrix values = matrix({{0.25, 0.75}, {1.0, 0.0}});
  const DrawnCells drawn = aggregate_cells(values, MaskMatrix(), 1, false);
  CHECK(drawn.values == values);
  CHECK((drawn.allowed.array() == 1).all());
}

TEST_CASE("cell_value_text: 2 decimals, or three significant digits so that a tiny value never reads 0.00", "[render]") {
  CHECK(cell_value_text(0.6444, false) == "0.64");
  CHECK(cell_value_text(-0.0012, false) == "-0.00");
  CHECK(cell_value_text(0.6444, true) == "0.644");
  CHECK(cell_value_text(-0.00138, true) == "-0.00138");  // attribute's ablation of a head that barely matters
  CHECK(cell_value_text(-1.45e-05, true) == "-1.45e-05");
  CHECK(cell_value_text(12.345, true) == "12.3");
  CHECK(cell_value_text(0.0, true) == "0");
}
