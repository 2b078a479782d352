// All-or-nothing output: files given in pieces are written whole, and a refused set writes
// nothing (issue 11: a model dump is written as its layers' pieces, never joined in memory).
#include "io/atomic_output.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

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

// Issue 24, section 4: -o naming an existing file said "cannot create the folder: Not a
// directory", as if attnviz had expected one.
TEST_CASE("atomic output: a file where a folder must be is named as a file, and nothing is written", "[io][errors]") {
  attnviz::test::TempDir dir;
  std::ofstream(dir.file("out")) << "x";
  const auto before = attnviz::test::snapshot(dir.path());
  SECTION("the folder itself") {
    OutputSet files;
    files.create_directory(dir.file("out"));
    files.add(dir.file("out/grid.png"), std::string("png"));
    CHECK_THROWS_WITH(files.commit(), dir.file("out") + ": cannot write: is a file, not a folder");
  }
  SECTION("a parent of the file; the folder made for another file is removed") {
    OutputSet files;
    files.add(dir.file("made/by/fine.json"), std::string("{}"));
    files.add(dir.file("out/deep/x.json"), std::string("{}"));
    CHECK_THROWS_WITH(files.commit(), dir.file("out/deep") + ": cannot write: " + dir.file("out") + " is a file, not a folder");
  }
  CHECK(attnviz::test::snapshot(dir.path()) == before);
  CHECK_THROWS_WITH(attnviz::require_creatable_folder(dir.file("out/a"), dir.file("out/a/x.json")),
                    dir.file("out/a/x.json") + ": cannot write: " + dir.file("out") + " is a file, not a folder");
  CHECK_NOTHROW(attnviz::require_creatable_folder(dir.file("new/a"), dir.file("new/a/x.json")));
  CHECK_NOTHROW(attnviz::require_creatable_folder("", "x.json"));
}
