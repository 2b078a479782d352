// ggml block decoders against ggml itself: tests/data/ggml-quant-golden/ggml-quant-golden.gguf
// (tests/data/README.md) holds, for each type T, a tensor `T` quantized by ggml and `T.deq`, ggml's own
// dequantization of it (F32), dims [256, 32]. Every decoded float must equal ggml's bit for bit,
// through dequantize_row and through GgufFile::matrix.
#include <cstring>
#include <string>
#include <vector>

#include "model/formats/ggml_types.hpp"
#include "model/formats/gguf_file.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

std::string golden_path() { return attnviz::test::test_data_file("ggml-quant-golden/ggml-quant-golden.gguf"); }

const GgufFile& golden() {
  static const GgufFile file(golden_path());
  return file;
}

const GgufTensorInfo& golden_tensor(const std::string& name) {
  const GgufTensorInfo* info = golden().find_tensor(name);
  INFO("tensor " << name);
  REQUIRE(info != nullptr);
  return *info;
}

std::uint32_t float_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// CHECKs that decoded[i] has the bits of expected[i] for every i; on failure reports how many
// differ and the first index that does.
void check_same_bits(const std::string& what, const float* decoded, const std::vector<float>& expected) {
  std::size_t n_different = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (float_bits(decoded[i]) != float_bits(expected[i]) && n_different++ == 0) first = i;
  }
  INFO(what << ": " << n_different << " of " << expected.size() << " floats differ; first at index " << first
            << ": decoded " << decoded[first] << " (0x" << std::hex << float_bits(decoded[first]) << "), ggml "
            << std::dec << expected[first] << " (0x" << std::hex << float_bits(expected[first]) << ")");
  CHECK(n_different == 0);
}

// Decodes tensor `name` and requires every float to equal `name.deq` bit for bit, reporting the
// first index that differs.
void check_matches_ggml(const std::string& name, GgmlType expected_type) {
  const GgufTensorInfo& quantized = golden_tensor(name);
  const GgufTensorInfo& reference = golden_tensor(name + ".deq");
  REQUIRE(quantized.type == static_cast<std::uint32_t>(expected_type));
  REQUIRE(ggml_type_supported(quantized.type));
  REQUIRE(reference.type == static_cast<std::uint32_t>(GgmlType::F32));
  REQUIRE(quantized.dims == std::vector<std::int64_t>{256, 32});
  REQUIRE(reference.dims == quantized.dims);
  const std::int64_t n = quantized.num_elements();
  REQUIRE(quantized.bytes == static_cast<std::uint64_t>(n / ggml_block_elements(quantized.type)) *
                                 ggml_block_bytes(quantized.type));

  std::vector<float> decoded(static_cast<std::size_t>(n));
  dequantize_row(expected_type, quantized.data, decoded.data(), n);
  std::vector<float> expected(decoded.size());
  REQUIRE(reference.bytes == expected.size() * sizeof(float));
  std::memcpy(expected.data(), reference.data, reference.bytes);

  check_same_bits(name + " (dequantize_row)", decoded.data(), expected);
  // The same through the GGUF reader, one 256-float row at a time.
  const Matrix rows = golden().matrix(quantized);
  REQUIRE(rows.rows() == 32);
  REQUIRE(rows.cols() == 256);
  check_same_bits(name + " (GgufFile::matrix)", rows.data(), expected);
}

}  // namespace

TEST_CASE("ggml dequant: f16 matches ggml bit for bit", "[ggml]") { check_matches_ggml("f16", GgmlType::F16); }
TEST_CASE("ggml dequant: bf16 matches ggml bit for bit", "[ggml]") { check_matches_ggml("bf16", GgmlType::BF16); }
TEST_CASE("ggml dequant: q4_0 matches ggml bit for bit", "[ggml]") { check_matches_ggml("q4_0", GgmlType::Q4_0); }
TEST_CASE("ggml dequant: q4_1 matches ggml bit for bit", "[ggml]") { check_matches_ggml("q4_1", GgmlType::Q4_1); }
TEST_CASE("ggml dequant: q5_0 matches ggml bit for bit", "[ggml]") { check_matches_ggml("q5_0", GgmlType::Q5_0); }
TEST_CASE("ggml dequant: q5_1 matches ggml bit for bit", "[ggml]") { check_matches_ggml("q5_1", GgmlType::Q5_1); }
TEST_CASE("ggml dequant: q8_0 matches ggml bit for bit", "[ggml]") { check_matches_ggml("q8_0", GgmlType::Q8_0); }
TEST_CASE("ggml dequant: q2_K matches ggml bit for bit", "[ggml]") { check_matches_ggml("q2_K", GgmlType::Q2_K); }
TEST_CASE("ggml dequant: q3_K matches ggml bit for bit", "[ggml]") { check_matches_ggml("q3_K", GgmlType::Q3_K); }
TEST_CASE("ggml dequant: q4_K matches ggml bit for bit", "[ggml]") { check_matches_ggml("q4_K", GgmlType::Q4_K); }
TEST_CASE("ggml dequant: q5_K matches ggml bit for bit", "[ggml]") { check_matches_ggml("q5_K", GgmlType::Q5_K); }
TEST_CASE("ggml dequant: q6_K matches ggml bit for bit", "[ggml]") { check_matches_ggml("q6_K", GgmlType::Q6_K); }

