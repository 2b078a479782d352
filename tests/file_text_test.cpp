// io/file_text: mapped input files read exactly as their bytes, with zero padding readable
// after the end whatever the file's size relative to the page size (issue 7, P3).
#include "io/file_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "io/fast_json.hpp"
#include "io/json_file.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::TempDir;

namespace {

// A JSON object of exactly `size` bytes: {"a": [1.5, 1.5, ...]} padded with spaces.
std::string json_of_size(std::size_t size) {
  std::string text = "{\"a\": [1.5";
  while (text.size() + 8 < size) text += ", 1.5";
  text += "]}";
  text.append(size - text.size(), ' ');
  return text;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

}  // namespace

TEST_CASE("FileText::map: the file's bytes, then at least the padding asked for, all zero", "[io][file_text]") {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t padding = fast_json_padding();
  // Sizes around page boundaries: the padding falls in the file's last page, straddles into
  // the next page, or starts exactly on a fresh page.
  const std::size_t size = GENERATE_COPY(std::size_t{17}, page - padding, page - 1, page, page + 1, 3 * page);
  TempDir dir;
  const std::string path = dir.file("x.json");
  const std::string bytes = json_of_size(size);
  REQUIRE(bytes.size() == size);
  write(path, bytes);
  const FileText text = FileText::map(path, size, padding);
  REQUIRE(text.mapped());
  CHECK(text.view() == bytes);
  REQUIRE(text.readable() >= size + padding);
  const char* tail = text.view().data() + size;
  CHECK(std::all_of(tail, tail + padding, [](char c) { return c == 0; }));
  // And the fast path parses it in place to the right values.
  const auto document = fast_parse_json(text.view(), text.readable());
  REQUIRE(document);
  CHECK(document->root.at("a").size() == (bytes.find(']') - 6) / 5 + 1);  // "1.5" then ", 1.5"s
  CHECK(read_json_file(path).at("a").at(0) == 1.5);
}

TEST_CASE("FileText::map: a missing file is not mapped, so the reader reports it", "[io][file_text][errors]") {
  TempDir dir;
  CHECK_FALSE(FileText::map(dir.file("missing.json"), 10, fast_json_padding()).mapped());
  CHECK_THROWS_WITH(read_json_file(dir.file("missing.json")), Catch::Contains("missing.json") &&
                                                                  Catch::Contains("No such file"));
}

TEST_CASE("FileText::own: keeps the string, its capacity is what is readable", "[io][file_text]") {
  std::string bytes = "{\"a\": 1}";
  bytes.reserve(bytes.size() + fast_json_padding());
  const std::size_t capacity = bytes.capacity();
  FileText text = FileText::own(std::move(bytes));
  CHECK_FALSE(text.mapped());
  CHECK(text.view() == "{\"a\": 1}");
  CHECK(text.readable() == capacity);
  FileText moved = std::move(text);
  CHECK(moved.view() == "{\"a\": 1}");
}

TEST_CASE("FileText: a mapped file rewritten in place is reported, one replaced by rename is not", "[io][file_text]") {
  TempDir dir;
  const std::string path = dir.file("x.json");
  write(path, "{\"a\": [1.5, 2.5]}");
  {
    const FileText text = FileText::map(path, 17, fast_json_padding());
    REQUIRE(text.mapped());
    CHECK_FALSE(text.changed_since_mapped());
    // Rewritten in place with the same size: only the modification time tells (set explicitly,
    // since two writes within one clock tick may share a timestamp).
    const int fd = open(path.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(pwrite(fd, "9", 1, 7) == 1);
    const struct timespec times[2] = {{0, UTIME_OMIT}, {1234567890, 0}};
    REQUIRE(futimens(fd, times) == 0);
    close(fd);
    CHECK(text.changed_since_mapped());
  }
  {
    const FileText text = FileText::map(path, 17, fast_json_padding());
    REQUIRE(text.mapped());
    write(dir.file("new.json"), "{\"a\": [7.5, 8.5, 9.5]}");
    std::filesystem::rename(dir.file("new.json"), path);  // the mapping keeps the old file
    CHECK_FALSE(text.changed_since_mapped());
    CHECK(text.view() == "{\"a\": [9.5, 2.5]}");
  }
  CHECK_FALSE(FileText::own("{}").changed_since_mapped());
}

TEST_CASE("json_file: a UTF-8 byte order mark is skipped in large files as in small ones", "[io][file_text]") {
  // nlohmann skips a BOM; the object-start sniff of files over 64 KiB once refused it.
  TempDir dir;
  const std::string body = json_of_size(70000);
  write(dir.file("bom.json"), "\xEF\xBB\xBF" + body);
  write(dir.file("plain.json"), body);
  CHECK(read_json_file(dir.file("bom.json")) == read_json_file(dir.file("plain.json")));
  write(dir.file("small.json"), "\xEF\xBB\xBF{\"a\": [1.5]}");
  CHECK(read_json_file(dir.file("small.json")).at("a").at(0) == 1.5);
}
