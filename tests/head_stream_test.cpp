// Head by head (issue 23, 8192 tokens in 1 GiB): the pictures and the census a model run makes
// from heads handed on one at a time are the files the whole-layer path makes, byte for byte,
// and the memory estimate counts one head's weights.
#include <filesystem>
#include <map>
#include <string>

#include "census/head_census.hpp"
#include "cli/heatmap_job.hpp"
#include "cli/model_job.hpp"
#include "cli/report_heads.hpp"
#include "cli/run.hpp"
#include "core/error.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::RunResult;
using attnviz::test::run_with;
using Catch::Matchers::Contains;

namespace {

Options stories_options(Command command, const std::string& output) {
  Options o;
  o.command = command;
  o.model = test::data_file("stories260k/stories260K.gguf");
  o.output = output;
  o.threads = 1;
  return o;
}

// BOS and n − 1 ids spread over stories260K's vocabulary past its byte tokens.
std::vector<int> spread_ids(int n) {
  std::vector<int> ids = {1};
  for (int i = 1; i < n; ++i) ids.push_back(259 + (i * 7919) % 253);
  return ids;
}

// The PNG files below `folder`, by path relative to it.
std::map<std::string, std::string> pngs(const std::filesystem::path& folder) {
  std::map<std::string, std::string> files;
  for (const auto& [path, bytes] : test::snapshot(folder))
    if (std::filesystem::path(path).extension() == ".png") files[std::filesystem::relative(path, folder).string()] = bytes;
  return files;
}

}  // namespace

TEST_CASE("heatmaps --model: head by head writes the whole-layer path's PNG files, byte for byte", "[model][heads][cli]") {
  // PNG alone is drawn head by head; asking for SVG too takes the whole-layer path, whose PNGs
  // are the reference. 300 tokens under --max-size 500: the grid aggregates cells; --generate
  // marks the prompt's end.
  // --rows generated too: its head pictures once read the mask cut twice, past its rows (ASan).
  // Every thread count: the pictures are made on the pipeline's workers while the forward pass
  // lends the next head's weights in the same matrix (issue 38: a head picture must not read it).
  const int threads = GENERATE(1, 2, 3);
  for (const std::string scale : {"fixed", "log", "fixed-generated"}) {
    test::TempDir dir;
    Options by_head = stories_options(Command::Heatmaps, dir.file("by_head"));
    by_head.threads = threads;
    by_head.text = "Lily saw a cat. Lily saw a cat.";
    by_head.generate = 60;
    by_head.max_size_px = 500;
    by_head.scale = scale == "log" ? "log" : "fixed";
    if (scale == "fixed-generated") by_head.rows = "generated";
    REQUIRE(HeadByHeadHeatmaps::applies(by_head));
    Options whole = by_head;
    whole.output = dir.file("whole");
    whole.formats = {"png", "svg"};
    REQUIRE_FALSE(HeadByHeadHeatmaps::applies(whole));
    const RunResult a = run_with(by_head), b = run_with(whole);
    INFO(a.err << b.err);
    REQUIRE(a.code == kExitOk);
    REQUIRE(b.code == kExitOk);
    const std::map<std::string, std::string> streamed = pngs(dir.file("by_head")), reference = pngs(dir.file("whole"));
    CHECK(streamed.size() == 5 * 9 + 1);
    CHECK(streamed == reference);
    CHECK(a.err == b.err);
  }
}

// heatmaps --heads (issue 34): the chosen heads alone, in the order given, by either path; each
// head's picture is the full run's.
TEST_CASE("heatmaps --model --heads: only those heads, in their order, the same bytes by either path", "[model][heads][cli]") {
  const int threads = GENERATE(1, 2);
  test::TempDir dir;
  Options by_head = stories_options(Command::Heatmaps, dir.file("by_head"));
  by_head.threads = threads;
  by_head.text = "Lily saw a cat. Lily saw a cat.";
  by_head.heads = {5, 1};
  Options whole = by_head;
  whole.output = dir.file("whole");
  whole.formats = {"png", "svg"};
  Options every = by_head;
  every.output = dir.file("every");
  every.heads.clear();
  Options reordered = by_head;
  reordered.output = dir.file("reordered");
  reordered.heads = {1, 5};
  for (const Options& o : {by_head, whole, every, reordered}) {
    const RunResult run = run_with(o);
    INFO(run.err);
    REQUIRE(run.code == kExitOk);
  }
  const std::map<std::string, std::string> chosen = pngs(dir.file("by_head")), all = pngs(dir.file("every"));
  CHECK(chosen.size() == 5 * 3 + 1);
  for (int layer = 0; layer < 5; ++layer) {
    const std::string folder = "layer_" + std::to_string(layer) + "/";
    CHECK(chosen.count(folder + "head_0.png") == 0);
    CHECK(chosen.at(folder + "head_5.png") == all.at(folder + "head_5.png"));
    CHECK(chosen.at(folder + "head_1.png") == all.at(folder + "head_1.png"));
    CHECK(chosen.at(folder + "grid.png") != all.at(folder + "grid.png"));
    CHECK(chosen.at(folder + "grid.png") != pngs(dir.file("reordered")).at(folder + "grid.png"));
  }
  CHECK(chosen == pngs(dir.file("whole")));
  CHECK(chosen.at("overview.png") == all.at("overview.png"));  // the overview keeps every head
  by_head.heads = {3, 8};
  by_head.output = dir.file("missing");
  const RunResult missing = run_with(by_head);
  CHECK(missing.code == kExitInputError);
  CHECK_THAT(missing.err, Contains("attnviz: error: --heads: head 8 does not exist: valid heads are 0–7"));
}

