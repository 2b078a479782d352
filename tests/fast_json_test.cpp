// The simdjson fast path (io/fast_json) against nlohmann, the reference path (issue 7): the same
// document and bit-identical matrices on every real data file and fixture, and a decline (so
// nlohmann reports the error) on every malformed input.
#include "io/fast_json.hpp"

#include <cstring>
#include <filesystem>

#include "io/json_reader.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using nlohmann::json;

namespace {

const std::set<std::string> kMatrixMembers = {"embeddings", "W_Q", "W_K", "W_V", "W_O"};

std::vector<std::string> json_files_under(const std::string& folder) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  }
  return files;
}

bool bit_identical(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() &&
         std::memcmp(a.data(), b.data(), sizeof(Scalar) * static_cast<std::size_t>(a.size())) == 0;
}

// nlohmann's document with the matrix members moved out and read by read_matrix.
FastDocument reference(const std::string& text, const std::string& file) {
  FastDocument out{json::parse(text), {}};
  for (const std::string& key : kMatrixMembers) {
    const auto it = out.root.find(key);
    if (it == out.root.end()) continue;
    out.matrices[key] = read_matrix(*it, file, "/" + key, "matrix");
    out.root.erase(it);
  }
  return out;
}

}  // namespace

TEST_CASE("fast_parse_json: real data and fixtures give nlohmann's document and bit-identical matrices",
          "[io][fast_json]") {
  std::vector<std::string> files = json_files_under(ATTNVIZ_DATA_DIR);
  const std::vector<std::string> fixtures = json_files_under(std::string(ATTNVIZ_TESTS_DIR) + "/fixtures");
  files.insert(files.end(), fixtures.begin(), fixtures.end());
  REQUIRE(files.size() > 20);
  int fast = 0;
  for (const std::string& file : files) {
    INFO(file);
    const std::string text = test::read_file(file);
    const std::optional<FastDocument> document = fast_parse_json(text, kMatrixMembers);
    if (!document) continue;  // declining is always allowed; differing never is
    ++fast;
    const FastDocument expected = reference(text, file);
    CHECK(document->root == expected.root);
    REQUIRE(document->matrices.size() == expected.matrices.size());
    for (const auto& [key, matrix] : expected.matrices) {
      INFO(key);
      CHECK(bit_identical(document->matrices.at(key), matrix));
    }
  }
  CHECK(fast >= static_cast<int>(files.size()) - 2);  // the fast path does take real files
}

TEST_CASE("fast_parse_json: keeps nlohmann's integer, unsigned and float kinds", "[io][fast_json]") {
  const std::string text = R"({"a": 3, "b": -3, "c": -0, "d": 1.5, "e": 18446744073709551615, "f": [true, null, "x"]})";
  const std::optional<FastDocument> document = fast_parse_json(text);
  REQUIRE(document);
  const json expected = json::parse(text);
  CHECK(document->root == expected);
  for (const char* key : {"a", "b", "c", "d", "e"}) {
    INFO(key);
    CHECK(document->root.at(key).type() == expected.at(key).type());
  }
}

TEST_CASE("fast_parse_json: declines every file of the invalid catalogue that nlohmann cannot parse",
          "[io][fast_json][errors]") {
  for (const std::string& file : json_files_under(std::string(ATTNVIZ_TESTS_DIR) + "/invalid")) {
    INFO(file);
    const std::string text = test::read_file(file);
    const bool nlohmann_parses = json::accept(text);
    const std::optional<FastDocument> document = fast_parse_json(text, kMatrixMembers);
    const bool refused_by_loader = file.find("duplicate_key") != std::string::npos ||
                                   file.find("nested_too_deep") != std::string::npos;
    if (!nlohmann_parses || refused_by_loader) CHECK_FALSE(document);
  }
}

