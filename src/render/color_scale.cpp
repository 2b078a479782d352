#include "render/color_scale.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace attnviz {

namespace {

constexpr double kMidPosition = 0.5;        // colour of a constant map: the middle of the bar
constexpr int kTargetTickIntervals = 5;     // about as many ticks as matplotlib's colour bars
constexpr int kSignificantDigits = 3;       // in captions and titles
constexpr int kMaxTickDecimals = 6;
constexpr double kTickTolerance = 1e-9;     // relative slack so the last tick is not lost
// Multiples of a power of ten that make round tick steps (as matplotlib's MaxNLocator).
constexpr double kNiceSteps[] = {1.0, 2.0, 2.5, 5.0, 10.0};
const char* const kEnDash = "\u2013";
const char* const kPlusMinus = "\u00B1";

// Running min/max of the allowed, finite values of one panel.
void extend(const Matrix& panel, const MaskMatrix& allowed, double& lo, double& hi) {
  for (Eigen::Index i = 0; i < panel.rows(); ++i) {
    for (Eigen::Index j = 0; j < panel.cols(); ++j) {
      const double v = panel(i, j);
      if ((allowed.size() != 0 && allowed(i, j) == 0) || !std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
}

ValueRange range_or_default(double lo, double hi) {
  return lo <= hi ? ValueRange{lo, hi} : ValueRange{};
}

// "%.*f" with trailing zeros (and a bare "-0") removed: 0.50 -> "0.5", 1.00 -> "1".
std::string trim_fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  std::string s = text;
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

// Round-number ticks inside [vmin, vmax]: step = a nice multiple of a power of ten giving about
// kTargetTickIntervals intervals; labels carry as many decimals as the step needs.
std::vector<Tick> nice_ticks(const ValueRange& range) {
  if (range.vmax <= range.vmin) return {{range.vmin, format_value(range.vmin)}};
  const double raw_step = (range.vmax - range.vmin) / kTargetTickIntervals;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  double step = magnitude;
  for (double nice : kNiceSteps) {
    step = nice * magnitude;
    if (step >= raw_step) break;
  }
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + kTickTolerance)) +
                                      (step / magnitude == kNiceSteps[2] ? 1 : 0),
                                  0, kMaxTickDecimals);
  std::vector<Tick> ticks;
  const double slack = step * kTickTolerance;
  for (double k = std::ceil((range.vmin - slack) / step); k * step <= range.vmax + slack; ++k) {
    const double value = k * step;
    ticks.push_back({value, trim_fixed(value, decimals)});
  }
  return ticks;
}

}  // namespace

double color_position(const ValueRange& range, double value) {
  if (!(range.vmax > range.vmin)) return kMidPosition;
  if (range.log10) {
    const double lo = std::log10(range.vmin), hi = std::log10(range.vmax);
    return std::clamp((std::log10(std::max(value, range.vmin)) - lo) / (hi - lo), 0.0, 1.0);
  }
  return std::clamp((value - range.vmin) / (range.vmax - range.vmin), 0.0, 1.0);
}

double value_at_position(const ValueRange& range, double t) {
  if (range.log10) return std::pow(10.0, std::log10(range.vmin) + t * (std::log10(range.vmax) - std::log10(range.vmin)));
  return range.vmin + t * (range.vmax - range.vmin);
}

MaskMatrix without_sink(const MaskMatrix& allowed, Eigen::Index n_q, Eigen::Index n_k, Eigen::Index first_query) {
  MaskMatrix cells = allowed.size() != 0 ? allowed : MaskMatrix::Ones(n_q, n_k);
  if (n_k > 0) cells.col(0).setZero();
  cells.topRows(std::clamp<Eigen::Index>(kSinkQueryRows - first_query, 0, n_q)).setZero();
  return cells;
}

