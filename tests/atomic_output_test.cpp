// All-or-nothing output: files given in pieces are written whole, and a refused set writes
// nothing (issue 11: a model dump is written as its layers' pieces, never joined in memory).
#include "io/atomic_output.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
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

// Issue 38: a model run writes each layer's pictures ahead, under temporary names, while the
// next layer is made; the end of the run renames them with the rest.
TEST_CASE("atomic output: files written ahead stay hidden until commit renames them", "[io]") {
  attnviz::test::TempDir dir;
  OutputSet files;
  files.add(dir.file("run/layer_0/head_0.png"), std::string("first"));
  files.write_ahead();
  CHECK_FALSE(std::filesystem::exists(dir.file("run/layer_0/head_0.png")));
  std::size_t temporaries = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path()))
    if (entry.path().filename().string().find(".head_0.png.tmp-") == 0) {
      ++temporaries;
      CHECK(attnviz::test::read_file(entry.path().string()) == "first");
    }
  CHECK(temporaries == 1);
  files.add(dir.file("run/overview.png"), std::vector<std::string>{"sec", "ond"});
  files.commit();
  CHECK(attnviz::test::read_file(dir.file("run/layer_0/head_0.png")) == "first");
  CHECK(attnviz::test::read_file(dir.file("run/overview.png")) == "second");
  // The folders, and the two files: no temporary left.
  CHECK(attnviz::test::snapshot(dir.path()).size() == 4);
}

TEST_CASE("atomic output: a run that fails after writing ahead leaves nothing behind", "[io][errors]") {
  attnviz::test::TempDir dir;
  std::ofstream(dir.file("kept.txt")) << "an earlier file";
  const auto before = attnviz::test::snapshot(dir.path());
  SECTION("the set is let go without commit (an error later in the run)") {
    OutputSet files;
    files.add(dir.file("run/layer_0/head_0.png"), std::string("a"));
    files.write_ahead();
    files.add(dir.file("run/layer_1/head_0.png"), std::string("b"));
    files.write_ahead();
    CHECK(attnviz::test::snapshot(dir.path()) != before);
  }
  SECTION("commit refuses a later file") {
    std::filesystem::create_directory(dir.file("taken"));
    OutputSet files;
    files.add(dir.file("run/head_0.png"), std::string("a"));
    files.write_ahead();
    files.add(dir.file("taken"), std::string("b"));  // a folder
    CHECK_THROWS_WITH(files.commit(), dir.file("taken") + ": cannot write: is a folder");
    std::filesystem::remove(dir.file("taken"));
  }
  SECTION("writing ahead itself fails: what it made is removed before it throws") {
    std::ofstream(dir.file("file")) << "x";
    OutputSet files;
    files.add(dir.file("made/a.png"), std::string("a"));
    files.add(dir.file("file/b.png"), std::string("b"));
    CHECK_THROWS_WITH(files.write_ahead(), dir.file("file") + ": cannot write: is a file, not a folder");
    std::filesystem::remove(dir.file("file"));
  }
  CHECK(attnviz::test::snapshot(dir.path()) == before);
}

TEST_CASE("atomic output: a set written ahead hands its files on when moved", "[io]") {
  attnviz::test::TempDir dir;
  OutputSet moved;
  {
    OutputSet files;
    files.add(dir.file("out/a.png"), std::string("a"));
    files.write_ahead();
    moved = std::move(files);
  }  // the moved-from set removes nothing
  moved.commit();
  CHECK(attnviz::test::read_file(dir.file("out/a.png")) == "a");
  CHECK(attnviz::test::snapshot(dir.path()).size() == 2);
}

// Found on reading the change: a committed set left the folders it made in the signal handler's
// list, so a SIGINT later in the same process removed a committed folder that was still empty.
TEST_CASE("atomic output: after commit a signal removes none of the set's folders", "[io]") {
  attnviz::test::TempDir dir;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    OutputSet files;
    files.create_directory(dir.file("made/empty"));  // committed, and empty: rmdir would take it
    files.add(dir.file("other/a.txt"), std::string("a"));
    files.commit();
    raise(SIGINT);  // the handler removes what is still pending, then dies of the signal
    _exit(3);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(std::filesystem::is_directory(dir.file("made/empty")));
  CHECK(attnviz::test::read_file(dir.file("other/a.txt")) == "a");
}
