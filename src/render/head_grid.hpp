// The attention picture: one or more heads' weight matrices as a grid of labelled heatmap
// panels with a shared colour bar, titles and a legend, sized to fit a pixel budget. A single
// head is a 1 × 1 grid (one code path). Returns the image in memory; never writes files, never
// prints (notes for the user come back as warnings).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "render/color_scale.hpp"
#include "render/font.hpp"
#include "render/heatmap.hpp"
#include "render/image.hpp"

namespace attnviz {

/// What to draw. Rows are queries (query 0 at the top), columns are keys (key 0 at the left).
struct GridRequest {
  Tokens query_tokens, key_tokens;        // row labels, column labels (UTF-8, drawn exactly)
  std::vector<SharedMatrix> panels;       // each [n_q, n_k]; at least one; never null
  std::vector<std::string> panel_titles;  // one per panel, e.g. "L0H3 · head 3 of 8"; missing
                                          // or empty entries get "head p"
  SharedMask allowed;                     // [n_q, n_k], 1 = allowed; null or empty = all allowed
  std::vector<SharedMask> panel_allowed;  // per panel, its own mask (compare: each run's), used
                                          // instead of `allowed` to draw that panel's cells;
                                          // missing or null entries use `allowed`
  SharedMask one_run_masked;              // [n_q, n_k], 1 = masked in one compared run only: such
                                          // cells, where a panel is masked, get the one-run hatch
  std::string one_run_legend;             // the legend line for them (beside their swatch)
  std::vector<std::uint8_t> query_mask;   // n_q, 0 = a padding query (its row is computed but is
                                          // no real token: marked like a fully masked row, its
                                          // cells overlaid with white hatching); empty = all real
  std::string query_axis_title = "queries", key_axis_title = "keys";
  std::string figure_title;               // empty: no figure title line
  std::string colorbar_label = "attention weight";
  ScaleMode scale = ScaleMode::Fixed;
  std::string panel_noun = "head";        // what a panel shows, for ScaleMode::Head's caption
                                          // ("per-head min–max"; the census: "statistic")
  bool exclude_sink = false;              // Head/Shared: ranges over without_sink() cells (key 0
                                          // and queries 0–3 left out); key 0's column is marked
  int prompt_query_rows = 0;              // > 0: a line below this many query rows (the prompt's
                                          // end, --generate); rows after it are generated tokens
  int prompt_key_cols = 0;                // > 0: a line right of this many key columns (same)
  int first_query_index = 0;              // position of query row 0 in the text (--rows generated:
                                          // the prompt's length); > 0: every query label is indexed
  std::optional<ValueRange> range;        // overrides the range `scale` computes (as `scale` still
                                          // names it): one head's image drawn on its grid's shared scale
  std::string cmap = "viridis";           // a name from colormap_names()
  int cols = 0;                           // panels per grid row; <= 0: automatic (see layout_grid)
  int col_multiple = 1;                   // automatic columns are a multiple of this (compare: 2,
                                          // so run A and run B of a head stay side by side)
  int max_size_px = 4096;                 // target maximum width and height; capped at kMaxSidePx
  int max_height_px = 0;                  // > 0: a lower limit for the height alone (compare's
                                          // parts share one image's height)
  bool annotate = false;                  // print values (2 decimals) in cells big enough
  bool significant_values = false;        // with annotate: values as cell_value_text's significant
                                          // form (attribute: a tiny effect is not "0.00")
  double max_memory_bytes = 8e9;          // refuse pictures whose working memory (picture_bytes)
                                          // would exceed this
  std::string memory_note;                // where that limit comes from, for its error message
  // Head by head (issue 23): per panel, its cells already aggregated (grid_panel_cells at
  // drawn_block), drawn instead of aggregating `panels`, whose values are then not read (they
  // may be empty placeholders). Only with a scale that reads no values (Fixed, Log) or a given
  // `range`, and a layout of that block (render_grid throws std::logic_error otherwise).
  std::vector<std::shared_ptr<const DrawnCells>> drawn;
  int drawn_block = 0;
};

/// Panel `panel`'s cells [n_q, n_k] as render_grid draws them for `request` at `block` (layout
/// block): aggregate_cells under the request's masks. What GridRequest::drawn holds.
DrawnCells grid_panel_cells(const GridRequest& request, const Matrix& panel, int block);

/// Working memory of drawing and encoding one picture: its RGB raster, at most as many bytes
/// again of PNG, and one panel's aggregated cells (value and mask).
double picture_bytes(int width_px, int height_px, long drawn_rows, long drawn_cols);

/// Hard limit on either side of any image (many viewers and libraries fail beyond it).
inline constexpr int kMaxSidePx = 16384;

/// Where one panel's parts are, in image pixels.
struct PanelLayout {
  Rect cells;             // drawn_rows × drawn_cols cells of cell_px; cells.x/y = cell (0, 0)
  Rect title;             // panel title line, centred over the cells
  Rect query_labels;      // right-aligned query labels, left of the cells
  Rect key_labels;        // key labels below the cells (rotated 90°, reading upwards, unless
                          // GridLayout::key_labels_horizontal)
  Rect query_axis_title;  // rotated, left of the query labels
  Rect key_axis_title;    // below the key labels
  Rect bounds;            // the whole panel; panels never overlap
};

/// The geometry of a grid, computed by layout_grid() and used by render_grid().
struct GridLayout {
  int n_q = 0, n_k = 0;                // matrix rows (queries) and columns (keys)
  int panel_rows = 0, panel_cols = 0;  // panels are placed row by row
  int cell_px = 0;                     // side of one drawn cell, >= 1
  int block = 1;                       // each drawn cell aggregates block × block matrix cells
                                       // (max over the block; 1 = no downsampling)
  int drawn_rows = 0, drawn_cols = 0;  // ceil(n_q / block), ceil(n_k / block)
  int query_label_stride = 1;          // every k-th query token is labelled (in tokens)
  int key_label_stride = 1;            // every k-th key token is labelled (in tokens)
  int first_query_index = 0;           // request.first_query_index: query row i is token i + this
  bool key_labels_horizontal = false;  // every key label fits its cell width: drawn unrotated
  int label_font_px = 0;               // token labels
  int annotation_font_px = 0;          // printed values; 0 = values not printed
  int width_px = 0, height_px = 0;     // the image, both <= min(max_size_px, kMaxSidePx)
  bool thumbnail = false;              // no text fits the size limit: the cells alone, without
                                       // labels, titles, colour bar or legend (text rects empty)
  int labelled_width_px = 0, labelled_height_px = 0;  // thumbnail: the smallest labelled layout
  std::vector<PanelLayout> panels;     // one per request panel, row-major in the grid
  Rect figure_title;                   // empty rect when there is no figure title
  std::vector<std::string> figure_title_lines;  // the title, wrapped to the image's width limit
  Rect colorbar;                       // the colour strip (ticks and captions to its right)
  Rect legend;                         // notes below the grid (empty rect when none)
  std::vector<ValueRange> ranges;      // value range mapped onto the colour map, per panel
  ColorbarScale colorbar_scale;        // ticks and caption of the shared colour bar
  std::vector<std::string> query_labels, key_labels;  // display text per token (token_label.hpp)
  std::vector<std::string> panel_titles;              // as drawn
  std::vector<std::string> legend_lines;              // as drawn, top to bottom (wrapped at spaces
                                                      // when wider than the image's limit)
  std::vector<std::uint8_t> legend_swatches;          // per legend line: 0 none, else the DrawnCells
                                                      // kind (kCellMasked + 1 or kCellMaskedInOneRun + 1)
};

/// The text drawn for query row i (key column j): its display label, or on a thinned axis
/// (stride > 1) indexed_label(i, label), "#212 ▁park" (token_label.hpp); query rows that start
/// past the text's beginning (first_query_index > 0) are always indexed by their position in the
/// text. PNG and SVG draw these.
std::string drawn_query_label(const GridLayout& layout, int i);
std::string drawn_key_label(const GridLayout& layout, int j);

/// Pure geometry (draws nothing). Automatic columns: rows = floor(sqrt(P)), cols = ceil(P / rows)
/// rounded up to a multiple of col_multiple (1 -> 1 × 1, 3 -> 1 × 3, 4 -> 2 × 2, 8 -> 2 × 4,
/// 12 -> 3 × 4); request.cols > P is cut to P. With automatic columns (and at most 64 panels),
/// a grid that would need aggregated cells in that shape takes instead the other column count
/// (a multiple of col_multiple) that fits with the largest cells, if any does.
/// Cell size: the preferred size max(14, 480 / max(n_q, n_k)) capped at 48 px (so short inputs get
/// large cells and every label fits from 14 px) — or, for one row of panels with so few query rows
/// that the matrix would be shorter than the colour bar, the size that makes it as tall (at most
/// 200 px) — then the largest size <= that for which the whole
/// image fits in max_size_px per side; if even 1 px per cell does not fit, cells are aggregated
/// in b × b blocks with the smallest b that fits. When no labelled layout fits even so, the
/// picture is a thumbnail (GridLayout::thumbnail): the cells alone, 2 px margins, 4 px between
/// panels, cells as large as fit (up to the preferred size), aggregated only if 1 px does not
/// fit; layout_notes says so. Labels that would overlap are thinned to every
/// k-th (see label_stride in token_label.hpp). Key labels are rotated 90° unless every one fits
/// horizontally within its cell (short tokens such as single characters stay upright).
/// Requires: at least one panel, each [n_q, n_k] with n_q = query_tokens.size() >= 1 and
/// n_k = key_tokens.size() >= 1; allowed null, empty or [n_q, n_k] (the loader checks these).
/// Throws UsageError for an unknown cmap; LimitError::image_size when not even a thumbnail of
/// one pixel per panel fits the side limit; LimitError::memory when picture_bytes would be more than max_memory_bytes.
GridLayout layout_grid(const GridRequest& request, const FontSet& fonts);

/// The pixel at the centre of matrix cell (row, col) of panel `panel` (of its aggregated block
/// when layout.block > 1). Requires: indices in range.
Point cell_centre_px(const GridLayout& layout, int panel, int row, int col);

struct RenderedGrid {
  Image image;
  GridLayout layout;
  std::vector<std::string> warnings;  // missing glyphs, thinned labels, downsampling, ...
};

/// Lays out and draws the grid. Same request and fonts -> identical pixels and warnings.
/// Warnings: one per character with code points no font has, naming where it first occurs, e.g.
///   key token 3 "猫": no glyph for U+732B in /…/DejaVuSans.ttf or any installed font; drawn as
///   U+FFFD (install a font that has it, e.g. fonts-noto-cjk for CJK, or add one with --font)
/// (the package suggested fits the character's script: missing_font_advice in font_advice.hpp)
/// and one per note printed on the image ("every 4th key label shown", "each pixel shows the
/// max over 10 × 10 cells", values not printed because cells are too small).
/// Throws as layout_grid().
RenderedGrid render_grid(const GridRequest& request, const FontSet& fonts);

}  // namespace attnviz
