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

Matrix sinusoidal_encoding_halves(const std::vector<long long>& positions, long d_model) {
  const long half = d_model / 2;
  const double log_increment = std::log(kWavelengthBase) / static_cast<double>(half - 1);
  Matrix pe(static_cast<Eigen::Index>(positions.size()), d_model);
  for (Eigen::Index r = 0; r < pe.rows(); ++r) {
    const double p = static_cast<double>(positions[r]);
    for (long j = 0; j < half; ++j) {
      const double angle = p * std::exp(-static_cast<double>(j) * log_increment);
      pe(r, j) = static_cast<Scalar>(std::sin(angle));
      pe(r, half + j) = static_cast<Scalar>(std::cos(angle));
    }
  }
  return pe;
}

}  // namespace attnviz
