// The settings a census records, in one canonical form (issue 22): runs that did the same thing
// record the same settings, so --merge and --resume accept each other's outputs.
#include "census/census_settings.hpp"

#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/corpus_job.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

std::string layers(const std::string& text, int num_layers) {
  return canonical_layers(parse_layer_selection(text, num_layers), num_layers);
}

// census.json's settings after a run of the bundled stories260K (5 layers) over `corpus`.
nlohmann::json settings_after(const test::TempDir& dir, const std::string& corpus, const std::string& name,
                              const std::string& layer_text, long limit, const std::function<void(Options&)>& also = {}) {
  Options o;
  o.command = Command::Census;
  o.model = test::data_file("stories260k/stories260K.gguf");
  o.corpus = corpus;
  o.output = dir.file(name);
  o.threads = 1;
  o.max_tokens = 8;
  o.layers = layer_text;
  o.limit = limit;
  if (also) also(o);
  const test::RunResult result = test::run_with(o);
  REQUIRE(result.code == 0);
  return nlohmann::json::parse(test::read_file(dir.file(name + "/census.json")))["settings"];
}

}  // namespace

TEST_CASE("census_settings: --layers is recorded as the selection it makes", "[census]") {
  CHECK(layers("all", 5) == "all");
  CHECK(layers("0-4", 5) == "all");
  CHECK(layers("4,3,2,1,0", 5) == "all");
  CHECK(layers("0-3", 5) == "0-3");
  CHECK(layers("3,1", 5) == "1,3");
  CHECK(layers("1,3", 5) == "1,3");
  CHECK(layers("1,1,3", 5) == "1,3");
  CHECK(layers("1-1,3", 5) == "1,3");
  CHECK(layers("1,2", 5) == "1-2");
  CHECK(layers("4,0-1", 5) == "0-1,4");
  // Without a layer count (an encoder-decoder's stacks) only "all" itself is all.
  CHECK(layers("0-4", 0) == "0-4");
  CHECK(layers("all", 0) == "all");
}

TEST_CASE("census_settings: --limit is recorded only when it cut the corpus", "[census]") {
  CHECK(canonical_limit(-1, false) == -1);
  CHECK(canonical_limit(1000, false) == -1);
  CHECK(canonical_limit(2, true) == 2);
}

TEST_CASE("census_settings: equivalent runs record the same settings", "[census][cli]") {
  test::TempDir dir;
  const std::string corpus = dir.file("c.txt");
  std::ofstream(corpus) << "Lily saw a cat.\n\nThe dog ran.\nA big red ball.\n";
  const nlohmann::json plain = settings_after(dir, corpus, "plain", "all", -1);
  CHECK(plain["layers"] == "all");
  CHECK(plain["limit"] == -1);
  CHECK(settings_after(dir, corpus, "all_listed", "0-4", -1) == plain);
  CHECK(settings_after(dir, corpus, "limit_past_end", "all", 1000) == plain);
  CHECK(settings_after(dir, corpus, "limit_exact", "all", 3) == plain);
  CHECK(settings_after(dir, corpus, "limit_cuts", "all", 2)["limit"] == 2);
  CHECK(settings_after(dir, corpus, "a", "3,1", -1)["layers"] == "1,3");
  CHECK(settings_after(dir, corpus, "b", "1-1,3,1", -1)["layers"] == "1,3");
}

TEST_CASE("census_settings: --no-truncate that finishes, and --no-bos over token_ids, record what the run did", "[census][cli]") {
  test::TempDir dir;
  const std::string corpus = dir.file("c.txt");
  std::ofstream(corpus) << "Lily saw a cat.\nThe dog ran.\n";
  const nlohmann::json plain = settings_after(dir, corpus, "plain", "all", -1);
  CHECK(plain["truncate"] == true);
  // Every text fits in 8 tokens or the run is refused: a finished --no-truncate run cut nothing.
  CHECK(settings_after(dir, corpus, "fits", "all", -1, [](Options& o) { o.max_tokens = 0; o.no_truncate = true; })["truncate"] == true);
  CHECK(settings_after(dir, corpus, "no_bos_text", "all", -1, [](Options& o) { o.no_bos = true; })["no_bos"] == true);
  const std::string ids = dir.file("ids.jsonl");
  std::ofstream(ids) << "{\"token_ids\": [1, 403, 407]}\n{\"token_ids\": [1, 9]}\n";
  CHECK(settings_after(dir, ids, "ids", "all", -1, [](Options& o) { o.no_bos = true; }) == settings_after(dir, ids, "ids_bos", "all", -1));
}
