// Table-driven colour maps: a value t in [0, 1] -> RGB, exactly as matplotlib looks up its
// 256-entry maps. Names follow matplotlib, lower-cased: viridis (default), magma, inferno, plasma,
// cividis, greys ("Greys": 0 = white, 1 = black), blues ("Blues") and the diverging rdbu, which is
// matplotlib's "RdBu_r" (0 = blue = negative, 0.5 = white, 1 = red = positive).
// Does not decide how data values map to t (see ScaleMode in head_grid.hpp).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "render/image.hpp"

namespace attnviz {

struct ColormapTable;

class Colormap {
 public:
  explicit Colormap(const ColormapTable& table) : table_(&table) {}

  /// The colour of t: entry min(floor(t · 256), 255) of the table, t clamped to [0, 1]
  /// (matplotlib's ListedColormap rule). NaN maps to entry 0.
  Rgb at(double t) const;
  /// The attnviz name (as given to --cmap).
  std::string name() const;
  /// The matplotlib name it reproduces (e.g. "RdBu_r" for rdbu).
  std::string matplotlib_name() const;

 private:
  const ColormapTable* table_;
};

/// The map called `name` (exact, lower-case). Throws UsageError (option --cmap) listing the
/// valid names when there is none.
const Colormap& colormap_by_name(const std::string& name);

/// Every valid name, in documentation order, "viridis" first.
std::vector<std::string> colormap_names();

}  // namespace attnviz