TEST_CASE("heatmaps --model: the memory estimate counts one head, not the layer", "[model][heads][cli]") {
  // 512 tokens, one thread: one head's weights (with scores, 3 × 4 B × 512² = 3 MiB) instead of
  // eight (24 MiB) beside the forward pass.
  test::TempDir dir;
  Options o = stories_options(Command::Heatmaps, dir.file("pictures"));
  o.token_ids = spread_ids(512);
  o.max_memory_mib = 24;
  o.max_size_px = 1000;
  const RunResult by_head = run_with(o);
  INFO(by_head.err);
  CHECK(by_head.code == kExitOk);
  o.scale = "head";  // each head's colours need its range: the whole layer is held
  o.output = dir.file("whole");
  const RunResult whole = run_with(o);
  CHECK(whole.code == kExitLimitError);
  CHECK_THAT(whole.err, Contains("the forward pass over 512 tokens"));
}

TEST_CASE("census: rows from heads handed on one at a time are the whole blocks' rows", "[model][heads][census]") {
  Options o = stories_options(Command::Compare, "unused.png");
  o.text = "Lily saw a cat. Lily saw a cat.";
  std::vector<std::string> warnings;
  CensusCollector whole;
  const BlockSink blocks = [&](AttentionBlock&& block) {
    REQUIRE_FALSE(block.record.weights.empty());
    whole.add(block);
  };
  run_model(o, blocks, warnings, 1e9);
  CensusCollector by_head;
  int heads_seen = 0;
  const HeadSink heads = [&](const AttentionBlock& block, int head, Matrix& weights) {
    ++heads_seen;
    by_head.add_head(block, head, weights);
  };
  const BlockSink closed = [&](AttentionBlock&& block) {
    CHECK(block.record.weights.empty());
    by_head.add(block);
  };
  run_model(o, closed, warnings, 1e9, {}, nullptr, &heads);
  CHECK(heads_seen == 5 * 8);
  REQUIRE(whole.rows().size() == 5 * 8);
  CHECK(by_head.file_text("c.csv") == whole.file_text("c.csv"));
  CHECK(by_head.file_text("c.json") == whole.file_text("c.json"));
}

TEST_CASE("heatmaps --model --format html: head by head writes the whole-layer path's page", "[model][heads][report][cli]") {
  // Up to kReportMaxSide tokens the page holds every weight: the same bytes as the whole-layer
  // path's page (taken when SVG is asked for too).
  test::TempDir dir;
  Options by_head = stories_options(Command::Heatmaps, dir.file("by_head"));
  by_head.text = "Lily saw a cat. Lily saw a cat.";
  by_head.generate = 10;
  by_head.formats = {"png", "html"};
  REQUIRE(HeadByHeadHeatmaps::applies(by_head));
  Options whole = by_head;
  whole.output = dir.file("whole");
  whole.formats = {"png", "html", "svg"};
  const RunResult a = run_with(by_head), b = run_with(whole);
  INFO(a.err << b.err);
  REQUIRE(a.code == kExitOk);
  REQUIRE(b.code == kExitOk);
  // The pages' lists of the run's files differ (the second run also wrote SVGs); all else is the same.
  const auto without_links = [](const std::string& page) {
    const std::size_t links = page.find("\"links\":[");
    REQUIRE(links != std::string::npos);
    return page.substr(0, links);
  };
  CHECK(without_links(test::read_file(dir.file("by_head/index.html"))) == without_links(test::read_file(dir.file("whole/index.html"))));
}

TEST_CASE("report heads: past the longest side the page's heads are max-pooled and the title says so", "[heads][report]") {
  // 10 tokens, at most 4 cells a side: blocks of 3 tokens, 4 × 4 cells, each the max of its block.
  AttentionRecord record;
  record.mode = "self";
  record.layer = 2;
  record.num_heads = 2;
  record.causal = true;
  record.prompt_length = 7;
  for (int i = 0; i < 10; ++i) record.query_tokens.push_back("t" + std::to_string(i));
  record.key_tokens = record.query_tokens;
  std::vector<Matrix> heads;
  for (int h = 0; h < 2; ++h) {
    Matrix w = Matrix::Zero(10, 10);
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j <= i; ++j) w(i, j) = static_cast<Scalar>((h + 1) * (i * 10 + j)) / 1000.0f;
    heads.push_back(w);
  }
  ReportHeads report(4);
  for (int h = 0; h < 2; ++h) report.add_head(record, h, heads[static_cast<std::size_t>(h)]);
  Options o;
  o.output = "unused";
  const std::vector<ReportView> views = report.finish(record, o, "layer 2", 1e9, "");
  REQUIRE(views.size() == 1);
  const ReportView& view = views.front();
  CHECK(view.query_tokens == Tokens{"#0\u20132 t0\u2026", "#3\u20135 t3\u2026", "#6\u20138 t6\u2026", "#9\u20139 t9\u2026"});
  CHECK_THAT(view.figure_title, Contains("each cell: the max over 3 \u00D7 3 tokens (10 tokens; the page shows at most 4 cells a side)"));
  // Causal on blocks: the 10 allowed cells of a 4 × 4 lower triangle, head 0 then head 1; the
  // max of block (1, 0) is cell (5, 2) = 52/1000, of block (3, 3) cell (9, 9) = 99/1000.
  REQUIRE(view.values.size() == 2 * 10);
  CHECK(view.values[1] == 0.052f);
  CHECK(view.values[9] == 0.099f);
  CHECK(view.values[10 + 9] == 0.198f);
  CHECK(view.prompt_rows == 2);
  CHECK(report.pooled_block() == 3);
}
