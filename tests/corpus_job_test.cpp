// `attnviz census` in process on the bundled stories260K (issue 22): a good run's files and
// summary, and every bad input refused in one line, exit 1, nothing written.
#include "cli/corpus_job.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
namespace fs = std::filesystem;

namespace {

std::string write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name), std::ios::binary) << text;
  return dir.file(name);
}

Options census_options(const std::string& corpus, const std::string& output) {
  Options o;
  o.command = Command::Census;
  o.model = test::data_file("stories260k/stories260K.gguf");
  o.corpus = corpus;
  o.output = output;
  o.threads = 1;
  return o;
}

// One line on stderr, "attnviz: error: …", exit 1, and the output folder never made.
void check_refused(const Options& o, const std::string& message) {
  const test::RunResult result = test::run_with(o);
  CHECK(result.code == 1);
  CHECK_THAT(result.err, StartsWith("attnviz: error: ") && Contains(message));
  CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(o.output));
}

const char* kStories = "Once upon a time, there was a little girl named Lily.\n\nShe liked to play with her dog.\n"
                       "The dog was big and the dog was happy.\n";

}  // namespace

TEST_CASE("corpus_job: a run writes census.json, census.csv, census.png and the journal", "[census][cli]") {
  test::TempDir dir;
  const std::string corpus = write(dir, "stories.txt", kStories);
  const test::RunResult result = test::run_with(census_options(corpus, dir.file("out")));
  REQUIRE(result.code == 0);
  CHECK_THAT(result.out, Contains("3 texts (") && Contains("of stories260K, 40 heads"));
  for (const char* name : {"census.json", "census.csv", "census.png", "texts.jsonl"}) CHECK(fs::exists(dir.file("out/" + std::string(name))));
  const nlohmann::json census = nlohmann::json::parse(test::read_file(dir.file("out/census.json")));
  CHECK(census["format"] == "attnviz.census");
  CHECK(census["version"] == 1);
  CHECK(census["covers"]["ranges"] == nlohmann::json::parse("[[0, 2]]"));
  CHECK(census["heads"].size() == 40);
  CHECK(census["heads"][0]["entropy_mean"]["texts"] == 3);
  // Text 0 has no repeated token: its induction score is undefined, counted in no S_texts.
  CHECK(census["heads"][0]["induction_score"]["texts"] == 2);
}

TEST_CASE("corpus_job: bad input is refused in one line, exit 1, nothing written", "[census][cli][errors]") {
  test::TempDir dir;
  const std::string good = write(dir, "good.txt", kStories);
  SECTION("a line that is not valid JSON") {
    check_refused(census_options(write(dir, "bad.jsonl", "{\"text\": \"a\"}\n{\"text\": \"b\"\n"), dir.file("out")),
                  "bad.jsonl: line 2: not valid JSON");
  }
  SECTION("a line with no text") {
    check_refused(census_options(write(dir, "none.jsonl", "\n{\"txt\": \"b\"}\n"), dir.file("out")), "none.jsonl: line 2: has no \"text\"");
  }
  SECTION("an empty corpus") {
    check_refused(census_options(write(dir, "empty.txt", "\n\n"), dir.file("out")), "empty.txt: no texts to run");
  }
  SECTION("a text longer than --max-tokens with --no-truncate") {
    Options o = census_options(good, dir.file("out"));
    o.max_tokens = 12;
    o.no_truncate = true;
    check_refused(o, "good.txt: line 1: 16 tokens, over --max-tokens / the model's context of 12");
  }
  SECTION("--max-tokens over the model's context (it failed mid-run naming --token-ids)") {
    Options o = census_options(good, dir.file("out"));
    o.max_tokens = 100000;
    check_refused(o, "--max-tokens: 100000 is over stories260K's context length of 2048 tokens");
  }
  SECTION("--sink-epsilon nan, inf, negative or over 1") {
    for (const double epsilon : {std::nan(""), HUGE_VAL, -0.1, 1.5}) {
      Options o = census_options(good, dir.file("out"));
      o.sink_epsilon = epsilon;
      check_refused(o, "--sink-epsilon: must be in [0, 1]");
    }
  }
  SECTION("--shard 3/2") {
    Options o = census_options(good, dir.file("out"));
    o.shard_index = 3;
    o.shard_count = 2;
    check_refused(o, "--shard: K/N needs 0 <= K < N (K counts from 0), got 3/2");
  }
  SECTION("merging a census of another format version") {
    fs::create_directories(dir.file("old"));
    write(dir, "old/census.json", "{\"format\": \"attnviz.census\", \"version\": 0, \"heads\": []}");
    Options o;
    o.command = Command::Census;
    o.merge = {dir.file("old"), dir.file("old")};
    o.output = dir.file("out");
    check_refused(o, "old/census.json: /version: expected 1 (this attnviz's census format), got 0");
  }
  SECTION("token_ids for an encoder-decoder") {
    Options o = census_options(write(dir, "ids.jsonl", "{\"text\": \"\u0628\u064a\u062a\"}\n{\"token_ids\": [1, 2]}\n"), dir.file("out"));
    o.model = test::data_file("aren-translit/model");
    check_refused(o, "ids.jsonl: line 2: token_ids are for decoder-only models");
  }
  SECTION("--max-tokens for an encoder-decoder") {
    Options o = census_options(good, dir.file("out"));
    o.model = test::data_file("aren-translit/model");
    o.max_tokens = 8;
    check_refused(o, "--max-tokens: is for decoder-only models");
  }
}

