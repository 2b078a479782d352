// The whole pipeline in process, as the command line runs it: exit codes, the one-line
// errors, warnings, and that a failed run leaves the output folder exactly as it was.
#include "cli/output_kind.hpp"
#include "cli/run.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::RunResult;
using attnviz::test::render_options;
using attnviz::test::run_with;
using attnviz::test::fixture;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

Options dump_options(const std::string& sentence, const std::string& output) {
  Options options;
  options.command = Command::Dump;
  options.sentence = sentence;
  options.output = output;
  return options;
}

}  // namespace

TEST_CASE("run: dump writes the file and says where", "[cli]") {
  test::TempDir dir;
  const RunResult r = run_with(dump_options(fixture("fa.json"), dir.file("fa.json")));
  CHECK(r.code == kExitOk);
  CHECK(r.out == "wrote " + dir.file("fa.json") + ": 2 heads x 3 queries x 3 keys\n");
  CHECK(r.err.empty());
  CHECK(std::filesystem::exists(dir.file("fa.json")));
}

TEST_CASE("run: bad input exits 1 with one error line and writes nothing", "[cli][errors]") {
  test::TempDir dir;
  const auto before = test::snapshot(dir.path());
  const std::string bad = std::string(ATTNVIZ_TESTS_DIR) + "/invalid/ragged_rows.json";
  SECTION("dump") {
    const RunResult r = run_with(dump_options(bad, dir.file("out.json")));
    CHECK(r.code == kExitInputError);
    CHECK(r.err == "attnviz: error: " + bad +
                       ": /embeddings/1: expected 2 numbers (as in row 0; rows must all be the same length), got 3 numbers\n");
  }
  SECTION("heatmaps into a new folder") {
    Options options = dump_options(bad, dir.file("pictures"));
    options.command = Command::Heatmaps;
    CHECK(run_with(options).code == kExitInputError);
  }
  CHECK(test::snapshot(dir.path()) == before);
}

// Issue 15: one rule for every output of every command: missing folders are created (heatmaps
// created its folder, dump, compare and --stats exited 2).
TEST_CASE("run: every command creates the missing folders of its outputs", "[cli]") {
  test::TempDir dir;
  SECTION("dump") {
    const RunResult r = run_with(dump_options(fixture("fa.json"), dir.file("no/such/folder/out.json")));
    CHECK(r.code == kExitOk);
    CHECK(std::filesystem::is_regular_file(dir.file("no/such/folder/out.json")));
  }
  SECTION("compare and --stats") {
    Options options = dump_options(fixture("fa.json"), dir.file("pictures/new/compare.png"));
    options.command = Command::Compare;
    options.stats = dir.file("tables/new/stats.csv");
    const RunResult r = run_with(options);
    CHECK(r.code == kExitOk);
    CHECK(std::filesystem::is_regular_file(dir.file("pictures/new/compare.png")));
    CHECK(std::filesystem::is_regular_file(dir.file("tables/new/stats.csv")));
  }
  SECTION("heatmaps") {
    Options options = dump_options(fixture("fa.json"), dir.file("a/b/pictures"));
    options.command = Command::Heatmaps;
    CHECK(run_with(options).code == kExitOk);
    CHECK(std::filesystem::is_regular_file(dir.file("a/b/pictures/grid.png")));
  }
}

TEST_CASE("run: an output that cannot be written exits 2 and leaves no folder behind", "[cli][errors]") {
  test::TempDir dir;
  SECTION("a folder given as the output file") {
    const RunResult folder = run_with(dump_options(fixture("fa.json"), dir.path().string()));
    CHECK(folder.code == kExitOutputError);
    CHECK(folder.err == "attnviz: error: " + dir.path().string() + ": cannot write: is a folder\n");
    CHECK(test::snapshot(dir.path()).empty());
  }
  SECTION("a folder that cannot be created: the folders made for the other output are removed") {
    { std::ofstream(dir.file("plain_file")) << "x"; }
    const auto before = test::snapshot(dir.path());
    Options options = dump_options(fixture("fa.json"), dir.file("made/by/run/compare.png"));
    options.command = Command::Compare;
    options.stats = dir.file("plain_file/stats.csv");
    const RunResult r = run_with(options);
    CHECK(r.code == kExitOutputError);
    CHECK(r.err == "attnviz: error: " + dir.file("plain_file/stats.csv") + ": cannot write: " + dir.file("plain_file") +
                       " is a file, not a folder\n");
    CHECK(test::snapshot(dir.path()) == before);
    CHECK_FALSE(std::filesystem::exists(dir.file("made")));
  }
}

