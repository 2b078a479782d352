// The QK and OV spectra of every head of a layer side by side (issue 21; Elhage et al. 2021):
// one bar per singular value, all heads on one scale per circuit, so that low-rank heads (a few
// tall bars) and copying heads (copying score near +1) stand out; the explained head framed;
// under them what its top QK directions ask for in vocabulary tokens. Draws into memory only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/explanation.hpp"
#include "render/font.hpp"
#include "render/image.hpp"
#include "render/svg_document.hpp"

namespace attnviz {

/// What the picture shows.
struct CircuitsFigureRequest {
  std::string title;
  std::vector<std::string> head_labels;  ///< one per head ("L0H3")
  const std::vector<HeadCircuits>* heads = nullptr;
  int explained = 0;                     ///< the framed head
  const std::optional<std::vector<QkDirectionTokens>>* directions = nullptr;  ///< may point to unset
  bool folded = false;
};

/// Where the parts went (for tests).
struct RenderedCircuitsFigure {
  Image image;          ///< empty when drawn as SVG
  int width_px = 0, height_px = 0;
  std::vector<Rect> qk_charts, ov_charts;  ///< one per head (ov_charts empty without W_O)
};

/// Lays out and draws the spectra and the token lists.
RenderedCircuitsFigure render_circuits_figure(const CircuitsFigureRequest& request, const FontSet& fonts);

/// The same picture as SVG elements (rectangles and text), laid out with the same fonts.
SvgPicture circuits_figure_svg(const CircuitsFigureRequest& request, const FontSet& fonts);

}  // namespace attnviz
