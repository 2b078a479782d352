// The colour-map data behind colormap.hpp: matplotlib's 256-entry look-up tables, generated into
// colormap_tables.cpp by scripts/gen_colormaps.py. Internal to render/; use colormap.hpp instead.
#pragma once

#include <array>
#include <cstddef>

#include "render/image.hpp"

namespace attnviz {

inline constexpr std::size_t kColormapEntries = 256;  // matplotlib's default N for these maps
inline constexpr std::size_t kColormapCount = 8;      // must match the generator's list

struct ColormapTable {
  const char* name;             // attnviz name (--cmap), e.g. "rdbu"
  const char* matplotlib_name;  // the matplotlib map it was sampled from, e.g. "RdBu_r"
  std::array<Rgb, kColormapEntries> colours;
};

extern const std::array<ColormapTable, kColormapCount> kColormapTables;

}  // namespace attnviz
