// The model.bin reader on the layouts of later CTranslate2 versions: small files built here
// (aliases, quantized weights) and the real aren-transliteration model rewritten by
// scripts/ct2_writer.py as binary versions 3–6 with the spec configuration, in float32,
// float16, int8 and int16, each run and compared with the original.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "model/ct2_model.hpp"
#include "model/formats/ct2_file.hpp"
#include "support/scripts.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;

namespace {

// Little-endian model.bin bytes, written the way model_spec.py's _serialize does.
class ModelBytes {
 public:
  void u8(std::uint8_t v) { bytes_ += static_cast<char>(v); }
  void u32(std::uint32_t v) { bytes_.append(reinterpret_cast<const char*>(&v), 4); }
  void string(const std::string& s) {
    const auto n = static_cast<std::uint16_t>(s.size() + 1);
    bytes_.append(reinterpret_cast<const char*>(&n), 2);
    bytes_ += s;
    bytes_ += '\0';
  }
  void header(std::uint32_t version, std::uint32_t variables) {
    u32(version);
    string("TransformerSpec");
    u32(7);
    u32(variables);
  }
  // A variable with type id `type` and raw bytes `data`.
  void variable(const std::string& name, std::vector<std::uint32_t> shape, std::uint8_t type, const std::string& data) {
    string(name);
    u8(static_cast<std::uint8_t>(shape.size()));
    for (std::uint32_t d : shape) u32(d);
    u8(type);
    u32(static_cast<std::uint32_t>(data.size()));
    bytes_ += data;
  }
  template <typename T>
  static std::string raw(std::initializer_list<T> values) {
    std::string out;
    for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
    return out;
  }
  std::string write(const test::TempDir& dir) const {
    const std::string path = dir.file("model.bin");
    std::ofstream(path, std::ios::binary) << bytes_;
    return path;
  }