TEST_CASE("corpus_job: --skip-bad-lines counts what it skipped, --limit and --shard choose the texts", "[census][cli]") {
  test::TempDir dir;
  Options o = census_options(write(dir, "c.jsonl", "{\"text\": \"The dog ran.\"}\nnot json\n{\"token_ids\": [1, 403, 407]}\n"
                                                   "{\"text\": \"The cat sat.\"}\n"), dir.file("out"));
  o.skip_bad_lines = true;
  o.limit = 2;
  test::RunResult result = test::run_with(o);
  REQUIRE(result.code == 0);
  CHECK_THAT(result.err, Contains("c.jsonl: skipped 1 bad line (line 2: not valid JSON"));
  CHECK_THAT(result.out, Contains("2 texts ("));
  o.output = dir.file("shard");
  o.shard_index = 1;
  o.shard_count = 2;
  result = test::run_with(o);
  REQUIRE(result.code == 0);
  const nlohmann::json census = nlohmann::json::parse(test::read_file(dir.file("shard/census.json")));
  CHECK(census["covers"]["ranges"] == nlohmann::json::parse("[[1, 1]]"));  // text 1 = the token_ids line
  CHECK(census["covers"]["tokens"] == 3);
}

TEST_CASE("corpus_job: an encoder-decoder counts all three kinds of head, each text a source translated greedily", "[census][cli]") {
  test::TempDir dir;
  // Arabic names, as the bundled transliteration model's tests use them.
  Options o = census_options(write(dir, "names.txt", "\u0645\u0627\u0643\u062f\u0648\u0646\u0627\u0644\u062f\n\u0628\u064a\u062a\n"), dir.file("out"));
  o.model = test::data_file("aren-translit/model");
  const test::RunResult result = test::run_with(o);
  REQUIRE(result.code == 0);
  CHECK_THAT(result.out, Contains("2 texts (") && Contains("of aren-translit, 144 heads"));
  const nlohmann::json census = nlohmann::json::parse(test::read_file(dir.file("out/census.json")));
  int encoder = 0, decoder = 0, cross = 0;
  for (const nlohmann::json& head : census["heads"]) {
    const bool is_cross = head["kind"] == "cross";
    (head["stack"] == "encoder" ? encoder : is_cross ? cross : decoder) += 1;
    CHECK(head["entropy_mean"]["texts"] == 2);
    // Positional statistics, the sink and the detector scores are for self-attention only.
    CHECK(head["previous_token_score"]["texts"] == (is_cross ? 0 : 2));
    CHECK(head["sink_rate"]["texts"] == (is_cross ? 0 : 2));
  }
  CHECK(encoder == 48);
  CHECK(decoder == 48);
  CHECK(cross == 48);
  CHECK_THAT(test::read_file(dir.file("out/census.csv")), StartsWith("stack,kind,layer,head,entropy_mean_texts,"));
}

namespace {

const char* kSixStories = "Once upon a time, there was a little girl named Lily.\nShe liked to play with her dog.\n"
                          "The dog was big and the dog was happy.\nOne day, Lily went to the park.\n"
                          "She saw a bird in a tree.\nThe bird sang a song and Lily smiled.\n";

nlohmann::json census_of(const std::string& folder) { return nlohmann::json::parse(test::read_file(folder + "/census.json")); }

std::string first_line(const std::string& path) {
  const std::string text = test::read_file(path);
  return text.substr(0, text.find('\n'));
}

}  // namespace

