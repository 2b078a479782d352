// llama.cpp's GELU (model/ggml_gelu): a float16 table of the tanh formula, 0 and x outside ±10.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/block_pieces.hpp"
#include "model/ggml_gelu.hpp"

using namespace attnviz;

TEST_CASE("ggml_gelu: the tanh GELU of x rounded to float16, itself rounded to float16, 0 below -10 and x above 10", "[model][encoder]") {
  // GELU(1) = 0.8411920; float16 values near it are 2^-11 apart: 1723 · 2^-11 = 0.84130859375.
  CHECK(gelu_ggml(1.0f) == 0.84130859375f);
  // 1.0001 rounds to float16 1.0, so it reads the same entry.
  CHECK(gelu_ggml(1.0001f) == gelu_ggml(1.0f));
  CHECK(gelu_ggml(-10.0f) == 0.0f);
  CHECK(gelu_ggml(-9.99f) == 0.0f);  // the table's own value: GELU(-9.99) underflows float16
  CHECK(gelu_ggml(10.5f) == 10.5f);
  CHECK(gelu_ggml(0.0f) == 0.0f);
  // Everywhere within float16 rounding of the formula.
  for (float x = -9.5f; x < 9.5f; x += 0.37f)
    CHECK(std::abs(gelu_ggml(x) - static_cast<float>(gelu_tanh(static_cast<double>(x)))) <= 2e-3f * (1.0f + std::abs(x)));
  const Matrix m = (Matrix(1, 3) << -11.0f, 1.0f, 12.0f).finished();
  const Matrix g = gelu_ggml(m);
  CHECK(g(0, 0) == 0.0f);
  CHECK(g(0, 1) == 0.84130859375f);
  CHECK(g(0, 2) == 12.0f);
  // The matrix form (8 at a time where F16C converts) equals the one-value form everywhere,
  // halfway cases between float16 values and the ±10 edges included.
  Matrix many(1, 4099);
  for (Eigen::Index i = 0; i < many.cols(); ++i) many(0, i) = -10.25f + 0.005f * static_cast<float>(i);
  many(0, 7) = 1.0f + 1.0f / 2048.0f;   // halfway between float16 1 and 1 + 2^-10: rounds to even (1)
  many(0, 9) = 1.0f + 3.0f / 2048.0f;   // halfway between 1 + 2^-10 and 1 + 2^-9: rounds to even (1 + 2^-9)
  many(0, 11) = -10.0f;
  many(0, 13) = 10.0f;
  const Matrix all = gelu_ggml(many);
  int differing = 0;
  for (Eigen::Index i = 0; i < many.cols(); ++i) differing += all(0, i) != gelu_ggml(many(0, i));
  CHECK(differing == 0);
  CHECK(all(0, 7) == gelu_ggml(1.0f));
}
