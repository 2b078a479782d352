// Files an earlier run left in an output folder: found by attnviz's output names only, named in
// one warning, never touched.
#include "cli/stale_outputs.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"

using namespace attnviz;

namespace {

void touch(const test::TempDir& dir, const std::string& name) {
  const std::filesystem::path path = dir.path() / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << "old";
}

}  // namespace

TEST_CASE("stale_outputs: attnviz's names this run did not write in natural order and never the user's other files",
          "[stale]") {
  test::TempDir dir;
  for (const char* name : {"index.html", "head_10.png", "head_2.png", "grid.svg", "notes.txt", "layer_1/grid.png",
                           "layer_1/head_0.png", "mine/grid.png", "decoder/layer_0/cross/head_1.svg", "attribution.json"})
    touch(dir, name);
  const std::vector<std::string> written = {dir.file("grid.svg"), dir.file("attribution.json")};
  CHECK(stale_outputs(dir.path().string(), written) ==
        std::vector<std::string>{"decoder/layer_0/cross/head_1.svg", "head_2.png", "head_10.png", "index.html",
                                 "layer_1/grid.png", "layer_1/head_0.png"});
  CHECK(std::filesystem::exists(dir.file("head_2.png")));  // named, never deleted
}

TEST_CASE("stale_outputs: an output folder given with a trailing slash or ./ matches the run's own paths", "[stale]") {
  test::TempDir dir;
  touch(dir, "out/grid.png");
  touch(dir, "out/head_0.png");
  CHECK(stale_outputs(dir.file("out/"), {dir.file("out/./grid.png")}) == std::vector<std::string>{"head_0.png"});
  CHECK(stale_outputs(dir.file("out"), {dir.file("out/grid.png"), dir.file("out/head_0.png")}).empty());
}

TEST_CASE("warn_about_stale_outputs: one warning where a folder this run did not write into is counted and not listed",
          "[stale]") {
  test::TempDir dir;
  for (const char* name : {"layer_0/grid.png", "layer_0/head_0.png", "layer_0/head_1.png", "layer_1/grid.png",
                           "layer_1/head_0.png", "index.html"})
    touch(dir, name);
  std::vector<std::string> warnings;
  warn_about_stale_outputs(dir.path().string(), {dir.file("layer_0/grid.png"), dir.file("layer_0/head_0.png")}, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings.front() == dir.path().string() +
                                " already holds 4 files from an earlier run that this run did not write, so they are "
                                "not from it: index.html, layer_1/ (2 files), layer_0/head_1.png");
  warnings.clear();
  warn_about_stale_outputs(dir.path().string(), {dir.file("layer_0/grid.png"), dir.file("layer_0/head_0.png"),
                                                 dir.file("layer_0/head_1.png"), dir.file("layer_1/grid.png"),
                                                 dir.file("layer_1/head_0.png"), dir.file("index.html")},
                           warnings);
  CHECK(warnings.empty());
}

TEST_CASE("warn_about_stale_outputs: many files of one folder are shown as first … last and past ten groups the rest are counted",
          "[stale]") {
  test::TempDir dir;
  for (int h = 0; h < 12; ++h) touch(dir, "head_" + std::to_string(h) + ".png");
  for (int l = 0; l < 11; ++l) touch(dir, "layer_" + std::to_string(l) + "/grid.png");
  std::vector<std::string> warnings;
  warn_about_stale_outputs(dir.path().string(), {}, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings.front() == dir.path().string() +
                                " already holds 23 files from an earlier run that this run did not write, so they are "
                                "not from it: head_0.png \u2026 head_11.png (12 files), layer_0/ (1 file), layer_1/ (1 file), "
                                "layer_2/ (1 file), layer_3/ (1 file), layer_4/ (1 file), layer_5/ (1 file), layer_6/ (1 file), "
                                "layer_7/ (1 file), layer_8/ (1 file) \u2026 and 2 more folders");
}

// Issue 37: every command that writes a folder ends with commit_folder, so a new one cannot forget
// the warning; a census's journal (texts.jsonl, written as the run goes, outside the OutputSet)
// is named when an earlier run left it and not when this run wrote it.
TEST_CASE("commit_folder: writes the files, then names an earlier run's files, the journal too, in one warning", "[stale]") {
  test::TempDir dir;
  for (const char* name : {"census.json", "texts.jsonl", "layer_0/grid.png"}) touch(dir, name);
  std::vector<std::string> warnings;
  OutputSet files;
  files.add(dir.file("attribution.json"), "{}");
  commit_folder(files, dir.path().string(), warnings);
  CHECK(test::read_file(dir.file("attribution.json")) == "{}");
  CHECK(warnings == std::vector<std::string>{dir.path().string() +
                                             " already holds 3 files from an earlier run that this run did not write, so they are not "
                                             "from it: census.json, texts.jsonl, layer_0/ (1 file)"});
  warnings.clear();
  OutputSet census;
  census.add(dir.file("census.json"), "{}");
  commit_folder(census, dir.path().string(), warnings, {dir.file("texts.jsonl")});
  CHECK(warnings == std::vector<std::string>{dir.path().string() +
                                             " already holds 2 files from an earlier run that this run did not write, so they are not "
                                             "from it: attribution.json, layer_0/ (1 file)"});
}

TEST_CASE("warn_about_stale_formats: the figure's other formats left by an earlier run are named and other files are not",
          "[stale]") {
  test::TempDir dir;
  for (const char* name : {"c.png", "c.svg", "c.html", "c.csv", "d.svg"}) touch(dir, name);
  std::vector<std::string> warnings;
  warn_about_stale_formats(dir.file("c.png"), {dir.file("c.png"), dir.file("c.csv")}, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings.front() == dir.file("c.svg") + " and " + dir.file("c.html") +
                                " are from an earlier run: this run wrote the figure as c.png, so they are not from it");
  warnings.clear();
  warn_about_stale_formats(dir.file("c.png"), {dir.file("c.svg"), dir.file("c.html")}, warnings);
  CHECK(warnings == std::vector<std::string>{dir.file("c.png") +
                                             " is from an earlier run: this run wrote the figure as c.svg and c.html, so it is not from it"});
  warnings.clear();
  warn_about_stale_formats(dir.file("c.png"), {dir.file("c.png"), dir.file("c.svg"), dir.file("c.html")}, warnings);
  warn_about_stale_formats("", {}, warnings);  // no figure (compare --census alone)
  CHECK(warnings.empty());
}