// Issue 15: `heatmaps -o out.png` made a folder named out.png without a word; every command
// refuses, before any work, an -o name that says another kind of output than it writes.
TEST_CASE("run: an output name of the wrong kind is refused before any work", "[cli][errors]") {
  test::TempDir dir;
  Options options = dump_options(fixture("fa.json"), dir.file("out.png"));
  std::string expected;
  SECTION("heatmaps -o out.png") {
    options.command = Command::Heatmaps;
    expected = "attnviz: error: -o: \"" + dir.file("out.png") + "\" names a .png file, but heatmaps writes a folder "
               "(grid.png and head_<h>.png); give a folder name, e.g. -o " + dir.file("out") + "\n";
  }
  SECTION("render -o out.json") {
    options.command = Command::Render;
    options.output = dir.file("out.json");
    expected = "attnviz: error: -o: \"" + dir.file("out.json") + "\" names a .json file, but render writes a folder "
               "(grid.png and head_<h>.png); give a folder name, e.g. -o " + dir.file("out") + "\n";
  }
  SECTION("dump -o out.png") {
    expected = "attnviz: error: -o: \"" + dir.file("out.png") + "\" names a .png file, but dump writes JSON or safetensors; give a "
               "name ending in .json or .safetensors\n";
  }
  SECTION("compare -o out.CSV") {
    options.command = Command::Compare;
    options.output = dir.file("out.CSV");
    expected = "attnviz: error: -o: \"" + dir.file("out.CSV") + "\" names a .csv file, but compare writes a PNG "
               "picture (the statistics go to --stats FILE.json or FILE.csv); give a name ending in .png, e.g. -o " + dir.file("out.png") + "\n";
  }
  SECTION("compare -o DIR (no extension): it wrote a PNG named DIR") {
    options.command = Command::Compare;
    options.output = dir.file("pictures");
    expected = "attnviz: error: -o: \"" + dir.file("pictures") + "\" has no extension, but compare writes a PNG picture; "
               "give a name ending in .png, e.g. -o " + dir.file("pictures.png") + "\n";
  }
  SECTION("compare -o DIR/ and dump -o DIR/ name folders") {
    options.command = GENERATE(Command::Compare, Command::Dump);
    options.output = dir.file("pictures/");
    expected = "attnviz: error: -o: \"" + dir.file("pictures/") + "\" names a folder, but " +
               (options.command == Command::Compare ? "compare writes a PNG picture; give a file name, e.g. -o " + dir.file("pictures/compare.png")
                                                    : "dump writes JSON or safetensors; give a file name, e.g. -o " + dir.file("pictures/attention.json")) + "\n";
  }
  SECTION("compare -o out.svg: the .svg is written beside the .png, not instead") {
    options.command = Command::Compare;
    options.output = dir.file("out.svg");
    expected = "attnviz: error: -o: \"" + dir.file("out.svg") + "\" names a .svg file, but compare writes a PNG picture; "
               "give a name ending in .png, e.g. -o " + dir.file("out.png") + "\n";
  }
  SECTION("every folder command refuses every extension of a file attnviz writes") {
    options.command = GENERATE(Command::Heatmaps, Command::Render, Command::Explain, Command::Attribute, Command::Census);
    const std::string extension = GENERATE(".png", ".svg", ".html", ".json", ".csv", ".jsonl");
    options.output = dir.file("out" + extension);
    const std::string writes = options.command == Command::Explain     ? "explain writes a folder (explain.json, explain.png, circuits.png)"
                               : options.command == Command::Attribute ? "attribute writes a folder (attribution.json and attribution.png)"
                               : options.command == Command::Census
                                   ? "census writes a folder (census.json, census.csv, census.png and the journal texts.jsonl)"
                               : options.command == Command::Render ? "render writes a folder (grid.png and head_<h>.png)"
                                                                    : "heatmaps writes a folder (grid.png and head_<h>.png)";
    expected = "attnviz: error: -o: \"" + options.output + "\" names a " + extension + " file, but " + writes +
               "; give a folder name, e.g. -o " + dir.file("out") + "\n";
  }
  SECTION("dump -o out.html") {
    options.output = dir.file("out.html");
    expected = "attnviz: error: -o: \"" + dir.file("out.html") + "\" names a .html file, but dump writes JSON or safetensors; give a "
               "name ending in .json or .safetensors\n";
  }
  const RunResult r = run_with(options);
  CHECK(r.code == kExitInputError);
  CHECK(r.err == expected);
  CHECK(test::snapshot(dir.path()).empty());
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_CASE("run: what -o names, per command: a folder or a file, and for which command it is none", "[cli]") {
  CHECK(output_kind(Command::Dump) == "file");
  CHECK(output_kind(Command::Compare) == "file");
  for (const Command command : {Command::Heatmaps, Command::Render, Command::Explain, Command::Attribute, Command::Census})
    CHECK(output_kind(command) == "folder");
  CHECK(output_kind(Command::Tokenize).empty());
}

TEST_CASE("run: an existing folder whose name ends in .png is still a folder for heatmaps", "[cli]") {
  test::TempDir dir;
  std::filesystem::create_directory(dir.file("pictures.png"));
  Options options = dump_options(fixture("fa.json"), dir.file("pictures.png"));
  options.command = Command::Heatmaps;
  CHECK(run_with(options).code == kExitOk);
  CHECK(std::filesystem::is_regular_file(dir.file("pictures.png/grid.png")));
}

TEST_CASE("run: a fully masked row is a warning, not an error (BH-01)", "[cli]") {
  test::TempDir dir;
  Options options = dump_options(fixture("bh01.json"), dir.file("bh01.json"));
  options.causal = true;
  const RunResult r = run_with(options);
  CHECK(r.code == kExitOk);
  CHECK(r.err == "attnviz: warning: query 0 \"<pad>\": every key is masked (causal/padding), so its weights are all "
                 "zero in every head (H0)\n");
}

TEST_CASE("run: option combinations that make no sense are refused", "[cli][errors]") {
  test::TempDir dir;
  Options options = dump_options(fixture("fb_queries.json"), dir.file("x.json"));
  options.source = fixture("fb_source.json");
  options.causal = true;
  const RunResult r = run_with(options);
  CHECK(r.code == kExitInputError);
  CHECK(r.err == "attnviz: error: --causal: applies to self-attention; cross-attention (--source) has no causal mask\n");
}

TEST_CASE("run: the memory budget refuses a file before reading it (BH-23)", "[cli][errors]") {
  test::TempDir dir;
  Options options = dump_options(test::data_file("stories260k/layer0.json"), dir.file("x.json"));
  options.max_memory_mib = 0.01;
  const RunResult r = run_with(options);
  CHECK(r.code == kExitLimitError);
  CHECK_THAT(r.err, StartsWith("attnviz: error: "));
  const auto bytes = std::filesystem::file_size(options.sentence);
  CHECK_THAT(r.err, Contains("layer0.json (" + std::to_string(bytes) + " bytes of JSON) needs about"));
  CHECK_THAT(r.err, Contains("over the limit of 0.01 MiB (raise it with --max-memory MIB)"));
  CHECK(test::snapshot(dir.path()).empty());
}

TEST_CASE("run: the memory budget counts head outputs and their text for dump --outputs", "[cli][errors]") {
  // 4 tokens, 2 heads of d_k = d_v = 1000 from d_model 1: tiny weights, but the head outputs are
  // 8000 numbers (and up to 16 bytes of text each). Attack finding: they were not counted.
  test::TempDir dir;
  const std::string wide = dir.file("wide.json");
  {
    std::ofstream out(wide);
    std::string row = "[0";  // one row of W: d_model 1 × 2000 columns
    for (int i = 1; i < 2000; ++i) row += ",0";
    row += "]";
    out << R"({"tokens": ["a", "b", "c", "d"], "embeddings": [[1], [2], [3], [4]], "num_heads": 2, "W_Q": [)" << row
        << R"(], "W_K": [)" << row << R"(], "W_V": [)" << row << "]}";
  }
  Options options = dump_options(wide, dir.file("x.json"));
  options.max_memory_mib = 0.25;
  CHECK(run_with(options).code == kExitOk);
  options.outputs = true;
  const RunResult r = run_with(options);
  CHECK(r.code == kExitLimitError);
  CHECK_THAT(r.err, Contains("attention weights for 2 heads x 4 x 4 tokens needs about"));
}

TEST_CASE("run: heatmaps writes grid.png and one PNG per head", "[cli][render]") {
  test::TempDir dir;
  Options options = dump_options(fixture("fa.json"), dir.file("pictures"));
  options.command = Command::Heatmaps;
  const RunResult r = run_with(options);
  REQUIRE(r.code == kExitOk);
  CHECK(std::filesystem::exists(dir.file("pictures/grid.png")));
  CHECK(std::filesystem::exists(dir.file("pictures/head_0.png")));
  CHECK(std::filesystem::exists(dir.file("pictures/head_1.png")));
  CHECK_FALSE(std::filesystem::exists(dir.file("pictures/head_2.png")));
  SECTION("byte-identical on a second run") {
    Options again = options;
    again.output = dir.file("again");
    REQUIRE(run_with(again).code == kExitOk);
    CHECK(test::read_file(dir.file("again/grid.png")) == test::read_file(dir.file("pictures/grid.png")));
  }
}

TEST_CASE("run: render draws a dump back, and refuses rows that are not distributions", "[cli][render]") {
  test::TempDir dir;
  REQUIRE(run_with(dump_options(fixture("fa.json"), dir.file("fa.json"))).code == kExitOk);
  Options options;
  options.command = Command::Render;
  options.sentence = dir.file("fa.json");
  options.output = dir.file("pictures");
  CHECK(run_with(options).code == kExitOk);
  CHECK(std::filesystem::exists(dir.file("pictures/head_1.png")));
  options.sentence = fixture("bh14_not_distribution.json");
  options.output = dir.file("refused");
  const RunResult refused = run_with(options);
  CHECK(refused.code == kExitInputError);
  CHECK_FALSE(std::filesystem::exists(dir.file("refused")));
}

TEST_CASE("run: compare checks head numbers against the valid range (BH-12)", "[cli][errors]") {
  test::TempDir dir;
  Options options = dump_options(fixture("fa.json"), dir.file("compare.png"));
  options.command = Command::Compare;
  options.heads = {0, 2};
  const RunResult r = run_with(options);
  CHECK(r.code == kExitInputError);
  CHECK(r.err == "attnviz: error: --heads: head 2 does not exist: valid heads are 0–1\n");
  CHECK(test::snapshot(dir.path()).empty());
}

TEST_CASE("run: heatmaps into a folder with more head files from an earlier run says so", "[cli][render]") {
  test::TempDir dir;
  Options options = dump_options(test::data_file("use-lite/layer0.json"), dir.file("pictures"));
  options.command = Command::Heatmaps;
  REQUIRE(run_with(options).code == kExitOk);  // 4 heads
  options.sentence = fixture("fa.json");        // 2 heads
  const RunResult r = run_with(options);
  CHECK(r.code == kExitOk);
  CHECK(r.err == "attnviz: warning: " + dir.file("pictures") +
                     " already holds 2 files from an earlier run that this run did not write, so they are not from "
                     "it: head_2.png, head_3.png\n");
}

TEST_CASE("run: compare of two heads writes the statistics it prints, with hand-checked values (BH-19)",
          "[cli][stats]") {
  test::TempDir dir;
  Options options;
  options.command = Command::Compare;
  options.sentence = fixture("bh19_two_heads.json");  // A = all 0.5; B = [[1, 0], [0.5, 0.5]]
  options.output = dir.file("compare.png");
  options.stats = dir.file("stats.csv");
  const RunResult r = run_with(options);
  REQUIRE(r.code == kExitOk);
  const std::string csv = test::read_file(dir.file("stats.csv"));
  // A: both rows uniform over 2 keys, entropy ln 2 = 0.693147; B: row 0 one-hot (0), row 1 ln 2.
  CHECK_THAT(csv, Contains("\"H0\",0.693147,0.693147,0.693147,1,0.5,0.5,0.5,0.5,0.5,0,"));
  CHECK_THAT(csv, Contains("\"H1\",0.346574,0,0.693147,0.5,0.75,0.25,0.75,0.5,0.75,"));
  // JS divergence: row 0 is ½KL([.5,.5]‖m) + ½KL([1,0]‖m), m = [.75,.25]: 0.215762; row 1 is 0; mean 0.107881.
  CHECK_THAT(csv, Contains(",0.107881\n"));
  CHECK_THAT(r.out, Contains("Jensen-Shannon divergence between heads"));
  CHECK(std::filesystem::file_size(dir.file("compare.png")) > 0);
}

TEST_CASE("run: compare leaves padding queries out and draws each run with its own mask", "[cli][stats]") {
  test::TempDir dir;
  Options options;
  options.command = Command::Compare;
  options.sentence = fixture("fa_padded.json");  // token 2 is padding (BH-06)
  options.output = dir.file("compare.png");
  options.stats = dir.file("stats.csv");
  REQUIRE(run_with(options).code == kExitOk);
  // Head 0 over rows 0 and 1 only: max weights 0.99504949 and 0.74281668.
  CHECK_THAT(test::read_file(dir.file("stats.csv")), Contains("\"H0\",") && Contains(",0.868933,"));

  REQUIRE(run_with(dump_options(fixture("fa.json"), dir.file("plain.json"))).code == kExitOk);
  Options causal = dump_options(fixture("fa.json"), dir.file("causal.json"));
  causal.causal = true;
  REQUIRE(run_with(causal).code == kExitOk);
  Options two;
  two.command = Command::Compare;
  two.sentence = dir.file("plain.json");
  two.weights = dir.file("causal.json");
  two.output = dir.file("two.png");
  two.stats = dir.file("two.csv");
  const RunResult r = run_with(two);
  CHECK(r.code == kExitOk);
  CHECK(r.err == "attnviz: warning: the runs mask different cells (" + dir.file("plain.json") + " and " +
                     dir.file("causal.json") + "): each run is drawn with its own mask; cells masked in one run only "
                     "are cross-hatched, and A − B is not drawn there\n");
  // Each run's statistics use its own mask: the unmasked run's head 0 keeps its one-run values
  // (H mean 0.77987 nats over 3 keys, H / ln 3 = 0.709868); with the combined causal mask its
  // H / ln k was above 1 (attack finding).
  CHECK_THAT(test::read_file(dir.file("two.csv")), Contains("\"A:H0\",0.77987,0.440982,0.998598,0.709868,"));
}

// Issue 15: "this run has 1 heads", and --cmap rdbu on weights (never negative) without a note.
TEST_CASE("run: render of one head counts it in the singular and notes a diverging map on weights", "[cli][render]") {
  test::TempDir dir;
  std::filesystem::create_directory(dir.file("pictures"));
  { std::ofstream(dir.file("pictures/head_1.png")) << "old"; }
  Options options;
  options.command = Command::Render;
  options.sentence = fixture("one_head.json");
  options.output = dir.file("pictures");
  options.cmap = "rdbu";
  const RunResult r = run_with(options);
  CHECK(r.code == kExitOk);
  CHECK(r.err == "attnviz: warning: --cmap rdbu is a diverging map for signed data (negative blue, 0 white, positive "
                 "red); attention weights are never negative, so only its white-to-red half is used; a sequential map "
                 "(viridis, magma, greys, blues) shows them better\n"
                 "attnviz: warning: " + dir.file("pictures") +
                     " already holds 1 file from an earlier run that this run did not write, so it is not from it: "
                     "head_1.png\n");
}


// Issue 15: compare of 8 heads of two dumps wrote a 2458 x 5752 image past the default 4096 px;
// heatmaps --max-size 700 of the 32-token stories260K example was refused. --max-size holds for
// every picture: parts of compare's figure share it, and grids take more columns.
TEST_CASE("run: every picture honours --max-size", "[cli][render]") {
  test::TempDir dir;
  const std::string stories = test::data_file("stories260k/layer0.json");
  Options plain = dump_options(stories, dir.file("plain.json"));
  plain.no_causal = true;  // the file says causal
  REQUIRE(run_with(plain).code == kExitOk);
  REQUIRE(run_with(dump_options(stories, dir.file("causal.json"))).code == kExitOk);
  Options compare;
  compare.command = Command::Compare;
  compare.sentence = dir.file("plain.json");
  compare.weights = dir.file("causal.json");
  compare.output = dir.file("compare.png");
  for (const int limit : {4096, 2000}) {
    compare.max_size_px = limit;
    REQUIRE(run_with(compare).code == kExitOk);
    const auto [width, height] = test::png_size(dir.file("compare.png"));
    CHECK(width <= limit);
    CHECK(height <= limit);
    CHECK(height > limit * 3 / 4);  // shrunk to fit, not far below
  }
  // A tester got a 442 px wide figure for --max-size 256: the statistics table cannot shrink
  // below its 8 px font, so a limit below its width is refused, naming the width, writing nothing.
  compare.output = dir.file("narrow.png");
  compare.max_size_px = 256;
  const RunResult narrow = run_with(compare);
  CHECK(narrow.code == kExitLimitError);
  CHECK_THAT(narrow.err, Contains("the comparison's statistics table at its smallest font would be ") &&
                             Contains("over the limit of 256 px per side (raise --max-size to at least "));
  CHECK_FALSE(std::filesystem::exists(dir.file("narrow.png")));
  Options heatmaps = dump_options(stories, dir.file("pictures"));
  heatmaps.command = Command::Heatmaps;
  heatmaps.causal = true;
  heatmaps.max_size_px = 700;
  const RunResult r = run_with(heatmaps);
  CHECK(r.code == kExitOk);
  const auto [width, height] = test::png_size(dir.file("pictures/grid.png"));
  CHECK(width <= 700);
  CHECK(height <= 700);
  CHECK(test::png_size(dir.file("pictures/head_7.png")).first <= 700);
}

// Issue 24, section 4: `dump -o -` writes the JSON to standard output, nothing else there.
TEST_CASE("run: dump -o - writes one JSON document to stdout and its message to stderr", "[cli]") {
  const RunResult r = run_with(dump_options(fixture("fa.json"), "-"));
  REQUIRE(r.code == kExitOk);
  const nlohmann::json document = nlohmann::json::parse(r.out);
  CHECK(document["num_heads"] == 2);
  CHECK(r.err == "wrote standard output: 2 heads x 3 queries x 3 keys\n");
  CHECK_FALSE(std::filesystem::exists("-"));
}

TEST_CASE("run: -o - is refused where the output is pictures, before any work", "[cli][errors]") {
  for (const Command command : {Command::Heatmaps, Command::Render, Command::Compare}) {
    Options options = dump_options(fixture("fa.json"), "-");
    options.command = command;
    const RunResult r = run_with(options);
    CAPTURE(static_cast<int>(command));
    CHECK(r.code == kExitInputError);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, StartsWith("attnviz: error: -o: \"-\" (standard output) is for dump's JSON; "));
    CHECK_THAT(r.err, Contains(command == Command::Compare ? "give a file name ending in .png" : "give a folder name"));
  }
}

