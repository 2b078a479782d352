#include "render/colormap.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "render/colormap_tables.hpp"

namespace attnviz {

namespace {

const std::vector<Colormap>& all_colormaps() {
  static const std::vector<Colormap> colormaps = [] {
    std::vector<Colormap> maps;
    for (const ColormapTable& table : kColormapTables) maps.emplace_back(table);
    return maps;
  }();
  return colormaps;
}

}  // namespace

Rgb Colormap::at(double t) const {
  // matplotlib: index = floor(t · N), with t = 1 mapped to N − 1 (colors.py, Colormap.__call__).
  constexpr double kEntries = static_cast<double>(kColormapEntries);
  const double scaled = std::isnan(t) ? 0.0 : std::clamp(t, 0.0, 1.0) * kEntries;
  const auto index = std::min(static_cast<std::size_t>(scaled), kColormapEntries - 1);
  return table_->colours[index];
}

std::string Colormap::name() const { return table_->name; }

std::string Colormap::matplotlib_name() const { return table_->matplotlib_name; }

const Colormap& colormap_by_name(const std::string& name) {
  for (const Colormap& colormap : all_colormaps()) {
    if (colormap.name() == name) return colormap;
  }
  std::string valid;
  for (const std::string& known : colormap_names()) {
    valid += (valid.empty() ? "" : ", ") + known;
  }
  throw UsageError::bad_option("--cmap", "unknown colour map \"" + name + "\"; valid: " + valid);
}

std::vector<std::string> colormap_names() {
  std::vector<std::string> names;
  for (const ColormapTable& table : kColormapTables) names.emplace_back(table.name);
  return names;
}

}  // namespace attnviz