TEST_CASE("fast_parse_json: declines what nlohmann refuses or reports, accepts only identical documents",
          "[io][fast_json][errors]") {
  const std::string text = GENERATE(as<std::string>{},
      R"({"a": [1, 2,]})", R"({"a": 1,})", R"({"a" 1})", R"({"a": 1} x)", R"({"a": 1} {})", R"({"a": [1, 2})",
      R"({"a": 1, "a": 2})", R"({"o": {"k": 1, "k": 2}})", R"({"s": "tab	here"})", R"({"s": "\ud800"})",
      R"({"s": "\ud83d\ude00"})", R"({"n": 1e400})", R"({"n": 123456789012345678901234567890})", R"({"n": 01})",
      R"({"n": -})", R"({"n": nul})", R"({"n": truex})", R"([1, 2])", R"("text")", "",
      R"({"embeddings": [[1, 2], [3]]})", R"({"embeddings": [[1, "2"]]})", R"({"embeddings": [[1e39]]})",
      R"({"embeddings": []})", R"({"embeddings": [[]]})", R"({"embeddings": [[-0, 1]]})",
      R"({"embeddings": [[1, 2]], "embeddings": [[3, 4]]})",
      "{\"d\": " + std::string(40, '[') + std::string(40, ']') + "}",
      // More than 19 significant digits: simdjson 3.0.1 reads these as 0 (attack finding).
      R"({"scale": 0.50000000000000000000000})", R"({"x": 3.14159265358979323846264338327950288})",
      R"({"embeddings": [[1.0000000000000000000000000001, 0.25000000000000000000]]})",
      R"({"embeddings": [[1000000000000000000000000000000000e-34, 2]]})",
      // ... also behind leading zeros, sign and point, which the guard's shortcut skips.
      R"({"embeddings": [[-0.000123456789012345678912345, 2]]})", R"({"embeddings": [[0.0123456789012345678912345e-3]]})",
      R"({"embeddings": [[-00.5, 2]]})", R"({"embeddings": [[-.5, 2]]})");
  INFO(text);
  const std::optional<FastDocument> document = fast_parse_json(text, kMatrixMembers);
  if (!document) return;
  FastDocument expected;
  REQUIRE_NOTHROW(expected = reference(text, "text"));
  CHECK(document->root == expected.root);
  for (const auto& [key, matrix] : expected.matrices) CHECK(bit_identical(document->matrices.at(key), matrix));
}

TEST_CASE("fast_parse_json: leading zeros are not significant digits, so Python's repr stays on the fast path",
          "[io][fast_json]") {
  // A regression of the >19-digit guard: Python writes 0.00012345678901234567 (17 significant
  // digits, 22 characters); declining it sent every real weights file to the slow path.
  const std::string text = R"({"embeddings": [[0.00012345678901234567, -0.0012345678901234567, 1.2345678901234567e-05]]})";
  const std::optional<FastDocument> document = fast_parse_json(text, kMatrixMembers);
  REQUIRE(document);
  CHECK(bit_identical(document->matrices.at("embeddings"), reference(text, "text").matrices.at("embeddings")));
}

TEST_CASE("float32 range: the shortest spelling of FLT_MAX is read as FLT_MAX on both paths, beyond it is refused",
          "[io][fast_json][errors]") {
  // "3.4028235e38" is what numpy and attnviz's own dumps write for FLT_MAX; as a double it is
  // just above FLT_MAX and rounds to it (attack finding: it was refused).
  const std::string text = R"({"embeddings": [[3.4028235e38, -3.4028235e38, 1e-45]]})";
  const std::optional<FastDocument> document = fast_parse_json(text, kMatrixMembers);
  REQUIRE(document);
  const Matrix& m = document->matrices.at("embeddings");
  CHECK(m(0, 0) == std::numeric_limits<float>::max());
  CHECK(m(0, 1) == -std::numeric_limits<float>::max());
  CHECK(bit_identical(m, reference(text, "text").matrices.at("embeddings")));
  // 3.4028236e38 rounds to infinity in float32: both paths refuse it.
  const std::string over = R"({"embeddings": [[3.4028236e38]]})";
  CHECK_FALSE(fast_parse_json(over, kMatrixMembers));
  CHECK_THROWS_WITH(reference(over, "over.json"), Catch::Contains("over.json: /embeddings/0/0") &&
                                                      Catch::Contains("within float32 range"));
}
