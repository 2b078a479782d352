#include "render/font_file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "core/error.hpp"

namespace attnviz {

namespace {

// Sizes of the OpenType structures read here (OpenType spec, "Font file" chapter).
constexpr std::size_t kOffsetTableBytes = 12;
constexpr std::size_t kTableRecordBytes = 16;
constexpr std::size_t kCollectionHeaderBytes = 16;
constexpr std::size_t kHeadIndexToLocFormat = 50;
constexpr std::size_t kMaxpNumGlyphs = 4;

struct Table {
  std::uint64_t offset = 0, length = 0;
};

// Big-endian reads; the caller has checked the range.
std::uint32_t u32(const std::vector<unsigned char>& b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}
std::uint16_t u16(const std::vector<unsigned char>& b, std::size_t at) {
  return static_cast<std::uint16_t>((b[at] << 8) | b[at + 1]);
}

[[noreturn]] void corrupt(const std::string& path, const std::string& detail) {
  throw InputError::unreadable(path, "not a usable TrueType/OpenType font: " + detail);
}

void need(const std::vector<unsigned char>& b, std::uint64_t end, const std::string& path, const std::string& what) {
  if (end > b.size()) {
    corrupt(path, what + " ends at byte " + std::to_string(end) + ", past the end of the file (" +
                      std::to_string(b.size()) + " bytes; truncated?)");
  }
}

std::map<std::string, Table> table_directory(const std::vector<unsigned char>& b, const std::string& path) {
  need(b, 4, path, "the file header");
  std::size_t font = 0;
  if (std::memcmp(b.data(), "ttcf", 4) == 0) {  // a collection: use its first font
    need(b, kCollectionHeaderBytes, path, "the collection header");
    font = u32(b, 12);
  }
  need(b, std::uint64_t{font} + kOffsetTableBytes, path, "the table directory");
  const std::uint32_t version = u32(b, font);
  if (version != 0x00010000u && std::memcmp(&b[font], "OTTO", 4) != 0 && std::memcmp(&b[font], "true", 4) != 0) {
    throw InputError::unreadable(path, "not a TrueType/OpenType font (no sfnt version at its start)");
  }
  const std::size_t n_tables = u16(b, font + 4);
  need(b, font + kOffsetTableBytes + std::uint64_t{n_tables} * kTableRecordBytes, path, "the table directory");
  std::map<std::string, Table> tables;
  for (std::size_t t = 0; t < n_tables; ++t) {
    const std::size_t record = font + kOffsetTableBytes + t * kTableRecordBytes;
    const std::string tag(reinterpret_cast<const char*>(&b[record]), 4);
    const Table table{u32(b, record + 8), u32(b, record + 12)};
    need(b, table.offset + table.length, path, "table '" + tag + "'");
    tables[tag] = table;
  }
  return tables;
}

// Every glyph's outline must lie inside 'glyf': stb_truetype follows 'loca' blindly.
void check_glyph_locations(const std::vector<unsigned char>& b, const std::map<std::string, Table>& tables,
                           const std::string& path) {
  const Table& head = tables.at("head");
  const Table& maxp = tables.at("maxp");
  if (head.length < kHeadIndexToLocFormat + 2 || maxp.length < kMaxpNumGlyphs + 2) {
    corrupt(path, "table 'head' or 'maxp' is too short");
  }
  const bool long_offsets = u16(b, head.offset + kHeadIndexToLocFormat) != 0;
  const std::size_t n_glyphs = u16(b, maxp.offset + kMaxpNumGlyphs);
  const Table& loca = tables.at("loca");
  const Table& glyf = tables.at("glyf");
  const std::size_t entry = long_offsets ? 4 : 2;
  if (loca.length < (n_glyphs + 1) * entry) corrupt(path, "table 'loca' is shorter than its glyph count needs");
  for (std::size_t g = 0; g <= n_glyphs; ++g) {
    const std::size_t at = loca.offset + g * entry;
    const std::uint64_t location = long_offsets ? u32(b, at) : std::uint64_t{u16(b, at)} * 2;
    if (location > glyf.length) {
      corrupt(path, "glyph " + std::to_string(g) + " starts past the end of table 'glyf'");
    }
  }
}

}  // namespace

void check_font_bytes(const std::vector<unsigned char>& bytes, const std::string& path) {
  const std::map<std::string, Table> tables = table_directory(bytes, path);
  for (const char* required : {"cmap", "head", "hhea", "hmtx", "maxp"}) {
    if (tables.count(required) == 0) corrupt(path, std::string("no '") + required + "' table");
  }
  if (tables.count("glyf") != 0) {
    if (tables.count("loca") == 0) corrupt(path, "a 'glyf' table without 'loca'");
    check_glyph_locations(bytes, tables, path);
  }
}

std::vector<unsigned char> read_font_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    if (!std::filesystem::exists(path, ec)) throw InputError::unreadable(path, std::strerror(ENOENT));
    throw InputError::unreadable(path, "not a regular file (a font must be a .ttf/.otf/.ttc file)");
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxFontFileBytes) {
    throw InputError::unreadable(path, "larger than " + std::to_string(kMaxFontFileBytes >> 20) + " MiB: not a font");
  }
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw InputError::unreadable(path, std::strerror(errno));
  std::vector<unsigned char> bytes(static_cast<std::size_t>(size));
  const std::size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
  if (got != bytes.size()) throw InputError::unreadable(path, "read error");
  check_font_bytes(bytes, path);
  return bytes;
}

}  // namespace attnviz