TEST_CASE("ggml types: block sizes are ggml's", "[ggml]") {
  struct Expected {
    GgmlType type;
    const char* name;
    std::int64_t elements;
    std::size_t bytes;
  };
  // ggml-common.h's static_asserts on sizeof(block_*).
  const Expected table[] = {
      {GgmlType::F32, "f32", 1, 4},       {GgmlType::F16, "f16", 1, 2},       {GgmlType::BF16, "bf16", 1, 2},
      {GgmlType::Q4_0, "q4_0", 32, 18},   {GgmlType::Q4_1, "q4_1", 32, 20},   {GgmlType::Q5_0, "q5_0", 32, 22},
      {GgmlType::Q5_1, "q5_1", 32, 24},   {GgmlType::Q8_0, "q8_0", 32, 34},   {GgmlType::Q2_K, "q2_K", 256, 84},
      {GgmlType::Q3_K, "q3_K", 256, 110}, {GgmlType::Q4_K, "q4_K", 256, 144}, {GgmlType::Q5_K, "q5_K", 256, 176},
      {GgmlType::Q6_K, "q6_K", 256, 210},
  };
  for (const Expected& e : table) {
    const auto id = static_cast<std::uint32_t>(e.type);
    INFO(e.name);
    CHECK(ggml_type_name(id) == e.name);
    CHECK(ggml_type_supported(id));
    CHECK(ggml_block_elements(id) == e.elements);
    CHECK(ggml_block_bytes(id) == e.bytes);
  }
}

TEST_CASE("ggml types: a decoded row spans whole blocks of the documented size", "[ggml]") {
  // Two q4_K blocks of 144 bytes: the second block's floats come from bytes [144, 288).
  const GgufTensorInfo& q4_k = golden_tensor("q4_K");
  const GgufTensorInfo& reference = golden_tensor("q4_K.deq");
  REQUIRE(q4_k.bytes == 32 * 144);
  std::vector<float> second(256);
  dequantize_row(GgmlType::Q4_K, q4_k.data + 144, second.data(), 256);
  CHECK(std::memcmp(second.data(), reference.data + 256 * sizeof(float), 256 * sizeof(float)) == 0);
}

TEST_CASE("ggml types: unsupported and unknown ids are refused by name", "[ggml]") {
  struct Expected {
    GgmlType type;
    const char* name;
  };
  const Expected table[] = {
      {GgmlType::Q8_1, "q8_1"},       {GgmlType::Q8_K, "q8_K"},     {GgmlType::IQ2_XXS, "iq2_xxs"},
      {GgmlType::IQ3_S, "iq3_s"},     {GgmlType::IQ1_M, "iq1_m"},   {GgmlType::I8, "i8"},
      {GgmlType::F64, "f64"},         {GgmlType::TQ1_0, "tq1_0"},   {GgmlType::TQ2_0, "tq2_0"},
  };
  for (const Expected& e : table) {
    const auto id = static_cast<std::uint32_t>(e.type);
    INFO(e.name);
    CHECK(ggml_type_name(id) == e.name);
    CHECK_FALSE(ggml_type_supported(id));
    CHECK(ggml_block_elements(id) == 0);
    CHECK(ggml_block_bytes(id) == 0);
  }
  CHECK(ggml_type_name(4) == "type 4");  // q4_2, removed from ggml
  CHECK_FALSE(ggml_type_supported(4));
  CHECK(ggml_type_name(1000) == "type 1000");
}