TEST_CASE("run: -o naming an existing file where a folder must be says it is a file, before any work", "[cli][errors]") {
  test::TempDir dir;
  std::ofstream(dir.file("taken")) << "x";
  const auto before = test::snapshot(dir.path());
  Options heatmaps = dump_options(fixture("fa.json"), dir.file("taken"));
  heatmaps.command = Command::Heatmaps;
  RunResult r = run_with(heatmaps);
  CHECK(r.code == kExitOutputError);
  CHECK(r.err == "attnviz: error: " + dir.file("taken") + ": cannot write: is a file, not a folder\n");
  r = run_with(dump_options(fixture("fa.json"), dir.file("taken/fa.json")));
  CHECK(r.code == kExitOutputError);
  CHECK(r.err == "attnviz: error: " + dir.file("taken/fa.json") + ": cannot write: " + dir.file("taken") +
                     " is a file, not a folder\n");
  Options stats = dump_options(fixture("fa.json"), dir.file("c.png"));
  stats.command = Command::Compare;
  stats.stats = dir.file("taken/stats.csv");
  r = run_with(stats);
  CHECK(r.code == kExitOutputError);
  CHECK_THAT(r.err, Contains(dir.file("taken") + " is a file, not a folder"));
  CHECK(test::snapshot(dir.path()) == before);
}

