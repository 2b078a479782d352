// f16 and bf16 products (model/formats/half_matmul) against ggml itself:
// tests/data/quant-blocks/ggml-half-products.json holds W, X and the Y that ggml_mul_mat gave on
// llama.cpp's own CPU library (scripts/ggml_half_reference.c), through both of its kernels
// (tinyBLAS for two rows or more, ggml_vec_dot_f16/bf16 for one row or an odd k). Equal bit for bit:
// the next product rounds these outputs again, so a last-bit difference can grow into a whole
// float16 step (a stories260K F16 copy was 1e-4 away from llama.cpp's attention that way).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/formats/half_matmul.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

TEST_CASE("f16 and bf16 products equal ggml_mul_mat's bit for bit, through tinyBLAS and vec_dot", "[quant]") {
  std::ifstream in(test::test_data_file("quant-blocks/ggml-half-products.json"));
  const auto data = nlohmann::json::parse(in);
  REQUIRE(data["cases"].size() == 8);
  for (const auto& c : data["cases"]) {
    const std::string type = c["type"];
    const long n = c["n"], k = c["k"], m = c["m"];
    INFO(type << " n " << n << " k " << k);
    const std::string hex = c["w"];
    std::vector<std::uint16_t> w(static_cast<std::size_t>(m * k));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint16_t>(std::stoi(hex.substr(4 * i, 4), nullptr, 16));
    Matrix x(n, k);
    for (long i = 0; i < n * k; ++i) x.data()[i] = test::float_from_bits(c["x"][static_cast<std::size_t>(i)]);
    const QuantRows rows{type == "f16" ? GgmlType::F16 : GgmlType::BF16, reinterpret_cast<const std::uint8_t*>(w.data()), m, k};
    const Matrix y = half_matmul(x, rows, 2);
    long unequal = 0;
    for (long i = 0; i < n; ++i)
      for (long r = 0; r < m; ++r)
        if (test::bits_of_float(y(i, r)) != c["y"][static_cast<std::size_t>(i * m + r)].get<std::uint32_t>()) ++unequal;
    CHECK(unequal == 0);
  }
}

TEST_CASE("half_matmul refuses another weight type and a width that does not match", "[quant]") {
  const std::vector<std::uint16_t> w(32, 0x3c00);  // 1.0 in float16
  CHECK_THROWS_AS(half_matmul(Matrix::Ones(2, 32), QuantRows{GgmlType::Q8_0, reinterpret_cast<const std::uint8_t*>(w.data()), 1, 32}),
                  std::invalid_argument);
  CHECK_THROWS_AS(half_matmul(Matrix::Ones(2, 16), QuantRows{GgmlType::F16, reinterpret_cast<const std::uint8_t*>(w.data()), 1, 32}),
                  std::invalid_argument);
  const Matrix y = half_matmul(Matrix::Ones(2, 32), QuantRows{GgmlType::F16, reinterpret_cast<const std::uint8_t*>(w.data()), 1, 32});
  CHECK(y(0, 0) == 32.0f);
  CHECK(y(1, 0) == 32.0f);
}