 private:
  std::string bytes_;
};

constexpr std::uint8_t kFloat32 = 0, kInt8 = 1, kInt16 = 2, kFloat16 = 4, kBFloat16 = 5;

struct Captured {
  ModelRunInfo info;
  std::vector<AttentionBlock> blocks;
};

Captured run_dir(const std::string& dir, const std::string& source_tokens) {
  Ct2Request request;
  request.model_dir = dir;
  request.source_tokens = source_tokens;
  Captured c;
  std::vector<std::string> warnings;
  c.info = run_ct2_model(request, [&](AttentionBlock&& b) { c.blocks.push_back(std::move(b)); }, warnings);
  CHECK(warnings.empty());
  return c;
}

// Largest difference between the same blocks' weights of two runs on the same tokens.
double worst_block_diff(const Captured& a, const Captured& b) {
  REQUIRE(a.blocks.size() == b.blocks.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.blocks.size(); ++i) {
    REQUIRE(a.blocks[i].record.weights.size() == b.blocks[i].record.weights.size());
    for (std::size_t h = 0; h < a.blocks[i].record.weights.size(); ++h) {
      worst = std::max(worst, test::max_abs_diff(a.blocks[i].record.weights[h], b.blocks[i].record.weights[h]));
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("ct2_file: aliases resolve to their variable and its scale, float16 and bfloat16 widen exactly", "[ct2]") {
  ModelBytes m;
  m.header(6, 4);
  m.variable("a/weight", {2, 2}, kInt8, ModelBytes::raw<std::int8_t>({1, 2, 3, 4}));
  m.variable("a/weight_scale", {2}, kFloat32, ModelBytes::raw<float>({2.0f, 4.0f}));
  m.variable("h/bias", {2}, kFloat16, ModelBytes::raw<std::uint16_t>({0x3C00, 0xC000}));  // 1, -2
  m.variable("h/gamma", {2}, kBFloat16, ModelBytes::raw<std::uint16_t>({0x3FC0, 0xBE80}));  // 1.5, -0.25
  m.u32(1);
  m.string("b/weight");
  m.string("a/weight");
  const test::TempDir dir;
  const Ct2File file(m.write(dir));
  CHECK(file.binary_version() == 6);
  CHECK(file.spec_name() == "TransformerSpec");
  CHECK(file.spec_revision() == 7);
  const Matrix b = file.matrix("b/weight", "test");
  CHECK(b == test::matrix({{0.5, 1.0}, {0.75, 1.0}}));
  CHECK(file.find("b/weight_scale") == file.find("a/weight_scale"));
  CHECK(file.vector("h/bias", "test") == (Vector(2) << 1.0f, -2.0f).finished());
  CHECK(file.vector("h/gamma", "test") == (Vector(2) << 1.5f, -0.25f).finished());
}

TEST_CASE("ct2_file: int16 weights are divided by their one scale", "[ct2]") {
  ModelBytes m;
  m.header(5, 2);
  m.variable("w/weight", {1, 3}, kInt16, ModelBytes::raw<std::int16_t>({1024, -512, 0}));
  m.variable("w/weight_scale", {}, kFloat32, ModelBytes::raw<float>({1024.0f}));
  m.u32(0);
  const test::TempDir dir;
  const Ct2File file(m.write(dir));
  CHECK(file.matrix("w/weight", "test") == test::matrix({{1.0, -0.5, 0.0}}));
  CHECK(file.integer("w/weight_scale") == 1024);
}

TEST_CASE("ct2_file: malformed later-version files are refused naming the variable", "[ct2][errors]") {
  const test::TempDir dir;
  SECTION("a quantized weight without its scale") {
    ModelBytes m;
    m.header(4, 1);
    m.variable("w/weight", {2, 2}, kInt8, ModelBytes::raw<std::int8_t>({1, 2, 3, 4}));
    m.u32(0);
    const Ct2File file(m.write(dir));
    CHECK_THROWS_WITH(file.matrix("w/weight", "test"), Contains("w/weight is int8") && Contains("w/weight_scale"));
  }
  SECTION("an unknown type id") {
    ModelBytes m;
    m.header(6, 1);
    m.variable("w/weight", {1}, 9, std::string(4, '\0'));
    m.u32(0);
    CHECK_THROWS_WITH(Ct2File(m.write(dir)), Contains("variable w/weight: unknown type id 9"));
  }
  SECTION("a byte count that disagrees with the shape") {
    ModelBytes m;
    m.header(6, 1);
    m.variable("w/weight", {2, 3}, kFloat32, std::string(20, '\0'));
    m.u32(0);
    CHECK_THROWS_WITH(Ct2File(m.write(dir)), Contains("w/weight: 20 bytes stored") && Contains("[2, 3]") &&
                                                 Contains("needs 24 bytes"));
  }
  SECTION("an alias to a missing variable") {
    ModelBytes m;
    m.header(6, 0);
    m.u32(1);
    m.string("b/weight");
    m.string("nowhere/weight");
    CHECK_THROWS_WITH(Ct2File(m.write(dir)), Contains("alias b/weight names missing variable nowhere/weight"));
  }
  SECTION("a binary version beyond 6") {
    ModelBytes m;
    m.header(7, 0);
    CHECK_THROWS_WITH(Ct2File(m.write(dir)), Contains("binary version 7 is not supported"));
  }
}

TEST_CASE("ct2_file: the model rewritten by ct2_writer.py as later versions runs the same", "[ct2]") {
  struct Variant {
    int version;
    std::string dtype;
    double tolerance;  // on every attention weight of every block, against the original file
    bool txt_vocabularies = false;  // .txt vocabularies as CTranslate2 2.x wrote them, else .json
  };
  // float32 is the same numbers in another layout: identical results. float16 rounds each
  // weight to 11 significant bits (relative 2^-11); int16 to 2^-10 of the largest weight; int8
  // to 1/127 of a row's largest weight.
  const Variant variant = GENERATE(Variant{6, "float32", 0.0}, Variant{3, "float32", 0.0, true},
                                   Variant{5, "float16", 5e-3}, Variant{4, "int16", 2e-2},
                                   Variant{6, "int8", 5e-2});
  const std::string original = test::data_file("aren-translit/model");
  const test::TempDir dir;
  const std::string out = dir.file("model");
  std::vector<std::string> args{original, out, "--version", std::to_string(variant.version), "--dtype", variant.dtype};
  if (variant.txt_vocabularies) args.push_back("--txt-vocabularies");
  test::run_script("ct2_writer.py", args);
  CHECK(std::filesystem::exists(out + (variant.txt_vocabularies ? "/target_vocabulary.txt" : "/target_vocabulary.json")));

  const std::string source = "م ا ك د و ن ا ل د";
  const Captured expected = run_dir(original, source);
  const Captured actual = run_dir(out, source);
  CHECK(actual.info.generated_text == "mcdonald");
  CHECK(actual.info.target_tokens == expected.info.target_tokens);
  const double worst = worst_block_diff(actual, expected);
  WARN("binary version " << variant.version << ", " << variant.dtype
                         << ": max |weight - float32 original| over all 18 blocks = " << worst);
  CHECK(worst <= variant.tolerance);
}
