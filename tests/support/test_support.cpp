#include "support/test_support.hpp"

#include <atomic>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace attnviz::test {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(ATTNVIZ_TESTS_DIR) + "/fixtures/" + name; }

std::string data_file(const std::string& name) { return std::string(ATTNVIZ_DATA_DIR) + "/" + name; }
std::string test_data_file(const std::string& name) { return std::string(ATTNVIZ_TEST_DATA_DIR) + "/" + name; }

float float_from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint32_t bits_of_float(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

Matrix matrix(std::initializer_list<std::initializer_list<double>> rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
  Eigen::Index r = 0;
  for (const auto& row : rows) {
    Eigen::Index c = 0;
    for (double x : row) m(r, c++) = static_cast<Scalar>(x);
    ++r;
  }
  return m;
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return (a.cast<double>() - b.cast<double>()).cwiseAbs().maxCoeff();
}

void check_matrix_near(const Matrix& actual, const Matrix& expected, double tolerance) {
  REQUIRE(actual.rows() == expected.rows());
  REQUIRE(actual.cols() == expected.cols());
  Eigen::Index worst_r = 0, worst_c = 0;
  const double worst =
      (actual.cast<double>() - expected.cast<double>()).cwiseAbs().maxCoeff(&worst_r, &worst_c);
  INFO("worst entry (" << worst_r << ", " << worst_c << "): actual " << actual(worst_r, worst_c) << ", expected "
                       << expected(worst_r, worst_c) << ", |diff| " << worst << ", tolerance " << tolerance);
  CHECK(worst <= tolerance);
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device random;
  path_ = fs::temp_directory_path() /
          ("attnviz-test-" + std::to_string(random()) + "-" + std::to_string(counter++));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::map<std::string, std::string> snapshot(const fs::path& folder) {
  std::map<std::string, std::string> files;
  if (!fs::exists(folder)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    files[entry.path().string()] = entry.is_regular_file() ? read_file(entry.path().string()) : "<dir>";
  }
  return files;
}

std::pair<int, int> png_size(const std::string& path) {
  const std::string bytes = read_file(path);
  REQUIRE(bytes.size() >= 24);
  const auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned char>(bytes[at]) << 24) | (static_cast<unsigned char>(bytes[at + 1]) << 16) |
           (static_cast<unsigned char>(bytes[at + 2]) << 8) | static_cast<unsigned char>(bytes[at + 3]);
  };
  return {be32(16), be32(20)};
}

}  // namespace attnviz::test
