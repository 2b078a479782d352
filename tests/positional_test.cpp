// Sinusoidal position encodings (attention/positional): both layouts against their formulas.
#include <cmath>

#include "attention/positional.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;

TEST_CASE("positional: sinusoidal_encoding interleaves sin and cos as in Vaswani et al.", "[positional]") {
  const Matrix pe = sinusoidal_encoding({0, 3}, 6);
  for (int i = 0; i < 3; ++i) {
    const double angle = 3.0 / std::pow(10000.0, 2.0 * i / 6.0);
    CHECK_THAT(pe(1, 2 * i), WithinAbs(std::sin(angle), 1e-7));
    CHECK_THAT(pe(1, 2 * i + 1), WithinAbs(std::cos(angle), 1e-7));
    CHECK(pe(0, 2 * i) == 0);
    CHECK(pe(0, 2 * i + 1) == 1);
  }
}

TEST_CASE("positional: sinusoidal_encoding_halves puts sines first with ln(10000)/(d/2 - 1)", "[positional]") {
  // The aren-transliteration README's formula for d_model 32: PE[t, j] = sin((t+1) e^(-j ln(10000)/15)),
  // PE[t, 16 + j] = cos(…), j = 0…15.
  const Matrix pe = sinusoidal_encoding_halves({1, 5}, 32);
  REQUIRE(pe.rows() == 2);
  REQUIRE(pe.cols() == 32);
  for (int j = 0; j < 16; ++j) {
    const double inv = std::exp(-j * std::log(10000.0) / 15.0);
    CHECK_THAT(pe(1, j), WithinAbs(std::sin(5 * inv), 1e-7));
    CHECK_THAT(pe(1, 16 + j), WithinAbs(std::cos(5 * inv), 1e-7));
  }
  CHECK_THAT(pe(0, 0), WithinAbs(std::sin(1.0), 1e-7));
  CHECK_THAT(pe(0, 15), WithinAbs(std::sin(1e-4), 1e-9));
}
