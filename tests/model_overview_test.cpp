// Whole-model pictures and tables on stories260K (issue 13): overview.png, --rollout in the
// dump and as rollout.png, compare --model --census and --heads L0H3,L4H1, and their errors.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/run.hpp"
#include "render/overview_collector.hpp"
#include "render/rollout_collector.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::RunResult;
using attnviz::test::render_options;
using attnviz::test::run_with;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;

namespace {

// A text that repeats a phrase, so the induction score has rows to measure.
Options model_options(Command command, const std::string& output) {
  Options o;
  o.command = command;
  o.model = test::data_file("stories260k/stories260K.gguf");
  o.text = "Lily saw a cat. Lily saw a cat.";
  o.output = output;
  o.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("model pictures: heatmaps --model writes overview.png, and rollout.png with --rollout", "[model][overview][cli]") {
  test::TempDir dir;
  Options o = model_options(Command::Heatmaps, dir.file("pictures"));
  o.rollout = true;
  const RunResult r = run_with(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(std::filesystem::exists(dir.file("pictures/overview.png")));
  CHECK(std::filesystem::exists(dir.file("pictures/rollout.png")));
  CHECK(std::filesystem::exists(dir.file("pictures/layer_4/grid.png")));
}

// Bug: rollout.png stacks two grids, each given all of --max-size's height (256 -> 256 x 470).
TEST_CASE("model pictures: every picture of heatmaps --model --rollout honours --max-size", "[model][overview][cli]") {
  for (const int limit : {256, 300, 400, 600}) {
    test::TempDir dir;
    Options o = model_options(Command::Heatmaps, dir.file("pictures"));
    o.rollout = true;
    o.max_size_px = limit;
    const RunResult r = run_with(o);
    INFO(r.err);
    REQUIRE(r.code == kExitOk);
    int pictures = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
      if (entry.path().extension() != ".png") continue;
      const auto [width, height] = test::png_size(entry.path().string());
      CAPTURE(limit, entry.path().string());
      CHECK(width <= limit);
      CHECK(height <= limit);
      ++pictures;
    }
    CHECK(pictures == 47);  // 5 grids, 40 heads, overview.png, rollout.png
  }
}

// Issue 23: on a 479-token text rollout.png was 3962 × 4224 px, and once squeezed in, its strip
// of layers became an unlabelled 3836 × 44 px thumbnail. Every picture of a long run fits.
TEST_CASE("model pictures: at 479 tokens overview.png, rollout.png, compare and the census fit --max-size, small parts labelled", "[model][overview][cli]") {
  std::string text;
  for (int i = 0; i < 11; ++i) {
    text += "Once upon a time, there was a little girl named Lily. She loved to play in the park with her dog. "
            "One day, she saw a big red ball. ";
  }
  text += " Once upon a time, there was a little girl named Lily.";
  for (const int limit : {4096, 1024}) {
    test::TempDir dir;
    Options o = model_options(Command::Heatmaps, dir.file("pictures"));
    o.text = text;
    o.rollout = true;
    o.max_size_px = limit;
    o.formats = {"html"};
    const RunResult r = run_with(o);
    INFO(r.err);
    REQUIRE(r.code == kExitOk);
    for (const char* name : {"pictures/overview.png", "pictures/rollout.png"}) {
      const auto [width, height] = test::png_size(dir.file(name));
      CAPTURE(limit, name);
      CHECK(width <= limit);
      CHECK(height <= limit);
    }
    CHECK_THAT(r.err, !Contains("rollout.png: the grid of 1 head is drawn as a"));
  }
  // compare's divergence matrix (2 × 2) kept its labels beside the 479-token maps: it was shrunk
  // with them to a 100 × 100 px thumbnail.
  test::TempDir dir;
  Options compare = model_options(Command::Compare, dir.file("compare.png"));
  compare.text = text;
  compare.layer_heads = {{0, 1, ""}, {4, 2, ""}};
  const RunResult r = run_with(compare);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  const auto [width, height] = test::png_size(dir.file("compare.png"));
  CHECK(width <= 4096);
  CHECK(height <= 4096);
  CHECK_THAT(r.err, !Contains("thumbnail"));
  Options census = model_options(Command::Compare, dir.file("census.png"));
  census.text = text;
  census.census = dir.file("census.csv");
  const RunResult c = run_with(census);
  INFO(c.err);
  REQUIRE(c.code == kExitOk);
  const auto [census_width, census_height] = test::png_size(dir.file("census.png"));
  CHECK(census_width <= 4096);
  CHECK(census_height <= 4096);
}

TEST_CASE("model pictures: dump --rollout holds R for every layer, rows summing to 1", "[model][rollout][cli]") {
  test::TempDir dir;
  Options o = model_options(Command::Dump, dir.file("dump.json"));
  o.rollout = true;
  REQUIRE(run_with(o).code == kExitOk);
  const nlohmann::json dump = nlohmann::json::parse(test::read_file(dir.file("dump.json")));
  const auto& rollout = dump.at("rollout");
  REQUIRE(rollout.size() == dump.at("layers").size());
  const std::size_t n = dump.at("tokens").size();
  for (std::size_t l = 0; l < rollout.size(); ++l) {
    REQUIRE(rollout[l].size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < n; ++j) sum += rollout[l][i][j].get<double>();
      INFO("layer " << l << " row " << i);
      CHECK_THAT(sum, WithinAbs(1.0, 1e-5));
      for (std::size_t j = i + 1; j < n; ++j) CHECK(rollout[l][i][j].get<double>() == 0.0);  // causal
    }
  }
  CHECK(dump.at("rollout_residual").get<double>() == 0.5);
  SECTION("render of the dump draws the overview and the rollout again") {
    Options render = render_options(dir.file("dump.json"), dir.file("again"));
    render.rollout = true;
    const RunResult r = run_with(render);
    INFO(r.err);
    REQUIRE(r.code == kExitOk);
    CHECK(std::filesystem::exists(dir.file("again/overview.png")));
    CHECK(std::filesystem::exists(dir.file("again/rollout.png")));
  }
}

TEST_CASE("model compare: --census writes one row per (layer, head) and its picture", "[model][census][cli]") {
  test::TempDir dir;
  Options o = model_options(Command::Compare, dir.file("census.png"));
  o.census = dir.file("census.csv");
  const RunResult r = run_with(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK_THAT(r.out, Contains("top previous-token mass: L"));
  const std::string csv = test::read_file(dir.file("census.csv"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 5 * 8);
  CHECK(csv.find("\n4,7,") != std::string::npos);
  CHECK(std::filesystem::exists(dir.file("census.png")));
}

// Issue 24 §4: --census --format html wrote only the PNG, without saying so. Every format asked
// is written beside -o (as compare writes its figure), and the summary line names each file.
TEST_CASE("model compare: --census writes its picture in every --format asked, and names each file",
          "[model][census][cli]") {
  test::TempDir dir;
  Options o = model_options(Command::Compare, dir.file("census.png"));
  o.census = dir.file("census.csv");
  std::vector<std::string> expected;
  SECTION("html alone") {
    o.formats = {"html"};
    expected = {"census.html"};
  }
  SECTION("all three") {
    o.formats = {"png", "svg", "html"};
    expected = {"census.png", "census.svg", "census.html"};
  }
  const RunResult r = run_with(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  std::string written = "wrote ";
  for (const std::string& name : expected) {
    CHECK(std::filesystem::exists(dir.file(name)));
    written += dir.file(name) + " and ";
  }
  CHECK_THAT(r.out, Contains(written + dir.file("census.csv") + ": 40 heads\n"));
  for (const char* name : {"census.png", "census.svg", "census.html"}) {
    if (std::find(expected.begin(), expected.end(), name) == expected.end()) CHECK_FALSE(std::filesystem::exists(dir.file(name)));
  }
  if (std::filesystem::exists(dir.file("census.html"))) {
    CHECK_THAT(test::read_file(dir.file("census.html")), Contains("previous-token mass") && Contains("\"L4\""));
  }
  if (std::filesystem::exists(dir.file("census.svg"))) {
    CHECK_THAT(test::read_file(dir.file("census.svg")), Contains("<svg") && Contains("previous-token mass"));
  }
}

TEST_CASE("model compare: --heads L0H3,L4H1 puts heads of two layers side by side", "[model][cli]") {
  test::TempDir dir;
  Options o = model_options(Command::Compare, dir.file("heads.png"));
  o.layer_heads = {{0, 3, ""}, {4, 1, ""}};
  const RunResult r = run_with(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK_THAT(r.out, Contains("L0H3 ") && Contains("L4H1 "));
  CHECK(std::filesystem::exists(dir.file("heads.png")));
}

TEST_CASE("model compare: an encoder-decoder's heads are named with their block", "[model][ct2][cli]") {
  test::TempDir dir;
  Options o = model_options(Command::Compare, dir.file("heads.png"));
  o.model = test::data_file("aren-translit/model");
  o.text = "\u0645\u0627\u0643\u062F\u0648\u0646\u0627\u0644\u062F";  // ماكدونالد
  o.stats = dir.file("stats.csv");
  std::string first, second;
  SECTION("encoder self-attention") {
    o.layer_heads = {{0, 3, "enc"}, {1, 1, "enc"}};
    first = "enc.L0H3", second = "enc.L1H1";
  }
  SECTION("decoder self-attention") {
    o.layer_heads = {{0, 3, "dec"}, {1, 1, "dec"}};
    first = "dec.L0H3", second = "dec.L1H1";
  }
  SECTION("decoder cross-attention") {
    o.layer_heads = {{0, 3, "cross"}, {1, 1, "cross"}};
    first = "cross.L0H3", second = "cross.L1H1";
  }
  const RunResult r = run_with(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK_THAT(r.out, Contains(first + " ") && Contains(second + " "));
  const std::string stats = test::read_file(dir.file("stats.csv"));
  CHECK_THAT(stats, Contains("\n\"" + first + "\",") && Contains("\n\"" + second + "\","));
  // Cross-attention has no positional statistics; self-attention has them.
  const std::size_t row = stats.find("\n\"" + first + "\",");
  REQUIRE(row != std::string::npos);
  const std::string line = stats.substr(row + 1, stats.find('\n', row + 1) - row - 1);
  CHECK((line.find(",,") != std::string::npos) == (first.rfind("cross", 0) == 0));
}

TEST_CASE("model compare: block names that do not fit the model are refused, nothing written",
          "[model][ct2][cli][errors]") {
  test::TempDir dir;
  const auto before = test::snapshot(dir.path());
  Options o = model_options(Command::Compare, dir.file("x.png"));
  const std::string translit = test::data_file("aren-translit/model");
  const std::string arabic = "\u0645\u0627\u0643";
  std::string expected;
  SECTION("a plain L0H3 on an encoder-decoder lists every form") {
    o.model = translit;
    o.text = arabic;
    o.layer_heads = {{0, 3, ""}, {1, 1, ""}};
    expected = "--heads: L0H3 is ambiguous: this encoder-decoder model has a head L0H3 in each kind of block; name "
               "one: enc.L0H3 (encoder self-attention), dec.L0H3 (decoder self-attention) or cross.L0H3 (decoder "
               "cross-attention)";
  }
  SECTION("a block name on a decoder-only model") {
    o.layer_heads = {{0, 3, "enc"}};
    expected = "--heads: enc.L0H3 names a block of an encoder-decoder model; this model has one kind of block: name "
               "the head L0H3";
  }
  SECTION("heads of two kinds of block") {
    o.model = translit;
    o.text = arabic;
    o.layer_heads = {{0, 3, "enc"}, {1, 1, "cross"}};
    expected = "--heads: enc.L0H3 and cross.L1H1 are heads of different kinds of block; compare heads of one kind "
               "(enc., dec. or cross.) at a time";
  }
  SECTION("a layer the encoder does not have") {
    o.model = translit;
    o.text = arabic;
    o.layer_heads = {{6, 0, "enc"}};
    expected = "--heads: enc.L6H0 does not exist: this model has layers 0-5";
  }
  const RunResult r = run_with(o);
  CHECK(r.code == kExitInputError);
  CHECK_THAT(r.err, Contains(expected));
  CHECK(test::snapshot(dir.path()) == before);
}

TEST_CASE("model compare: heads and options that do not fit are refused, nothing written", "[model][cli][errors]") {
  test::TempDir dir;
  const auto before = test::snapshot(dir.path());
  Options o = model_options(Command::Compare, dir.file("x.png"));
  std::string expected;
  SECTION("neither --heads nor --census") { expected = "--model: compare of a whole model needs --heads"; }
  SECTION("heads without layers") {
    o.heads = {0, 3};
    expected = "--heads: with --model, name each head with its layer, e.g. L0H3,L4H1";
  }
  SECTION("a layer the model does not have") {
    o.layer_heads = {{9, 0, ""}};
    expected = "--heads: L9H0 does not exist: this model has layers 0-4";
  }
  SECTION("a head the layer does not have") {
    o.layer_heads = {{1, 8, ""}};
    expected = "--heads: L1H8 does not exist: layer 1 has heads 0-7";
  }
  SECTION("a census file that is neither CSV nor JSON") {
    o.census = dir.file("census.txt");
    expected = "--census: the file name must end in .csv or .json";
  }
  SECTION("--stats without --heads") {
    o.census = dir.file("census.csv");
    o.stats = dir.file("stats.csv");
    expected = "--stats: goes with --heads";
  }
  SECTION("rollout of a single layer's file") {
    o.command = Command::Render;
    o.model.clear();
    o.text.reset();
    o.sentence = test::fixture("fa.json");
    o.output = dir.file("pictures");
    o.rollout = true;
    expected = "--rollout: needs a whole model";
  }
  SECTION("rollout of a selection of layers") {
    o.command = Command::Heatmaps;
    o.output = dir.file("pictures");
    o.rollout = true;
    o.layers = "2";
    expected = "--rollout: needs every layer from 0";
  }
  const RunResult r = run_with(o);
  CHECK(r.code == kExitInputError);
  CHECK_THAT(r.err, Contains("attnviz: error: " + expected));
  CHECK(test::snapshot(dir.path()) == before);
}

TEST_CASE("model pictures: what the overview and the rollout keep is counted before the run", "[model][overview][rollout]") {
  Options o;
  // 32 × 32 heads at 2048 tokens under --max-size 4096: maps of at most 119 cells a side
  // ((4096 − 2 × 2 − 8) / 33 − 4, what a thumbnail could show), 5 bytes a cell, twice (the maps
  // and the picture's copy).
  CHECK(OverviewCollector::kept_bytes(o, 2048, 32, 32) == 2.0 * 32 * 33 * 119 * 119 * 5);
  CHECK(OverviewCollector::kept_bytes(o, 13, 5, 8) == 2.0 * 5 * 9 * 13 * 13 * 5);
  CHECK(RolloutCollector::kept_bytes(2048, 32, false) == 4.0 * 2048 * 2048 * 8);
  CHECK(RolloutCollector::kept_bytes(10, 3, true) == 4.0 * 100 * 8 + 3 * 100 * 16);
  SECTION("a budget the forward pass fits but the rollout text of a dump does not") {
    test::TempDir dir;
    Options dump = model_options(Command::Dump, dir.file("dump.json"));
    dump.rollout = true;
    // 201 tokens: the forward pass needs 4.8 MiB, the dump's text at most 24.7 MiB (5 · 8 ·
    // 201² weights, 16 bytes each), the rollout 4.3 MiB more (R and its text).
    dump.max_memory_mib = 32;
    dump.text = std::string(200, 'a');
    const RunResult r = run_with(dump);
    CHECK(r.code == kExitLimitError);
    CHECK_THAT(r.err, Contains("and what is kept across its layers (the dump's text, the report's values, overview maps, "
                               "rollout, chosen heads) needs about 34 MiB"));
    dump.rollout = false;
    CHECK(run_with(dump).code == kExitOk);
  }
}

// Issue 24 §4: heatmaps --model on an encoder-decoder named the encoder's and the decoder's
// self-attention heads alike ("L3H0"); every block's view names its block.
TEST_CASE("model pictures: an encoder-decoder's heatmaps name each head with its block", "[model][ct2][cli]") {
  test::TempDir dir;
  Options o = model_options(Command::Heatmaps, dir.file("pictures"));
  o.model = test::data_file("aren-translit/model");
  o.text = "\u0645\u0627\u0643\u062F\u0648\u0646\u0627\u0644\u062F";  // ماكدونالد
  o.layers = "3";
  o.formats = {"html"};
  const RunResult r = run_with(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  const std::string page = test::read_file(dir.file("pictures/index.html"));
  for (const char* name : {"enc.L3H0", "dec.L3H0", "cross.L3H0"}) CHECK_THAT(page, Contains(std::string("\"") + name + "\""));
  CHECK_THAT(page, Contains("encoder self-attention weights") && Contains("decoder self-attention weights") &&
                       Contains("decoder cross-attention weights"));
  CHECK_THAT(page, !Contains("\"L3H0\""));
}

// A new user's --rollout on the translation model was refused as "got layer 0 after 6 layers;
// drop --layers", a flag they had not given.
TEST_CASE("model pictures: --rollout on an encoder-decoder is refused for what it is, nothing written", "[model][rollout][cli]") {
  test::TempDir dir;
  Options o;
  o.command = Command::Heatmaps;
  o.model = test::data_file("aren-translit/model");
  o.text = "محمد";
  o.rollout = true;
  o.output = dir.file("pictures");
  o.threads = 1;
  const RunResult r = run_with(o);
  CHECK(r.code == kExitInputError);
  CHECK(r.err == "attnviz: error: --rollout: composes the self-attention layers of one stack (decoder-only models); this "
                 "encoder-decoder model has an encoder, a decoder and cross-attention between them\n");
  CHECK_FALSE(std::filesystem::exists(dir.file("pictures")));
}

// Issue 23: render of a dump made with --generate draws only the continuation's rows with
// --rows generated (the dump's prompt_length says where they start), into PNG and HTML.
TEST_CASE("model pictures: render --rows generated of a dump with a continuation", "[model][cli]") {
  test::TempDir dir;
  Options dump = model_options(Command::Dump, dir.file("dump.json"));
  dump.text = "Once upon a time";
  dump.generate = 6;
  dump.layers = "0";
  REQUIRE(run_with(dump).code == kExitOk);
  const nlohmann::json json = nlohmann::json::parse(test::read_file(dir.file("dump.json")));
  const int prompt = json.at("prompt_length").get<int>();
  REQUIRE(prompt == 5);
  Options render = render_options(dir.file("dump.json"), dir.file("pictures"));
  render.rows = "generated";
  render.formats = {"png", "html"};
  const RunResult r = run_with(render);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  const std::string page = test::read_file(dir.file("pictures/index.html"));
  CHECK_THAT(page, Contains("\"firstQuery\":5"));
  CHECK_THAT(page, Contains("\"promptLength\":5"));
  const int generated_rows_height = test::png_size(dir.file("pictures/layer_0/head_0.png")).second;
  render.rows = "all";
  render.output = dir.file("all");
  REQUIRE(run_with(render).code == kExitOk);
  CHECK(generated_rows_height < test::png_size(dir.file("all/layer_0/head_0.png")).second);  // 6 rows, not 11
}
