// ggml block decoders against ggml itself: tests/ggml_golden/ggml-quant-golden.gguf (its
// README) holds, for each type T, a tensor `T` quantized by ggml and `T.deq`, ggml's own
// dequantization of it (F32), dims [256, 32]. Every decoded float must equal ggml's bit for bit.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/ggml_types.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

std::string golden_path() { return std::string(ATTNVIZ_TESTS_DIR) + "/ggml_golden/ggml-quant-golden.gguf"; }

// A minimal GGUF v3 tensor-table reader for this test only, until GgufFile lands: enough to
// find a tensor's type, dims and bytes in a well-formed file (no validation beyond bounds).
struct GoldenTensor {
  std::uint32_t type = 0;
  std::int64_t elements = 1;
  const std::uint8_t* data = nullptr;
  std::uint64_t bytes = 0;
};

class GoldenFile {
 public:
  explicit GoldenFile(const std::string& path) : bytes_(test::read_file(path)) { parse(); }

  const GoldenTensor& tensor(const std::string& name) const {
    for (const auto& [tensor_name, tensor] : tensors_) {
      if (tensor_name == name) return tensor;
    }
    throw std::runtime_error("golden file: no tensor " + name);
  }

 private:
  template <typename T>
  T read() {
    if (pos_ + sizeof(T) > bytes_.size()) throw std::runtime_error("golden file: truncated");
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  std::string read_string() {
    const auto length = read<std::uint64_t>();
    if (pos_ + length > bytes_.size()) throw std::runtime_error("golden file: truncated string");
    std::string s = bytes_.substr(pos_, length);
    pos_ += length;
    return s;
  }

  // Skips one metadata value of GGUF type `type`.
  void skip_value(std::uint32_t type) {
    static constexpr std::size_t kScalarBytes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type == 8) {
      read_string();
    } else if (type == 9) {
      const auto element_type = read<std::uint32_t>();
      const auto count = read<std::uint64_t>();
      for (std::uint64_t i = 0; i < count; ++i) skip_value(element_type);
    } else if (type < std::size(kScalarBytes)) {
      pos_ += kScalarBytes[type];
    } else {
      throw std::runtime_error("golden file: metadata type " + std::to_string(type));
    }
  }

  void parse() {
    if (bytes_.compare(0, 4, "GGUF") != 0) throw std::runtime_error("golden file: not GGUF");
    pos_ = 4;
    read<std::uint32_t>();  // version
    const auto n_tensors = read<std::uint64_t>();
    const auto n_kv = read<std::uint64_t>();
    std::uint64_t alignment = 32;
    for (std::uint64_t i = 0; i < n_kv; ++i) {
      const std::string key = read_string();
      const auto type = read<std::uint32_t>();
      if (key == "general.alignment" && type == 4) {
        alignment = read<std::uint32_t>();
      } else {
        skip_value(type);
      }
    }
    std::vector<std::uint64_t> offsets;
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
      std::string name = read_string();
      GoldenTensor t;
      const auto n_dims = read<std::uint32_t>();
      for (std::uint32_t d = 0; d < n_dims; ++d) t.elements *= static_cast<std::int64_t>(read<std::uint64_t>());
      t.type = read<std::uint32_t>();
      offsets.push_back(read<std::uint64_t>());
      tensors_.emplace_back(std::move(name), t);
    }
    const std::uint64_t data_start = (pos_ + alignment - 1) / alignment * alignment;
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
      GoldenTensor& t = tensors_[i].second;
      const std::int64_t block_elements = ggml_block_elements(t.type);
      if (block_elements == 0) throw std::runtime_error("golden file: unsupported type in " + tensors_[i].first);
      t.bytes = static_cast<std::uint64_t>(t.elements / block_elements) * ggml_block_bytes(t.type);
      if (data_start + offsets[i] + t.bytes > bytes_.size()) throw std::runtime_error("golden file: data past end");
      t.data = reinterpret_cast<const std::uint8_t*>(bytes_.data()) + data_start + offsets[i];
    }
  }

  std::string bytes_;
  std::size_t pos_ = 0;
  std::vector<std::pair<std::string, GoldenTensor>> tensors_;
};

const GoldenFile& golden() {
  static const GoldenFile file(golden_path());
  return file;
}

std::uint32_t float_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// Decodes tensor `name` and requires every float to equal `name.deq` bit for bit, reporting the
// first index that differs.
void check_matches_ggml(const std::string& name, GgmlType expected_type) {
  const GoldenTensor& quantized = golden().tensor(name);
  const GoldenTensor& reference = golden().tensor(name + ".deq");
  REQUIRE(quantized.type == static_cast<std::uint32_t>(expected_type));
  REQUIRE(ggml_type_supported(quantized.type));
  REQUIRE(reference.type == static_cast<std::uint32_t>(GgmlType::F32));
  REQUIRE(quantized.elements == 256 * 32);
  REQUIRE(reference.elements == quantized.elements);

  std::vector<float> decoded(static_cast<std::size_t>(quantized.elements));
  dequantize_row(expected_type, quantized.data, decoded.data(), quantized.elements);
  std::vector<float> expected(decoded.size());
  std::memcpy(expected.data(), reference.data, expected.size() * sizeof(float));

  std::size_t n_different = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    if (float_bits(decoded[i]) != float_bits(expected[i]) && n_different++ == 0) first = i;
  }
  INFO(name << ": " << n_different << " of " << decoded.size() << " floats differ; first at index " << first
            << ": decoded " << decoded[first] << " (0x" << std::hex << float_bits(decoded[first]) << "), ggml "
            << std::dec << expected[first] << " (0x" << std::hex << float_bits(expected[first]) << ")");
  CHECK(n_different == 0);
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
  const GoldenTensor& q4_k = golden().tensor("q4_K");
  const GoldenTensor& reference = golden().tensor("q4_K.deq");
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
      {GgmlType::IQ4_NL, "iq4_nl"},   {GgmlType::IQ1_M, "iq1_m"},   {GgmlType::I8, "i8"},
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
