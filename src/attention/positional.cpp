#include "attention/positional.hpp"

#include <cmath>

namespace attnviz {

namespace {
constexpr double kWavelengthBase = 10000.0;  // §3.5
}  // namespace

Matrix sinusoidal_encoding(const std::vector<long long>& positions, long d_model) {
  Matrix pe(static_cast<Eigen::Index>(positions.size()), d_model);
  for (Eigen::Index r = 0; r < pe.rows(); ++r) {
    const double p = static_cast<double>(positions[r]);
    for (long c = 0; c < d_model; ++c) {
      const long two_i = c - c % 2;
      const double angle = p / std::pow(kWavelengthBase, static_cast<double>(two_i) / d_model);
      pe(r, c) = static_cast<Scalar>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
  return pe;
}

}  // namespace attnviz
