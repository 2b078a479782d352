// Issue 36: the safetensors writer streams tensors after room kept for the header. Read back by
// the project's safetensors reader (which validates as the safetensors crate does): the values,
// the metadata, and a header that outgrew its room (the data moved once, nothing lost).
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "io/safetensors_writer.hpp"
#include "model/formats/safetensors_file.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::TempDir;

namespace {

std::string empty_file(const TempDir& dir) {
  const std::string path = dir.file("out.safetensors");
  std::ofstream(path).flush();
  return path;
}

std::vector<float> values_of(const SafetensorsTensor& t) {
  std::vector<float> out(static_cast<std::size_t>(t.num_elements()));
  std::memcpy(out.data(), t.data, t.bytes);
  return out;
}

}  // namespace

TEST_CASE("safetensors writer: tensors streamed in parts read back with their metadata", "[safetensors][issue36]") {
  TempDir dir;
  const std::string path = empty_file(dir);
  std::vector<float> a(2 * 3 * 4);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * static_cast<float>(i) - 3.0f;
  const std::vector<double> b = {1.0 / 3.0, -2.5};
  {
    SafetensorsWriter writer(path, "out.safetensors");
    writer.begin("blocks.0.attn.hook_pattern", "F32", {2, 3, 4});
    writer.write(a.data(), 12 * sizeof(float));  // one head, then the other
    writer.write(a.data() + 12, 12 * sizeof(float));
    writer.add("rollout", {2}, b.data());
    writer.finish({{"format", "\"attnviz.model_attention\""}});
    CHECK(writer.header_bytes() % 8 == 0);
    CHECK(std::filesystem::file_size(path) == writer.header_bytes() + a.size() * 4 + b.size() * 8);
  }
  const SafetensorsFile file(path);
  const SafetensorsTensor* pattern = file.find("blocks.0.attn.hook_pattern");
  REQUIRE(pattern != nullptr);
  CHECK(pattern->shape == std::vector<std::int64_t>{2, 3, 4});
  CHECK(values_of(*pattern) == a);
  const SafetensorsTensor* rollout = file.find("rollout");
  REQUIRE(rollout != nullptr);
  CHECK(rollout->dtype == "F64");
  double read[2];
  std::memcpy(read, rollout->data, sizeof read);
  CHECK(read[0] == b[0]);
  CHECK(read[1] == b[1]);
  CHECK(file.metadata().at("format") == "\"attnviz.model_attention\"");
}

TEST_CASE("safetensors writer: a header larger than its room moves the data, which stays whole", "[safetensors][issue36]") {
  TempDir dir;
  const std::string path = empty_file(dir);
  std::vector<float> values(5000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 1.25f;
  std::map<std::string, std::string> metadata;
  for (int i = 0; i < 200; ++i) metadata["key" + std::to_string(i)] = std::string(50, 'x');  // ~12 KB of header
  {
    SafetensorsWriter writer(path, "out.safetensors");
    writer.reserve_header(64);
    writer.add("t", {5000}, values.data());
    writer.add("u", {10, 10}, values.data());
    writer.finish(metadata);
    CHECK(writer.header_bytes() > 64);
  }
  const SafetensorsFile file(path);
  CHECK(values_of(*file.find("t")) == values);
  CHECK(values_of(*file.find("u")) == std::vector<float>(values.begin(), values.begin() + 100));
  CHECK(file.metadata().size() == 200);
}
