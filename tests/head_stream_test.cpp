// Head by head (issue 23, 8192 tokens in 1 GiB): the pictures and the census a model run makes
// from heads handed on one at a time are the files the whole-layer path makes, byte for byte,
// and the memory estimate counts one head's weights.
#include <filesystem>
#include <map>
#include <string>

#include "cli/census_job.hpp"
#include "cli/heatmap_job.hpp"
#include "cli/model_job.hpp"
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
  for (const std::string scale : {"fixed", "log"}) {
    test::TempDir dir;
    Options by_head = stories_options(Command::Heatmaps, dir.file("by_head"));
    by_head.text = "Lily saw a cat. Lily saw a cat.";
    by_head.generate = 60;
    by_head.max_size_px = 500;
    by_head.scale = scale;
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