// Issue 24 §4: one emoji gave two warnings (compare draws the weights and their differences),
// both suggesting a CJK font. The fonts are pinned (DejaVu Sans, no fallback), so the emoji is
// missing on every machine, whatever fonts it has.
TEST_CASE("run: a character no font has is warned once, with a font for its script", "[cli][render]") {
  test::TempDir dir;
  const std::string input = dir.file("emoji.json");
  std::ofstream(input) << "{\"tokens\": [\"I\", \"\U0001F642\"], \"weights\": [[[1, 0], [0.5, 0.5]], [[0.3, 0.7], [0.5, 0.5]]]}";
  Options options;
  options.command = Command::Compare;
  options.sentence = input;
  options.heads = {0, 1};
  options.output = dir.file("compare.png");
  options.threads = 1;
  options.fallback_fonts = std::vector<std::string>{};
  const RunResult r = run_with(options);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  std::size_t warnings = 0;
  for (std::size_t at = r.err.find("no glyph for U+1F642"); at != std::string::npos;
       at = r.err.find("no glyph for U+1F642", at + 1)) {
    ++warnings;
  }
  CHECK(warnings == 1);
  CHECK_THAT(r.err, Contains("fonts-symbola for emoji") && !Contains("fonts-noto-cjk"));
}

namespace {

// fa.json with `changes` merged into its root, written into `dir`.
std::string fa_with(const test::TempDir& dir, const std::string& name, const nlohmann::json& changes) {
  nlohmann::json root = nlohmann::json::parse(test::read_file(fixture("fa.json")));
  root.merge_patch(changes);
  const std::string path = dir.file(name);
  std::ofstream(path) << root.dump();
  return path;
}

nlohmann::json dumped(const std::string& path) { return nlohmann::json::parse(test::read_file(path)); }

Options compare_options(const std::string& a, const std::string& b, const std::string& output,
                        std::vector<LayerHead> heads) {
  Options options;
  options.command = Command::Compare;
  options.sentence = a;
  options.weights = b;
  options.output = output;
  options.layer_heads = std::move(heads);
  return options;
}

}  // namespace

