// Shared test helpers: fixture paths, matrix comparison with the worst index reported
// (llm.c's check_tensor), a temporary folder that cleans up, and folder snapshots for
// "nothing was written" checks.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/types.hpp"

namespace attnviz::test {

/// Path of a file under tests/fixtures/.
std::string fixture(const std::string& name);
/// Path of a file under data/.
std::string data_file(const std::string& name);
/// Path of a file under tests/data/ (real model files and their references; tests/data/README.md
/// gives each file's source, licence and sha256).
std::string test_data_file(const std::string& name);

/// The float whose IEEE-754 bits are `bits` (references written as exact bit patterns).
float float_from_bits(std::uint32_t bits);
/// The IEEE-754 bits of f.
std::uint32_t bits_of_float(float f);

/// A Matrix from rows written inline.
Matrix matrix(std::initializer_list<std::initializer_list<double>> rows);

/// Largest |a - b| over all entries; REQUIREs equal shapes.
double max_abs_diff(const Matrix& a, const Matrix& b);

/// CHECKs that |actual - expected| <= tolerance everywhere, reporting the worst entry.
void check_matrix_near(const Matrix& actual, const Matrix& expected, double tolerance);

/// A fresh empty folder under the system temp dir, removed with its content on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// Every file below `folder` with its bytes: equal snapshots = nothing was written.
std::map<std::string, std::string> snapshot(const std::filesystem::path& folder);

/// The bytes of a file.
std::string read_file(const std::string& path);

/// Width and height of a PNG file, from its IHDR chunk; REQUIREs at least its 24 bytes.
std::pair<int, int> png_size(const std::string& path);

}  // namespace attnviz::test
