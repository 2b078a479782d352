// Corrupt and truncated fonts are refused before stb_truetype reads them (attack findings:
// a 500-byte prefix of DejaVu Sans crashed the renderer, /dev/zero as --font never returned).
#include "render/font_file.hpp"

#include "core/error.hpp"
#include "render/font.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;

namespace {

std::vector<unsigned char> dejavu() { return read_font_file(default_font_path()); }

std::string problem(const std::vector<unsigned char>& bytes) {
  try {
    check_font_bytes(bytes, "font.ttf");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("font_file: the default font passes the checks", "[render][errors]") {
  CHECK(problem(dejavu()).empty());
}

TEST_CASE("font_file: every truncation of a real font is refused, naming what runs past the end", "[render][errors]") {
  const std::vector<unsigned char> full = dejavu();
  const std::size_t length = GENERATE(0u, 3u, 8u, 12u, 100u, 500u, 5000u, 50000u, 200000u);
  INFO("first " << length << " bytes");
  const std::vector<unsigned char> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(length));
  CHECK_THAT(problem(cut), Contains("font.ttf: cannot read: not a usable TrueType/OpenType font: ") &&
                               Contains("past the end of the file"));
}

TEST_CASE("font_file: a glyph location outside 'glyf' is refused", "[render][errors]") {
  std::vector<unsigned char> bytes = dejavu();
  // Find 'loca' in the table directory and point glyph 1 far past the end of 'glyf'.
  const std::size_t n_tables = (bytes[4] << 8) | bytes[5];
  for (std::size_t t = 0; t < n_tables; ++t) {
    const std::size_t record = 12 + 16 * t;
    if (std::string(reinterpret_cast<const char*>(&bytes[record]), 4) != "loca") continue;
    const std::size_t loca = (std::size_t{bytes[record + 8]} << 24) | (bytes[record + 9] << 16) |
                             (bytes[record + 10] << 8) | bytes[record + 11];
    for (std::size_t k = 0; k < 8; ++k) bytes[loca + 4 + k % 4] = 0x7f;  // long or short: huge either way
  }
  CHECK_THAT(problem(bytes), Contains("starts past the end of table 'glyf'"));
}

TEST_CASE("font_file: only regular files of bounded size are read", "[render][errors]") {
  CHECK_THROWS_WITH(read_font_file("/dev/zero"),
                    "/dev/zero: cannot read: not a regular file (a font must be a .ttf/.otf/.ttc file)");
  CHECK_THROWS_WITH(read_font_file(ATTNVIZ_TESTS_DIR), Contains("not a regular file"));
  CHECK_THROWS_WITH(read_font_file("/no/such/font.ttf"), "/no/such/font.ttf: cannot read: No such file or directory");
  CHECK_THROWS_AS(FontSet({default_font_path(), std::string(ATTNVIZ_TESTS_DIR) + "/fixtures/fa.json"}), InputError);
}