// Issue 24 §2: "causal": true in a weights file was ignored, so a decoder layer drawn without
// --causal attended to future tokens.
TEST_CASE("run: a weights file's causal applies, --causal and --no-causal override it, the dump records it",
          "[cli]") {
  test::TempDir inputs;
  const std::string causal_file = fa_with(inputs, "causal.json", {{"causal", true}});
  test::TempDir dir;
  SECTION("the file's causal: true masks the future") {
    const RunResult r = run_with(dump_options(causal_file, dir.file("out.json")));
    REQUIRE(r.code == kExitOk);
    const nlohmann::json dump = dumped(dir.file("out.json"));
    CHECK(dump["causal"] == true);
    CHECK(dump["weights"][0][0][1] == 0.0);
    CHECK(dump["weights"][1][1][2] == 0.0);
  }
  SECTION("--no-causal turns it off") {
    Options options = dump_options(causal_file, dir.file("out.json"));
    options.no_causal = true;
    REQUIRE(run_with(options).code == kExitOk);
    const nlohmann::json dump = dumped(dir.file("out.json"));
    CHECK(dump["causal"] == false);
    CHECK(dump["weights"][0][0][1].get<double>() > 0.5);  // fa.json's head 0: query "I" looks at "saw"
  }
  SECTION("--causal turns it on over causal: false") {
    Options options = dump_options(fa_with(inputs, "not_causal.json", {{"causal", false}}), dir.file("out.json"));
    options.causal = true;
    REQUIRE(run_with(options).code == kExitOk);
    CHECK(dumped(dir.file("out.json"))["causal"] == true);
  }
  SECTION("causal: true with --source is refused, naming the file; --no-causal lets it run") {
    const std::string queries = fa_with(inputs, "queries.json", {{"causal", true}});
    Options options = dump_options(queries, dir.file("out.json"));
    options.source = fixture("fa.json");
    const RunResult r = run_with(options);
    CHECK(r.code == kExitInputError);
    CHECK(r.err == "attnviz: error: " + queries + ": /causal: true (a causal self-attention layer), but --source " +
                       fixture("fa.json") + " asks for cross-attention, which has no causal mask; drop --source, or "
                                            "pass --no-causal\n");
    CHECK(test::snapshot(dir.path()).empty());
    options.no_causal = true;
    CHECK(run_with(options).code == kExitOk);
  }
  SECTION("--causal with --no-causal is refused") {
    Options options = dump_options(causal_file, dir.file("out.json"));
    options.causal = options.no_causal = true;
    const RunResult r = run_with(options);
    CHECK(r.code == kExitInputError);
    CHECK(r.err == "attnviz: error: --no-causal: contradicts --causal: give one\n");
    CHECK(test::snapshot(dir.path()).empty());
  }
}