// Issue 34 §3: a finished census folder could not be run again: a plain re-run was refused with
// "continue it with --resume", and --resume with a larger --limit was refused too. A fresh run
// over the same texts is the reference: its census.json, member for member.
TEST_CASE("corpus_job: --resume with a larger --limit extends a finished census to the fresh run's values", "[census][cli]") {
  test::TempDir dir;
  const std::string corpus = write(dir, "six.txt", kSixStories);
  Options first = census_options(corpus, dir.file("out"));
  first.limit = 3;
  REQUIRE(test::run_with(first).code == 0);
  CHECK(census_of(dir.file("out"))["heads"][0]["entropy_mean"]["texts"] == 3);

  Options more = census_options(corpus, dir.file("out"));
  more.limit = 5;
  more.resume = true;
  const test::RunResult extended = test::run_with(more);
  INFO(extended.err);
  REQUIRE(extended.code == 0);
  CHECK_THAT(extended.out, Contains("5 texts (") && Contains(", 3 from the journal)"));

  Options fresh = census_options(corpus, dir.file("fresh"));
  fresh.limit = 5;
  REQUIRE(test::run_with(fresh).code == 0);
  const nlohmann::json got = census_of(dir.file("out")), want = census_of(dir.file("fresh"));
  CHECK(got["heads"][0]["entropy_mean"]["texts"] == 5);
  for (const char* part : {"model", "corpus", "settings", "covers"}) CHECK(got[part] == want[part]);
  REQUIRE(got["heads"].size() == want["heads"].size());
  for (std::size_t h = 0; h < want["heads"].size(); ++h) {
    for (const auto& [name, statistic] : want["heads"][h].items()) {
      if (!statistic.is_object() || !statistic.contains("mean")) continue;
      INFO("head " << h << " " << name);
      CHECK(got["heads"][h][name]["texts"] == statistic["texts"]);
      if (statistic["mean"].is_number()) CHECK(std::abs(got["heads"][h][name]["mean"].get<double>() - statistic["mean"].get<double>()) <= 1e-12);
    }
  }
  // The journal is the larger run's now: its header is the fresh run's, and it holds 5 texts.
  CHECK(first_line(dir.file("out/texts.jsonl")) == first_line(dir.file("fresh/texts.jsonl")));
  const std::string journal = test::read_file(dir.file("out/texts.jsonl"));
  CHECK(std::count(journal.begin(), journal.end(), '\n') == 6);

  SECTION("a smaller --limit is no extension: refused, naming it, the census left as it was") {
    Options fewer = census_options(corpus, dir.file("out"));
    fewer.limit = 2;
    fewer.resume = true;
    const test::RunResult refused = test::run_with(fewer);
    CHECK(refused.code == 1);
    CHECK_THAT(refused.err, Contains("is the journal of a run with another corpus.texts (5, this run: 2: --limit or the corpus changed)"));
    CHECK(census_of(dir.file("out")) == got);
  }
}

TEST_CASE("corpus_job: a plain run into a finished census folder replaces it with a warning, an unfinished one is kept", "[census][cli]") {
  test::TempDir dir;
  const std::string corpus = write(dir, "six.txt", kSixStories);
  Options first = census_options(corpus, dir.file("out"));
  first.limit = 4;
  REQUIRE(test::run_with(first).code == 0);

  Options again = census_options(corpus, dir.file("out"));
  again.limit = 2;
  const test::RunResult replaced = test::run_with(again);
  INFO(replaced.err);
  REQUIRE(replaced.code == 0);
  CHECK_THAT(replaced.err, Contains("warning: " + dir.file("out") + " holds a finished census (4 texts): this run replaces it"));
  Options fresh = census_options(corpus, dir.file("fresh"));
  fresh.limit = 2;
  REQUIRE(test::run_with(fresh).code == 0);
  const nlohmann::json got = census_of(dir.file("out")), want = census_of(dir.file("fresh"));
  CHECK(got["heads"][0]["entropy_mean"]["texts"] == 2);
  CHECK(got["heads"] == want["heads"]);
  CHECK(test::read_file(dir.file("out/texts.jsonl")) == test::read_file(dir.file("fresh/texts.jsonl")));

  SECTION("a journal without its census.json is an unfinished run: refused, pointing at --resume") {
    fs::remove(dir.file("out/census.json"));
    const std::string before = test::read_file(dir.file("out/texts.jsonl"));
    const test::RunResult refused = test::run_with(census_options(corpus, dir.file("out")));
    CHECK(refused.code == 1);
    CHECK_THAT(refused.err, Contains("holds the journal (texts.jsonl) of an unfinished census: continue it with --resume"));
    CHECK(test::read_file(dir.file("out/texts.jsonl")) == before);
  }
}
