// --format (issue 14) through run(): which files heatmaps, render and compare write, all at
// once or not at all.
#include "render/picture_formats.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/run.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::fixture;
using Catch::Matchers::Contains;

namespace {

int run_quietly(const Options& options, std::string* out = nullptr) {
  std::ostringstream out_stream, err;
  const int code = run(options, out_stream, err);
  if (out) *out = out_stream.str();
  return code;
}

Options heatmaps(const std::string& output, std::vector<std::string> formats) {
  Options options;
  options.command = Command::Heatmaps;
  options.sentence = fixture("fa.json");
  options.output = output;
  options.formats = std::move(formats);
  return options;
}

}  // namespace

TEST_CASE("picture_formats: heatmaps --format png,svg,html writes SVGs beside the PNGs and index.html", "[cli]") {
  test::TempDir dir;
  std::string out;
  REQUIRE(run_quietly(heatmaps(dir.file("all"), {"png", "svg", "html"}), &out) == kExitOk);
  for (const char* name : {"grid.png", "grid.svg", "head_0.png", "head_0.svg", "head_1.png", "head_1.svg", "index.html"}) {
    CHECK(std::filesystem::exists(dir.path() / "all" / name));
  }
  CHECK(test::snapshot(dir.path() / "all").size() == 7);
  CHECK_THAT(out, Contains("wrote 7 files (png, svg, html) to"));
}

TEST_CASE("picture_formats: --format html writes index.html only", "[cli]") {
  test::TempDir dir;
  REQUIRE(run_quietly(heatmaps(dir.file("page"), {"html"})) == kExitOk);
  const auto files = test::snapshot(dir.path() / "page");
  REQUIRE(files.size() == 1);
  CHECK(files.begin()->first.find("index.html") != std::string::npos);
}

TEST_CASE("picture_formats: render writes the same SVG as heatmaps", "[cli]") {
  test::TempDir dir;
  Options dump;
  dump.command = Command::Dump;
  dump.sentence = fixture("fa.json");
  dump.output = dir.file("fa.json");
  REQUIRE(run_quietly(dump) == kExitOk);
  REQUIRE(run_quietly(heatmaps(dir.file("computed"), {"svg"})) == kExitOk);
  Options render = heatmaps(dir.file("drawn"), {"svg"});
  render.command = Command::Render;
  render.sentence = dir.file("fa.json");
  REQUIRE(run_quietly(render) == kExitOk);
  CHECK(test::read_file(dir.file("drawn/head_1.svg")) == test::read_file(dir.file("computed/head_1.svg")));
}

TEST_CASE("picture_formats: compare writes compare.svg and compare.html beside the -o name", "[cli]") {
  test::TempDir dir;
  Options options = heatmaps(dir.file("compare.png"), {"png", "svg", "html"});
  options.command = Command::Compare;
  options.heads = {0, 1};
  std::string out;
  REQUIRE(run_quietly(options, &out) == kExitOk);
  CHECK(std::filesystem::exists(dir.file("compare.png")));
  CHECK(std::filesystem::exists(dir.file("compare.svg")));
  CHECK(std::filesystem::exists(dir.file("compare.html")));
  CHECK_THAT(out, Contains("compare.svg and "));
  const std::string page = test::read_file(dir.file("compare.html"));
  CHECK_THAT(page, Contains("\"name\":\"differences\""));
  CHECK_THAT(page, Contains("\"name\":\"divergence\""));
}

TEST_CASE("picture_formats: a failed run writes none of the formats", "[cli][errors]") {
  test::TempDir dir;
  Options options = heatmaps(dir.file("out"), {"png", "svg", "html"});
  options.cmap = "nope";
  CHECK(run_quietly(options) == kExitInputError);
  CHECK_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST_CASE("picture_formats: an HTML report over the memory budget is refused before any file is written",
          "[cli][errors]") {
  test::TempDir dir;
  // 300 tokens of width 4 over fixture F-A's 2 heads: 0.7 MiB of weights, about 1.9 MiB of page.
  const int n = 300;
  std::ofstream sentence(dir.file("long.json"));
  sentence << "{\"tokens\": [";
  for (int i = 0; i < n; ++i) sentence << (i ? ",\"t" : "\"t") << i << "\"";
  sentence << "], \"embeddings\": [";
  for (int i = 0; i < n; ++i) sentence << (i ? "," : "") << "[" << i % 3 << ", 1, " << i % 5 << ", -1]";
  sentence << "]}";
  sentence.close();
  Options options = heatmaps(dir.file("out"), {"html"});
  options.sentence = dir.file("long.json");
  options.weights = fixture("fa.json");
  options.max_memory_mib = 1.5;
  std::ostringstream out, err;
  CHECK(run(options, out, err) == kExitLimitError);
  CHECK_THAT(err.str(), Contains("the HTML report of 2 heads x 300 x 300 weights"));
  CHECK_FALSE(std::filesystem::exists(dir.file("out")));
  options.max_memory_mib = 8;
  CHECK(run(options, out, err) == kExitOk);
}

TEST_CASE("picture_formats: file names and messages", "[cli]") {
  CHECK(with_extension("out/compare.png", ".svg") == "out/compare.svg");
  CHECK(with_extension("compare", ".html") == "compare.html");
  CHECK(view_name("decoder/layer_2/cross") == "decoder layer 2 cross");
  Options options;
  CHECK(files_written(options, 9) == "9 PNG files");
  options.formats = {"svg", "png"};
  CHECK(files_written(options, 18) == "18 files (svg, png)");
  options.formats = {"html"};
  CHECK(files_written(options, 1) == "1 file (html)");
}

// Issue 38: the SVGs are made on --threads workers, each whole by one thread, so their bytes
// do not depend on the thread count.
TEST_CASE("picture_formats: SVG pictures are the same bytes for any --threads", "[cli]") {
  test::TempDir dir;
  Options one = heatmaps(dir.file("one"), {"svg"});
  one.threads = 1;
  REQUIRE(run_quietly(one) == kExitOk);
  const auto expected = test::snapshot(dir.file("one"));
  REQUIRE(expected.size() >= 3);  // grid.svg and one per head
  const int threads = GENERATE(2, 3, 8);
  Options many = heatmaps(dir.file("many_" + std::to_string(threads)), {"svg"});
  many.threads = threads;
  REQUIRE(run_quietly(many) == kExitOk);
  const auto written = test::snapshot(dir.file("many_" + std::to_string(threads)));
  REQUIRE(written.size() == expected.size());
  for (auto a = expected.begin(), b = written.begin(); a != expected.end(); ++a, ++b) {
    CHECK(std::filesystem::path(a->first).filename() == std::filesystem::path(b->first).filename());
    CHECK(a->second == b->second);
  }
}