// Issue 24 §2: an unknown member is a warning on stderr; the run still succeeds.
TEST_CASE("run: members attnviz does not read are named in a warning, for inputs and for dumps", "[cli]") {
  test::TempDir inputs;
  const std::string extra = fa_with(inputs, "extra.json", {{"dropout", 0.1}});
  test::TempDir dir;
  const RunResult r = run_with(dump_options(extra, dir.file("out.json")));
  CHECK(r.code == kExitOk);
  CHECK(r.err == "attnviz: warning: " + extra + ": ignoring /dropout: not a field of attnviz's input files "
                                                "(docs/input-files.md lists them)\n");
  nlohmann::json dump = dumped(dir.file("out.json"));
  dump["colour"] = "red";
  const std::string edited = inputs.file("edited_dump.json");
  std::ofstream(edited) << dump.dump();
  Options render = render_options(edited, dir.file("pictures"));
  const RunResult drawn = run_with(render);
  CHECK(drawn.code == kExitOk);
  CHECK_THAT(drawn.err, Contains("attnviz: warning: " + edited + ": ignoring /colour: not a field of an attention dump"));
}

// Issue 24 §2: --heads L0H1,L0H2 on a single layer compared all four heads, and heads that do
// not exist (L5H1, L0H9) were ignored: a head selection is never widened or dropped.
TEST_CASE("run: compare --heads L<l>H<h> on single layers takes those heads or is refused", "[cli][errors]") {
  test::TempDir dir;
  const std::string use_lite = test::data_file("use-lite/layer0.json");
  SECTION("L0H1,L0H2 on layer 0 compares exactly those two heads") {
    const RunResult r = run_with(compare_options(use_lite, "", dir.file("c.png"), {{0, 1, ""}, {0, 2, ""}}));
    CHECK(r.code == kExitOk);
    CHECK_THAT(r.out, StartsWith("head ") && Contains("\nL0H1 ") && Contains("\nL0H2 "));
    CHECK_FALSE(Contains("L0H0 ").match(r.out));
    CHECK_FALSE(Contains("L0H3 ").match(r.out));
  }
  const auto refused = [&](const Options& options, const std::string& message) {
    const RunResult r = run_with(options);
    CHECK(r.code == kExitInputError);
    CHECK(r.err == "attnviz: error: --heads: " + message + "\n");
    CHECK(test::snapshot(dir.path()).empty());
  };
  SECTION("a layer or head that does not exist is refused, naming the valid ones") {
    refused(compare_options(use_lite, "", dir.file("c.png"), {{5, 1, ""}}),
            "L5H1 is not in " + use_lite + ", which holds layer 0: valid heads are L0H0–L0H3");
    refused(compare_options(use_lite, "", dir.file("c.png"), {{0, 9, ""}}),
            "L0H9 does not exist: valid heads are L0H0–L0H3");
    refused(compare_options(use_lite, "", dir.file("c.png"), {{0, 1, "enc"}}),
            "enc.L0H1 names a block of a whole model (compare --model); these runs are single layers: name heads "
            "L0H0–L0H3; or name heads by number (1)");
  }
  SECTION("a run that records no layer takes numbers") {
    refused(compare_options(fixture("fa.json"), "", dir.file("c.png"), {{0, 1, ""}}),
            "L0H1 names layer 0, but " + fixture("fa.json") + " records no layer: name heads by number, 0–1");
  }
  SECTION("two dumps of different layers") {
    test::TempDir dumps;
    REQUIRE(run_with(dump_options(use_lite, dumps.file("a.json"))).code == kExitOk);
    nlohmann::json b = dumped(dumps.file("a.json"));
    b["layer"] = 2;
    std::ofstream(dumps.file("b.json")) << b.dump();
    const RunResult same = run_with(compare_options(dumps.file("a.json"), dumps.file("a.json"), dir.file("same.png"),
                                                    {{0, 3, ""}}));
    CHECK(same.code == kExitOk);
    CHECK_THAT(same.out, Contains("\nA:L0H3 ") && Contains("\nB:L0H3 "));
    CHECK_FALSE(Contains("L0H1").match(same.out));
    std::filesystem::remove(dir.file("same.png"));
    refused(compare_options(dumps.file("a.json"), dumps.file("b.json"), dir.file("c.png"), {{1, 6, ""}}),
            "L1H6 is not in " + dumps.file("a.json") + ", which holds layer 0 (the two runs are different layers: "
            "name heads by number, e.g. 6, to take the same head of each)");
  }
}

