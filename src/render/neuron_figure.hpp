// The neuron view as a picture (issue 21; Vig 2019, BertViz's neuron view): the query vector on
// top, one row per key with its key vector, the elementwise products q ⊙ k (diverging colours
// centred at 0), the score and the weight as bars, masked keys marked; on the right each key's
// weighted value and, below them, their sum: the head's output. Draws into memory only.
#pragma once

#include <string>

#include "analysis/neuron_view.hpp"
#include "render/font.hpp"
#include "render/image.hpp"
#include "render/svg_document.hpp"

namespace attnviz {

/// What the picture shows: a view and the labels of its query and keys.
struct NeuronFigureRequest {
  std::string title;    ///< "stories260K L0H5 · query 31"
  std::string query_label;
  Tokens key_labels;    ///< n_k
  const NeuronView* view = nullptr;
  int max_size_px = 4096;
};

/// Where the parts went (for tests).
struct RenderedNeuronFigure {
  Image image;          ///< empty when drawn as SVG
  int width_px = 0, height_px = 0;
  Rect q_cells;          ///< the query vector's row of d_k cells
  Rect key_cells;        ///< [n_k rows, d_k columns]
  Rect product_cells;    ///< [n_k rows, d_k columns]
  Rect value_cells;      ///< [n_k rows, d_v columns]
  Rect output_cells;     ///< the output's row of d_v cells
  int row_px = 0;        ///< height of one key row
  int cell_px = 0;       ///< width of one vector cell
};

/// Lays out and draws the neuron view. Vectors use the diverging rdbu map (blue < 0 < red), one
/// symmetric range per block (|max| of q and k together, of the products, of v·w and the output
/// together), each stated under its block. Throws LimitError::image_size when the keys do not
/// fit max_size_px even at 2 px per row.
RenderedNeuronFigure render_neuron_figure(const NeuronFigureRequest& request, const FontSet& fonts);

/// The same picture as SVG elements (rectangles and text), laid out with the same fonts.
SvgPicture neuron_figure_svg(const NeuronFigureRequest& request, const FontSet& fonts);

}  // namespace attnviz
