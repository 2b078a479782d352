#include "attention/rope.hpp"

#include <cassert>
#include <cmath>

namespace attnviz {

std::string rope_style_name(RopeStyle style) {
  return style == RopeStyle::Interleaved ? "interleaved" : "half";
}

void apply_rope(Matrix& x, long d_k, const RopeSettings& settings,
                const std::vector<long long>& positions) {
  const long rope_dim = settings.dim == 0 ? d_k : settings.dim;
  assert(rope_dim % 2 == 0 && rope_dim <= d_k);
  assert(static_cast<long>(positions.size()) == x.rows());
  const long n_pairs = rope_dim / 2;
  const long n_heads = x.cols() / d_k;
  // Partner offset of pair i: interleaved pairs are adjacent, half pairs are rope_dim/2 apart.
  const long first_stride = settings.style == RopeStyle::Interleaved ? 2 : 1;
  const long partner_offset = settings.style == RopeStyle::Interleaved ? 1 : n_pairs;
  for (long i = 0; i < n_pairs; ++i) {
    // Angles in double: float32 angles drift by ~1e-7·p radians at large positions.
    const double frequency = std::pow(settings.theta, -2.0 * static_cast<double>(i) /
                                                          static_cast<double>(rope_dim));
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      const double angle = static_cast<double>(positions[r]) * frequency;
      const Scalar c = static_cast<Scalar>(std::cos(angle));
      const Scalar s = static_cast<Scalar>(std::sin(angle));
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

}  // namespace attnviz
