#include "attention/rope.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace attnviz {

std::string rope_style_name(RopeStyle style) {
  return style == RopeStyle::Interleaved ? "interleaved" : "half";
}

namespace {

// cos and sin of position·frequency, rounded to float, for positions 0 … count − 1 and each pair's
// frequency: every layer of every text of a census rotates the same positions with the same
// frequencies (sin/cos were 3% of a corpus census). Rebuilt when the frequencies change (another
// model, a layer with another θ); per thread, as the forward passes may run on several.
struct AngleTable {
  std::vector<double> frequencies;
  long count = 0;
  std::vector<Scalar> cos, sin;  ///< [position * pairs + pair]

  void fit(const std::vector<double>& f, long positions) {
    if (f == frequencies && positions <= count) return;
    if (f != frequencies) count = 0;
    frequencies = f;
    const long pairs = static_cast<long>(f.size());
    const long wanted = std::max(positions, 2 * count);
    cos.resize(static_cast<std::size_t>(wanted * pairs));
    sin.resize(static_cast<std::size_t>(wanted * pairs));
    for (long p = count; p < wanted; ++p)
      for (long i = 0; i < pairs; ++i) {
        // Angles in double: float32 angles drift by ~1e-7·p radians at large positions.
        const double angle = static_cast<double>(p) * f[static_cast<std::size_t>(i)];
        cos[static_cast<std::size_t>(p * pairs + i)] = static_cast<Scalar>(std::cos(angle));
        sin[static_cast<std::size_t>(p * pairs + i)] = static_cast<Scalar>(std::sin(angle));
      }
    count = wanted;
  }
};

// Positions past this are rotated with angles computed on the spot (a table would be too large).
constexpr long long kTabledPositions = 1 << 16;

}  // namespace

void apply_rope(Matrix& x, long d_k, const RopeSettings& settings,
                const std::vector<long long>& positions) {
  const long rope_dim = settings.dim == 0 ? d_k : settings.dim;
  assert(rope_dim % 2 == 0 && rope_dim <= d_k);
  assert(static_cast<long>(positions.size()) == x.rows());
  assert(settings.frequency_factors.empty() || static_cast<long>(settings.frequency_factors.size()) == rope_dim / 2);
  const long n_pairs = rope_dim / 2;
  const long n_heads = x.cols() / d_k;
  // Partner offset of pair i: interleaved pairs are adjacent, half pairs are rope_dim/2 apart.
  const long first_stride = settings.style == RopeStyle::Interleaved ? 2 : 1;
  const long partner_offset = settings.style == RopeStyle::Interleaved ? 1 : n_pairs;
  std::vector<double> frequencies(static_cast<std::size_t>(n_pairs));
  for (long i = 0; i < n_pairs; ++i) {
    double frequency = std::pow(settings.theta, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dim)) /
                       settings.linear_factor;
    if (!settings.frequency_factors.empty()) frequency /= settings.frequency_factors[static_cast<std::size_t>(i)];
    frequencies[static_cast<std::size_t>(i)] = frequency;
  }
  long long last = 0;
  bool tabled = true;
  for (long long p : positions) {
    last = std::max(last, p);
    tabled = tabled && p >= 0 && p < kTabledPositions;
  }
  thread_local AngleTable table;
  if (tabled) table.fit(frequencies, static_cast<long>(last) + 1);
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const long long p = positions[static_cast<std::size_t>(r)];
    for (long i = 0; i < n_pairs; ++i) {
      Scalar c, s;
      if (tabled) {
        c = table.cos[static_cast<std::size_t>(p * n_pairs + i)];
        s = table.sin[static_cast<std::size_t>(p * n_pairs + i)];
      } else {
        const double angle = static_cast<double>(p) * frequencies[static_cast<std::size_t>(i)];
        c = static_cast<Scalar>(std::cos(angle));
        s = static_cast<Scalar>(std::sin(angle));
      }
      for (long h = 0; h < n_heads; ++h) {
        const long a_col = h * d_k + i * first_stride;
        const long b_col = a_col + partner_offset;
        const Scalar a = x(r, a_col);
        const Scalar b = x(r, b_col);
        x(r, a_col) = a * c - b * s;
        x(r, b_col) = a * s + b * c;
      }
    }
  }
}

std::vector<double> llama3_frequency_factors(double theta, long rope_dim, double factor, double low_freq_factor,
                                             double high_freq_factor, double original_context) {
  constexpr double kPi = 3.14159265358979323846;
  const double low_freq_wavelength = original_context / low_freq_factor;
  const double high_freq_wavelength = original_context / high_freq_factor;
  std::vector<double> factors;
  for (long i = 0; i < rope_dim / 2; ++i) {
    const double frequency = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dim));
    const double wavelength = 2 * kPi / frequency;
    if (wavelength < high_freq_wavelength) {
      factors.push_back(1.0);
    } else if (wavelength > low_freq_wavelength) {
      factors.push_back(factor);
    } else {
      const double smooth = (original_context / wavelength - low_freq_factor) / (high_freq_factor - low_freq_factor);
      // scaled frequency = (1 - smooth)·f/factor + smooth·f, as a divisor of f
      factors.push_back(1.0 / ((1 - smooth) / factor + smooth));
    }
  }
  return factors;
}

}  // namespace attnviz
