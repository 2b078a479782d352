#include "render/grid_marks.hpp"

#include <algorithm>

#include "render/color_scale.hpp"

namespace attnviz {

namespace {

constexpr int kSinkBarPx = 3;     // height of the bar over key 0
constexpr int kSinkBarGapPx = 1;  // between the bar and the cells' frame

// Pixel offset, from the cells' origin, of the boundary before matrix index `index`.
int boundary_px(const GridLayout& layout, int index) {
  return static_cast<int>((static_cast<long>(index) * layout.cell_px + layout.block / 2) / layout.block);
}

}  // namespace

std::vector<Rect> grid_mark_rects(const GridRequest& request, const GridLayout& layout, const PanelLayout& panel) {
  std::vector<Rect> rects;
  const Rect& cells = panel.cells;
  if (request.prompt_query_rows > 0 && request.prompt_query_rows < layout.n_q) {
    rects.push_back({cells.x_px, cells.y_px + boundary_px(layout, request.prompt_query_rows), cells.width_px, 1});
  }
  if (request.prompt_key_cols > 0 && request.prompt_key_cols < layout.n_k) {
    rects.push_back({cells.x_px + boundary_px(layout, request.prompt_key_cols), cells.y_px, 1, cells.height_px});
  }
  if (request.exclude_sink && !layout.thumbnail) {
    rects.push_back({cells.x_px, cells.y_px - 1 - kSinkBarGapPx - kSinkBarPx, std::max(2, layout.cell_px), kSinkBarPx});
  }
  return rects;
}

std::vector<std::string> grid_mark_legend(const GridRequest& request) {
  std::vector<std::string> lines;
  const int prompt = std::max(request.prompt_query_rows, request.prompt_key_cols);
  if (prompt > 0) {
    lines.push_back("red line" + std::string(request.prompt_query_rows > 0 && request.prompt_key_cols > 0 ? "s" : "") +
                    ": the prompt ends after token " + std::to_string(prompt - 1) + "; " +
                    (request.prompt_query_rows > 0 ? "rows below" : "") +
                    (request.prompt_query_rows > 0 && request.prompt_key_cols > 0 ? " and " : "") +
                    (request.prompt_key_cols > 0 ? "columns right of it" : "") + " are generated tokens");
  }
  if (request.exclude_sink) {
    lines.push_back("red bar over key 0: the sink column; it and queries 0\u2013" + std::to_string(kSinkQueryRows - 1) +
                    " are left out of the colour range, so key 0 is drawn clipped at its top (--exclude-sink)");
  }
  return lines;
}

}  // namespace attnviz
