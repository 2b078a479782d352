// The cells of one heatmap panel: value -> colour through a range and a colour map, masked cells
// as grey hatching, block aggregation for inputs with more cells than pixels, and the optional
// printed values. Does not place labels, titles or panels (see head_grid.hpp).
#pragma once

#include "core/types.hpp"
#include "render/color_scale.hpp"
#include "render/colormap.hpp"
#include "render/font.hpp"
#include "render/image.hpp"

namespace attnviz {

/// Fill of a masked cell (allowed == 0): neutral grey, crossed by light diagonal lines one
/// pixel wide every kHatchPeriodPx along x + y (measured from the panel's top-left cell, so the
/// hatch runs on across neighbouring masked cells). Distinct from every colour of weight 0.
inline constexpr Rgb kMaskedFill{191, 191, 191};
inline constexpr Rgb kMaskedHatch{235, 235, 235};
inline constexpr int kHatchPeriodPx = 6;
/// A cell masked in one compared run only (the other computed it): the same grey, crossed the
/// other way (x − y) by darker lines, so it reads as masked but not as the masked cells of both.
inline constexpr Rgb kOneRunHatch{110, 110, 110};

/// DrawnCells::allowed values.
inline constexpr std::uint8_t kCellMasked = 0;
inline constexpr std::uint8_t kCellAllowed = 1;
inline constexpr std::uint8_t kCellMaskedInOneRun = 2;

/// A panel's values as drawn: one entry per drawn cell. With block b > 1 each drawn cell is the
/// aggregate of a b × b block of matrix cells (the last row/column of blocks may be smaller):
/// the maximum of its allowed values, or for signed data (Symmetric scale) the value of largest
/// magnitude with its sign; a block with no allowed cell is masked.
struct DrawnCells {
  Matrix values;       // [ceil(n_q / b), ceil(n_k / b)]
  MaskMatrix allowed;  // same shape; kCellAllowed = drawn in colour, kCellMasked = grey hatch,
                       // kCellMaskedInOneRun = the one-run hatch
};

/// Aggregates `values` (masked where allowed == 0; empty `allowed` = all allowed). A masked
/// drawn cell is kCellMaskedInOneRun when one of its cells has one_run == 1 (empty: none).
/// Requires: block >= 1; allowed and one_run empty or of values' shape.
DrawnCells aggregate_cells(const Matrix& values, const MaskMatrix& allowed, int block,
                           bool signed_data, const MaskMatrix& one_run = MaskMatrix());

/// Draws every cell of `cells` as a cell_px × cell_px square, row 0 at the top of `area` and
/// column 0 at its left: colormap(color_position(range, value)), or the masked hatch (the
/// one-run hatch for kCellMaskedInOneRun).
void draw_cells(Image& image, const DrawnCells& cells, Point origin, int cell_px,
                const ValueRange& range, const Colormap& colormap);

/// Black or white, whichever contrasts more with `background` (WCAG 2.1 contrast ratio): the
/// colour of a value printed in a cell.
Rgb contrasting_text(Rgb background);

/// A value as a cell prints it: 2 decimals; `significant`: three significant digits (printf's
/// %.3g: "0.644", "-0.00138", "1.45e-05"), so that a tiny value that is not 0 never reads 0.00.
std::string cell_value_text(double value, bool significant);

/// Prints each allowed value (cell_value_text), centred in its cell, in black or white, whichever
/// contrasts more with the cell colour (WCAG contrast ratio).
void draw_values(Image& image, const DrawnCells& cells, Point origin, int cell_px, int font_px,
                 const FontSet& fonts, const ValueRange& range, const Colormap& colormap, bool significant = false);

}  // namespace attnviz