// Issue 24 §2: what would change the maths but is not implemented stops the run before anything
// is written: a maths member attnviz does not implement, a RoPE scaling kind other than linear,
// an unknown RoPE setting, and a rope_scaling with nothing to scale.
TEST_CASE("run: input members that would change the maths but are not implemented write nothing", "[cli][errors]") {
  test::TempDir inputs;
  const nlohmann::json rope = {{"style", "interleaved"}, {"theta", 10000}};
  nlohmann::json yarn = rope;
  yarn["scaling"] = {{"type", "yarn"}, {"factor", 4}};
  const auto [name, changes, message] = GENERATE_REF(
      std::tuple<std::string, nlohmann::json, std::string>{
          "is_causal.json", {{"is_causal", true}},
          "/is_causal: would change the attention, but attnviz reads \"causal\": true or false (refused rather than "
          "ignored)"},
      std::tuple<std::string, nlohmann::json, std::string>{
          "yarn.json", {{"rope", yarn}},
          "/rope/scaling/type: expected \"linear\" (the only RoPE scaling a weights file applies; \"yarn\" is not "
          "implemented here), got \"yarn\""},
      std::tuple<std::string, nlohmann::json, std::string>{
          "no_rope.json", {{"rope_scaling", {{"type", "linear"}, {"factor", 4}}}},
          "/rope_scaling: scales RoPE, but the file has no rope block and no --rope turns RoPE on (add \"rope\", or "
          "run with --rope STYLE)"});
  const std::string path = fa_with(inputs, name, changes);
  test::TempDir dir;
  for (const Command command : {Command::Dump, Command::Heatmaps, Command::Compare}) {
    Options options = dump_options(path, dir.file(command == Command::Heatmaps ? "pictures" : "out.png"));
    options.command = command;
    if (command == Command::Dump) options.output = dir.file("out.json");
    const RunResult r = run_with(options);
    CHECK(r.code == kExitInputError);
    CHECK(r.err == "attnviz: error: " + path + ": " + message + "\n");
    CHECK(test::snapshot(dir.path()).empty());
  }
}

