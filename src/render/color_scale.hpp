// How data values map to colour-map positions: the four scale modes, the value range of each
// panel, and the colour bar's ticks and caption that say which scale is used (issue 3, BH-19).
// Does not draw anything and does not know colour maps (see colorbar.hpp, colormap.hpp).
#pragma once

#include <string>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Fixed: [0, 1] for every panel (the default for attention weights, so heads compare).
/// Head: each panel its own [min, max]. Shared: one [min, max] over all panels.
/// Symmetric: [-m, m] with m = max |value| over all panels (signed data, e.g. differences; use
/// with the diverging rdbu map so 0 is white). Min, max and m are taken over allowed cells only.
/// Log: log10 of the value over [kLogFloor, 1] for every panel; values below the floor (and 0)
/// take the first colour (issue 23: a sink's 0.9 no longer flattens weights of 0.001 and 0.01).
enum class ScaleMode { Fixed, Head, Shared, Symmetric, Log };

/// The smallest weight --scale log tells apart: 10⁻⁴ (a 1/n weight of an 8192-token text is 1.2·10⁻⁴).
inline constexpr double kLogFloor = 1e-4;

/// The values drawn with the first and last colour of the map. vmin == vmax is a constant map.
/// log10: positions are taken on log10 of the values (vmin > 0 then).
struct ValueRange {
  double vmin = 0;
  double vmax = 1;
  bool log10 = false;
  friend bool operator==(const ValueRange&, const ValueRange&) = default;
};

/// Colour-map position of `value`: (value − vmin) / (vmax − vmin), clamped to [0, 1]; with
/// range.log10, (log10 max(value, vmin) − log10 vmin) / (log10 vmax − log10 vmin). 0.5 (the mid
/// colour) for a constant range, so a flat map never divides by zero.
double color_position(const ValueRange& range, double value);

/// The value at colour-map position t in [0, 1] (the inverse of color_position on a
/// non-constant range): what a colour bar's pixel row at t shows.
double value_at_position(const ValueRange& range, double t);

/// The cells `--exclude-sink` takes a range over: `allowed` (empty = all of n_q × n_k) without
/// key column 0 (the attention sink, usually BOS) and without query rows 0–3, which see only a few
/// keys and so give large weights whatever the head does (issue 23). `first_query` is the text
/// position of row 0 (--rows generated): only rows at positions 0–3 are left out.
MaskMatrix without_sink(const MaskMatrix& allowed, Eigen::Index n_q, Eigen::Index n_k, Eigen::Index first_query = 0);

/// Query rows left out of the range by without_sink().
inline constexpr int kSinkQueryRows = 4;

/// The range of each panel under `mode`, over cells with allowed(i, j) == 1 (an empty `allowed`
/// allows all). Non-finite values are ignored; a panel with no usable cell gets [0, 1].
/// Requires: every panel has allowed's shape when allowed is non-empty.
std::vector<ValueRange> panel_ranges(const std::vector<SharedMatrix>& panels,
                                     const MaskMatrix& allowed, ScaleMode mode);

/// One colour-bar tick: its value in the bar's range and its printed label.
struct Tick {
  double value = 0;
  std::string label;
};

/// What the colour bar shows: the range from bottom to top, ticks, and the caption naming the
/// scale ("fixed scale 0–1", "per-head min–max", "shared scale 0.02–0.91", "symmetric ±0.4").
/// Head mode with several panels has one bar for all: range [0, 1], ticks "min" and "max", and
/// the caption points to the per-panel ranges (which the grid prints in each panel's title).
struct ColorbarScale {
  ValueRange range;
  std::vector<Tick> ticks;
  std::string caption;
};

/// `panel` names what one panel shows, for the Head mode's caption: "head" gives "per-head
/// min–max", "statistic" (the head census, whose panels are statistics) "per-statistic min–max".
/// Requires: ranges has one entry per panel, as returned by panel_ranges(.., mode).
ColorbarScale colorbar_scale(ScaleMode mode, const std::vector<ValueRange>& ranges,
                             const std::string& panel = "head");

/// A value as shown in captions and titles: 3 significant digits, no trailing zeros ("0.912");
/// very small or large values in scientific notation as printed, not as printf writes it:
/// 1.03e-11 -> "1.03×10⁻¹¹", 1e-05 -> "10⁻⁵", 2.5e+06 -> "2.5×10⁶".
std::string format_value(double value);

/// "0.02–0.91" (with an en dash), the way a range is printed.
std::string format_range(const ValueRange& range);

}  // namespace attnviz