std::vector<ValueRange> panel_ranges(const std::vector<SharedMatrix>& panels,
                                     const MaskMatrix& allowed, ScaleMode mode) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (mode == ScaleMode::Fixed) return std::vector<ValueRange>(panels.size(), ValueRange{0, 1});
  if (mode == ScaleMode::Log) return std::vector<ValueRange>(panels.size(), ValueRange{kLogFloor, 1, true});
  if (mode == ScaleMode::Head) {
    std::vector<ValueRange> ranges;
    for (const SharedMatrix& panel : panels) {
      double lo = kInf, hi = -kInf;
      extend(*panel, allowed, lo, hi);
      ranges.push_back(range_or_default(lo, hi));
    }
    return ranges;
  }
  double lo = kInf, hi = -kInf;
  for (const SharedMatrix& panel : panels) extend(*panel, allowed, lo, hi);
  ValueRange shared = range_or_default(lo, hi);
  if (mode == ScaleMode::Symmetric) {
    const double m = std::max(std::abs(shared.vmin), std::abs(shared.vmax));
    shared = {-m, m};
  }
  return std::vector<ValueRange>(panels.size(), shared);
}

ColorbarScale colorbar_scale(ScaleMode mode, const std::vector<ValueRange>& ranges, const std::string& panel) {
  assert(!ranges.empty());
  const ValueRange& first = ranges.front();
  const std::string constant = first.vmax > first.vmin ? "" : " (constant: mid colour)";
  switch (mode) {
    case ScaleMode::Fixed:
      return {first,
              {{0, "0"}, {0.25, "0.25"}, {0.5, "0.5"}, {0.75, "0.75"}, {1, "1"}},
              std::string("fixed scale 0") + kEnDash + "1"};
    case ScaleMode::Head:
      if (ranges.size() == 1) {
        return {first, nice_ticks(first),
                "per-" + panel + " min" + std::string(kEnDash) + "max " + format_range(first) + constant};
      }
      return {ValueRange{0, 1},
              {{0, "min"}, {1, "max"}},
              "per-" + panel + " min" + std::string(kEnDash) + "max (each panel's range in its title)"};
    case ScaleMode::Shared:
      return {first, nice_ticks(first), "shared scale " + format_range(first) + constant};
    case ScaleMode::Symmetric:
      return {first, nice_ticks(first),
              "symmetric " + std::string(kPlusMinus) + format_value(first.vmax) + constant};
    case ScaleMode::Log: {
      std::vector<Tick> ticks;
      for (double v = first.vmin; v <= first.vmax * (1 + kTickTolerance); v *= 10) ticks.push_back({v, format_value(v)});
      return {first, ticks, "log\u2081\u2080 scale, floor " + format_value(first.vmin) + " (below: first colour)"};
    }
  }
  return {};
}

std::string format_value(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", kSignificantDigits, value);
  std::string shown = text;
  if (shown == "-0") return "0";
  // printf's "1.03e-11" is program output, not a figure label: written as 1.03×10⁻¹¹.
  const std::size_t e = shown.find('e');
  if (e == std::string::npos) return shown;
  static const char* const kSuperscripts[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  std::string mantissa = shown.substr(0, e);
  const int exponent = std::stoi(shown.substr(e + 1));
  std::string power = exponent < 0 ? "⁻" : "";
  for (const char digit : std::to_string(std::abs(exponent))) power += kSuperscripts[digit - '0'];
  return (mantissa == "1" ? std::string() : mantissa + "×") + "10" + power;
}

std::string format_range(const ValueRange& range) {
  // An end 10³⁰ times smaller than the other (a softmax's denormal 8.67e-43 beside 1) is
  // drawn as 0 and read as 0: "8.67×10⁻⁴³–1" says nothing a reader can see.
  const double span = std::max(std::abs(range.vmin), std::abs(range.vmax));
  const auto shown = [span](double v) { return std::abs(v) < 1e-30 * span ? 0.0 : v; };
  return format_value(shown(range.vmin)) + kEnDash + format_value(shown(range.vmax));
}

}  // namespace attnviz