// Found by a hostile tester: with one token, previous-token mass read 0 (there is no row i >= 1)
// and H/ln k read 0 (its one row sees one key: 0/0). Both are undefined, as the induction score
// of a text without repeats: '-' in the printed table, an empty CSV field, null in JSON.
TEST_CASE("run: compare of a one-token run prints H/ln k and previous-token mass as undefined", "[cli][stats]") {
  test::TempDir dir;
  const std::string input = dir.file("one.json");
  std::ofstream(input) << R"({"tokens": ["x"], "causal": true, "weights": [[[1]]]})";
  Options options;
  options.command = Command::Compare;
  options.sentence = input;
  options.output = dir.file("compare.png");
  options.stats = dir.file("stats.csv");
  RunResult r = run_with(options);
  REQUIRE(r.code == kExitOk);
  // head, H_mean, H_min, H_max, H/ln_k, max_w, distance, diagonal, previous, first
  CHECK_THAT(test::read_file(dir.file("stats.csv")), Contains("\"H0\",0,0,0,,1,0,1,,1,"));
  CHECK_THAT(r.out, Contains("H0      0.000    0.000    0.000        -    1.000    0.000    1.000        -    1.000\n"));
  options.stats = dir.file("stats.json");
  REQUIRE(run_with(options).code == kExitOk);
  const nlohmann::json head = dumped(dir.file("stats.json"))["heads"][0];
  CHECK(head["entropy_normalised_mean"].is_null());
  CHECK(head["previous_token_mass"].is_null());
  CHECK(head["diagonal_mass"] == 1.0);
}

// Found by a hostile tester: two runs with 2 and 1 heads compared head 0 only, silently.
TEST_CASE("run: compare of runs with different head counts is refused unless --heads names heads both have",
          "[cli][stats]") {
  test::TempDir dir;
  REQUIRE(run_with(dump_options(fixture("fa.json"), dir.file("two.json"))).code == kExitOk);
  REQUIRE(run_with(dump_options(fa_with(dir, "fa1.json", {{"num_heads", 1}}), dir.file("one.json"))).code == kExitOk);
  Options options = compare_options(dir.file("two.json"), dir.file("one.json"), dir.file("c.png"), {});
  options.stats = dir.file("stats.csv");
  RunResult r = run_with(options);
  CHECK(r.code == kExitInputError);
  CHECK(r.err == "attnviz: error: " + dir.file("one.json") + ": 1 heads, but 2 in " + dir.file("two.json") +
                     ": compare pairs head h of one run with head h of the other; name heads both have with --heads (0–0)\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("c.png")));
  CHECK_FALSE(std::filesystem::exists(dir.file("stats.csv")));
  options.heads = {0};
  r = run_with(options);
  CHECK(r.code == kExitOk);
  CHECK_THAT(test::read_file(dir.file("stats.csv")), Contains("\"A:H0\"") && Contains("\"B:H0\"") && !Contains("H1"));
  options.heads = {1};
  r = run_with(options);
  CHECK(r.code == kExitInputError);
  CHECK_THAT(r.err, Contains("head 1 does not exist: valid heads are 0–0"));
}
