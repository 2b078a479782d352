// All-or-nothing output: files given in pieces are written whole, and a refused set writes
// nothing (issue 11: a model dump is written as its layers' pieces, never joined in memory).
#include "io/atomic_output.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include "core/error.hpp"
#include "support/test_support.hpp"

using attnviz::OutputSet;

TEST_CASE("atomic output: a file given in pieces holds them one after another", "[io]") {
  attnviz::test::TempDir dir;
  OutputSet files;
  files.add(dir.file("pieces.json"), std::vector<std::string>{"{\"layers\": [", "", "\n{1}", ",\n{2}", "]}\n"});
  files.add(dir.file("whole.txt"), std::string("whole"));
  files.commit();
  CHECK(attnviz::test::read_file(dir.file("pieces.json")) == "{\"layers\": [\n{1},\n{2}]}\n");
  CHECK(attnviz::test::read_file(dir.file("whole.txt")) == "whole");
  CHECK(attnviz::test::snapshot(dir.path()).size() == 2);  // no temporaries left
}

TEST_CASE("atomic output: a refused target leaves no piece and no temporary behind", "[io][errors]") {
  attnviz::test::TempDir dir;
  std::filesystem::create_directory(dir.file("taken"));
  const auto before = attnviz::test::snapshot(dir.path());
  OutputSet files;
  files.add(dir.file("first.json"), std::vector<std::string>{"a", "b"});
  files.add(dir.file("taken"), std::vector<std::string>{"c"});  // a folder: rename() would replace it
  CHECK_THROWS_AS(files.commit(), attnviz::OutputError);
  CHECK_FALSE(std::filesystem::exists(dir.file("first.json")));
  CHECK(std::filesystem::is_directory(dir.file("taken")));
  CHECK(attnviz::test::snapshot(dir.path()) == before);
}
