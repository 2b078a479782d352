// The corpus census (issue 22): statistics of each block, accumulation, exact merging with its
// refusals, the files' layout, and the journal.
#include "census/corpus_census.hpp"

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "attention/head_detectors.hpp"
#include "census/census_check.hpp"
#include "census/census_journal.hpp"
#include "census/census_journal_check.hpp"
#include "census/head_census.hpp"
#include "core/error.hpp"
#include "render/corpus_census_picture.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;
using attnviz::test::matrix;

namespace {

CensusProvenance provenance(const std::string& settings = "{\"sink_epsilon\":0.3}") {
  return {"0.1.0", "{\"name\":\"toy\"}", "{\"fnv1a64\":\"00\"}", settings};
}

// A provenance as census runs write it, for a model of 2 layers × 2 heads with layer 1 selected
// (the heads text() gives): what a census.json that reads back must hold. Members in name order,
// the order census.json's reader keeps them in.
CensusProvenance full_provenance() {
  return {"0.1.0", R"({"architecture":"llama","bytes":100,"d_model":4,"fnv1a64":"0123456789abcdef","heads":2,"layers":2,"name":"toy"})",
          R"({"file":"toy.txt","fnv1a64":"0123456789abcdef","format":"text","skipped_lines":0,"texts":10})",
          R"({"layers":"1","limit":-1,"max_tokens":16,"no_bos":false,"sink_epsilon":0.3,"skip_bad_lines":false,"truncate":true})"};
}

// As full_provenance, with another sink_epsilon and number of texts (a journal's header).
CensusProvenance journal_provenance(double sink_epsilon = 0.3, long texts = 10) {
  CensusProvenance p = full_provenance();
  nlohmann::ordered_json settings = nlohmann::ordered_json::parse(p.settings), corpus = nlohmann::ordered_json::parse(p.corpus);
  settings["sink_epsilon"] = sink_epsilon;
  corpus["texts"] = texts;
  p.settings = settings.dump();
  p.corpus = corpus.dump();
  return p;
}

// Text `index` with two heads, values that differ per text (times `scale`: 0.1 keeps them in
// [0, 1] for texts 0-5); statistic 7 (induction) undefined on odd texts. As a run's would be:
// the max weight (2) in [0.5, 1), above 1/k; the sink (8) 1 exactly where the first-token mass
// (6) is above 0.3; the previous-token score (9) the mass (5) times (n − 1)/n.
TextStatistics text(long index, double scale = 1) {
  TextStatistics t;
  t.index = index;
  t.tokens = 3 + index;
  for (int h = 0; h < 2; ++h) {
    std::vector<std::optional<double>> values;
    for (std::size_t s = 0; s < corpus_statistic_names().size(); ++s)
      values.push_back(scale * (0.1 * static_cast<double>(s) + 0.37 * index * (h + 1) + 1e-3 * index * index));
    if (index % 2 == 1) values[7].reset();
    values[2] = 0.5 + 0.5 * *values[2] / (1 + *values[2]);
    values[8] = *values[6] > 0.3 ? 1.0 : 0.0;
    // TL's previous-token score: the same sum as the mass (5) over all n rows, not the n − 1.
    values[9] = *values[5] * static_cast<double>(t.tokens - 1) / static_cast<double>(t.tokens);
    t.heads.push_back({CensusHead{"", "", 1, h}, values});
  }
  return t;
}

CorpusCensus census_of(const std::vector<long>& indices, const CensusProvenance& p = provenance(), double scale = 1) {
  CorpusCensus c(p, 10);
  for (long i : indices) c.add(text(i, scale));
  return c;
}

}  // namespace

TEST_CASE("corpus_census: a block's statistics per head: the one-text census, sink, TL scores", "[census]") {
  AttentionBlock block;
  block.layer = 1;
  block.record.layer = 1;
  block.record.causal = true;
  block.record.query_tokens = block.record.key_tokens = {"a", "b", "a", "a"};
  block.record.num_heads = 1;
  block.record.weights = {matrix({{1, 0, 0, 0}, {0.6, 0.4, 0, 0}, {0.2, 0.5, 0.3, 0}, {0.1, 0.2, 0.3, 0.4}})};
  TextStatistics t;
  add_block_statistics(block, {5, 7, 5, 5}, 0.3, t);
  REQUIRE(t.heads.size() == 1);
  CHECK(t.heads[0].first.name() == "L1H0");
  const std::vector<std::optional<double>>& v = t.heads[0].second;
  REQUIRE(v.size() == corpus_statistic_names().size());
  CHECK_THAT(*v[6], WithinAbs(0.475, 1e-7));      // first_token_mass
  CHECK(*v[8] == 1.0);                             // sink_rate: 0.475 > 0.3
  CHECK_THAT(*v[9], WithinAbs(1.4 / 4, 1e-7));    // previous_token_score
  CHECK_THAT(*v[10], WithinAbs(0.6 / 4, 1e-7));   // duplicate_token_score
  CHECK_THAT(*v[11], WithinAbs(1.1 / 4, 1e-7));   // induction_score_tl
  CHECK_THAT(*v[5], WithinAbs(1.4 / 3, 1e-7));    // previous_token_mass: rows 1..3 only
}

TEST_CASE("corpus_census: a block's first eight statistics are the one-text census's, exactly", "[census]") {
  AttentionBlock block;
  block.layer = 0;
  block.record.causal = true;
  block.record.query_tokens = block.record.key_tokens = {"x", "y", "x", "y", "z"};
  block.record.num_heads = 2;
  block.record.weights = {matrix({{1, 0, 0, 0, 0}, {0.3, 0.7, 0, 0, 0}, {0.2, 0.2, 0.6, 0, 0}, {0.1, 0.4, 0.1, 0.4, 0}, {0.2, 0.2, 0.2, 0.2, 0.2}}),
                          matrix({{1, 0, 0, 0, 0}, {0.9, 0.1, 0, 0, 0}, {0.5, 0.4, 0.1, 0, 0}, {0.7, 0.1, 0.1, 0.1, 0}, {0.6, 0.1, 0.1, 0.1, 0.1}})};
  TextStatistics t;
  add_block_statistics(block, {7, 8, 7, 8, 9}, 0.3, t);
  const std::vector<CensusRow> one_text = census_of_block(block);
  REQUIRE(t.heads.size() == one_text.size());
  for (std::size_t h = 0; h < one_text.size(); ++h) {
    const HeadStats& s = one_text[h].stats;
    const std::vector<std::optional<double>> expected = {s.entropy_mean, s.entropy_normalised_mean, s.max_weight_mean, s.mean_distance,
                                                         s.diagonal_mass, s.previous_mass, s.first_token_mass, one_text[h].induction};
    for (std::size_t k = 0; k < expected.size(); ++k) CHECK(t.heads[h].second[k] == expected[k]);
  }
  CHECK(*t.heads[0].second[8] == 1.0);  // sink: α_1 = (1 + 0.3 + 0.2 + 0.1 + 0.2) / 5 = 0.36 > 0.3
  // The detector scores over cells built once per block equal the pattern-by-pattern definition.
  const std::vector<std::int32_t> ids = {7, 8, 7, 8, 9};
  for (std::size_t h = 0; h < 2; ++h) {
    CHECK(t.heads[h].second[9] == detection_score(block.record.weights[h], ids, DetectionPattern::PreviousToken));
    CHECK(t.heads[h].second[10] == detection_score(block.record.weights[h], ids, DetectionPattern::DuplicateToken));
    CHECK(t.heads[h].second[11] == detection_score(block.record.weights[h], ids, DetectionPattern::Induction));
  }
}

TEST_CASE("corpus_census: merged shards equal one pass, in any order", "[census]") {
  const CorpusCensus whole = census_of({0, 1, 2, 3, 4, 5, 6});
  CorpusCensus a = census_of({0, 3, 6}), b = census_of({1, 4}), c = census_of({2, 5});
  CorpusCensus forward = a, backward = c;
  forward.merge(b, "a", "b");
  forward.merge(c, "a", "c");
  backward.merge(b, "c", "b");
  backward.merge(a, "c", "a");
  for (const CorpusCensus* merged : {&forward, &backward}) {
    CHECK(merged->covered() == IndexRanges{{0, 6}});
    CHECK(merged->tokens() == whole.tokens());
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t s = 0; s < corpus_statistic_names().size(); ++s) {
        const RunningStat& w = whole.stats()[h][s];
        const RunningStat& m = merged->stats()[h][s];
        CHECK(m.count == w.count);
        CHECK_THAT(m.mean, WithinRel(w.mean, 1e-12));
        CHECK_THAT(*m.sample_std(), WithinRel(*w.sample_std(), 1e-9));
      }
    }
  }
  CHECK(whole.stats()[0][7].count == 4);  // induction undefined on odd texts: S_texts counts the others
}

TEST_CASE("corpus_census: merging refuses a text counted twice and outputs of other settings", "[census][errors]") {
  CorpusCensus a = census_of({0, 2});
  REQUIRE_THROWS_WITH(a.merge(census_of({2, 4}), "A/census.json", "B/census.json"),
                      Contains("B/census.json: covers text 2, which A/census.json covers too"));
  // Found under a range that reaches past it (one pass over both lists, not pairwise).
  REQUIRE_THROWS_WITH(census_of({3, 4, 5, 6, 7}).merge(census_of({1, 6, 9}), "A", "B"), Contains("B: covers text 6, which A covers too"));
  // The member that differs, with both values (hostile tester: both settings objects were printed whole).
  REQUIRE_THROWS_WITH(a.merge(census_of({1}, provenance("{\"sink_epsilon\":0.5}")), "A", "B"),
                      Contains("B: does not match A: settings.sink_epsilon: 0.3 in A, 0.5 in B; only outputs"));
  CensusProvenance other_version = provenance();
  other_version.attnviz_version = "0.0.9";
  REQUIRE_THROWS_WITH(a.merge(census_of({1}, other_version), "A", "B"), Contains("attnviz_version: \"0.1.0\" in A, \"0.0.9\" in B"));
  CHECK(a.texts() == 2);  // a refused merge leaves the census as it was
}

TEST_CASE("corpus_census: census.csv has S_texts, S_mean, S_std, S_ci95_low, S_ci95_high for every statistic", "[census]") {
  const std::string csv = census_of({0}).to_csv();
  const std::string header = csv.substr(0, csv.find('\n'));
  CHECK_THAT(header, Contains("layer,head,entropy_mean_texts,entropy_mean_mean,entropy_mean_std,entropy_mean_ci95_low,entropy_mean_ci95_high,"));
  CHECK_THAT(header, Contains(",induction_score_tl_ci95_high"));
  CHECK(std::count(header.begin(), header.end(), ',') == 1 + 5 * static_cast<long>(corpus_statistic_names().size()));
  // One text: std and interval are empty fields.
  CHECK_THAT(csv, Contains("\n1,0,1,0,,,,"));
}

TEST_CASE("corpus_census: census.json reads back exactly, another format version is refused", "[census][errors]") {
  test::TempDir dir;
  CorpusCensus original = census_of({0, 1, 5}, full_provenance(), 0.1);
  original.model_name = "toy";
  std::ofstream(dir.file("census.json")) << original.to_json();
  const CorpusCensus back = CorpusCensus::from_json(dir.file("census.json"));
  CHECK(back.covered() == original.covered());
  CHECK(back.stats()[1][3].mean == original.stats()[1][3].mean);
  CHECK(back.stats()[1][3].m2 == original.stats()[1][3].m2);
  CHECK(back.to_json() == original.to_json());
  nlohmann::json edited = nlohmann::json::parse(original.to_json());
  edited["version"] = 2;
  std::ofstream(dir.file("v2.json")) << edited.dump();
  REQUIRE_THROWS_WITH(CorpusCensus::from_json(dir.file("v2.json")), Contains("v2.json: /version: expected 1"));
  // A field of the wrong type is the file's fault (exit 1), not an internal error.
  edited["version"] = 1;
  edited["attnviz_version"] = 5;
  std::ofstream(dir.file("typed.json")) << edited.dump();
  REQUIRE_THROWS_AS(CorpusCensus::from_json(dir.file("typed.json")), InputError);
  REQUIRE_THROWS_WITH(CorpusCensus::from_json(dir.file("typed.json")), Contains("typed.json: /attnviz_version: expected a string, got 5"));
  // The toy census of the other tests has no full provenance: checked before anything is read.
  std::ofstream(dir.file("toy.json")) << census_of({0}).to_json();
  REQUIRE_THROWS_WITH(CorpusCensus::from_json(dir.file("toy.json")), Contains("toy.json: /model/architecture: missing field"));
}

TEST_CASE("census_check: a census.json edited in one place is refused naming the member and the value", "[census][errors]") {
  CorpusCensus census = census_of({0, 1, 5}, full_provenance(), 0.1);
  census.model_name = "toy";
  const nlohmann::ordered_json valid = nlohmann::ordered_json::parse(census.to_json());
  CHECK_NOTHROW(check_census_json(valid, "c.json"));
  const auto refused = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json edited = valid;
    edit(edited);
    try {
      check_census_json(edited, "c.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused([](auto& j) { j["heads"][1]["sink_rate"]["p"] = 1; }) ==
        "c.json: unknown member /heads/1/sink_rate/p (a census.json has here: texts, mean, m2, std, ci95_low, ci95_high)");
  CHECK(refused([](auto& j) { j["heads"].erase(0); }) ==
        "c.json: /heads: head L1H0 missing (the model has 2 layers of 2 heads, /settings/layers is \"1\"; each selected head is listed once)");
  CHECK(refused([](auto& j) { j["heads"][0]["layer"] = 0; }) == "c.json: /heads/0/layer: expected a layer /settings/layers selects (1), got 0");
  CHECK(refused([](auto& j) { j["heads"][0]["diagonal_mass"]["mean"] = 1.0 + 2e-9; }) ==
        "c.json: /heads/0/diagonal_mass/mean: expected a mean in [0, 1] (a mass of attention weights, each row summing to 1), got 1.000000002");
  // Within the rounding slack the range holds; that mean is refused further on: values of mean
  // 1 in [0, 1] are all 1 and have no spread (Bhatia-Davis), and this m2 is not 0.
  CHECK_THAT(refused([](auto& j) { j["heads"][0]["diagonal_mass"]["mean"] = 1.0 + 5e-10; }),
             Contains("c.json: /heads/0/diagonal_mass/m2: expected at most 0.0 (n * (mean - low) * (high - mean) for 3 texts"));
  CHECK(refused([](auto& j) { j["covers"]["ranges"][0] = {0, 0}; }) ==
        "c.json: /covers/texts: expected 2 (the number of text indices in /covers/ranges), got 3");
  CHECK(refused([](auto& j) { j["heads"][1]["entropy_mean"]["m2"] = -1e-300; }) ==
        "c.json: /heads/1/entropy_mean/m2: expected a finite number from 0 (a sum of squares), got -1e-300");
  // What a real run allows (issue 22, hostile tester): sink_rate k/n; m2 within Bhatia-Davis;
  // statistics defined on every text counted on every text; tokens within texts × max_tokens.
  // Relations between statistics (a second hostile tester): each value alone is in its range.
  CHECK_THAT(refused([](auto& j) {
               auto& score = j["heads"][0]["previous_token_score"];
               const double shift = j["heads"][0]["previous_token_mass"]["mean"].template get<double>() + 1e-6 - score["mean"].template get<double>();
               for (const char* k : {"mean", "ci95_low", "ci95_high"}) score[k] = score[k].template get<double>() + shift;
             }),
             Contains("c.json: /heads/0/previous_token_score/mean: expected at most "));
  CHECK_THAT(refused([](auto& j) { j["heads"][1]["induction_score"]["texts"] = 0; j["heads"][1]["induction_score"]["m2"] = 0.0;
                              for (const char* k : {"mean", "std", "ci95_low", "ci95_high"}) j["heads"][1]["induction_score"][k] = nullptr; }),
             Contains("c.json: /heads/1/induction_score/texts: expected 1 (head L1H1; head L1H0, /heads/0, has that"));
  CHECK_THAT(refused([](auto& j) { j["covers"]["tokens"] = 3; }), Contains("c.json: /heads/0/entropy_mean/mean: expected at most 0.0 (3 texts of 3 tokens (/covers): none longer than 1, ln of that), got 0.0748"));
  CHECK(refused([](auto& j) { j["heads"][0]["sink_rate"]["mean"] = 0.5; }) ==
        "c.json: /heads/0/sink_rate/mean: expected k/3 for a whole number k of texts (a rate of 0/1 indicators over 3 texts), got 0.5");
  CHECK_THAT(refused([](auto& j) { j["heads"][0]["diagonal_mass"]["m2"] = 3 * 0.25 + 0.01; }),
             Contains("c.json: /heads/0/diagonal_mass/m2: expected at most "));
  CHECK(refused([](auto& j) { j["heads"][0]["first_token_mass"]["texts"] = 2; }) ==
        "c.json: /heads/0/first_token_mass/texts: expected 3 (/covers/texts: first_token_mass is defined on every text), got 2");
  CHECK(refused([](auto& j) { j["covers"]["tokens"] = 3 * 16 + 1; }) ==
        "c.json: /covers/tokens: expected at most 3 texts * 16 (/settings/max_tokens), got 49");
  CHECK(refused([](auto& j) { j["heads"][1]["entropy_mean"]["m2"] = -0.0; }) ==
        "c.json: /heads/1/entropy_mean/m2: expected a finite number from 0 (a sum of squares), got -0.0");
}

TEST_CASE("census_journal_check: a journal line is checked as strictly as a census.json", "[census][errors]") {
  JournalLineChecker lines("t.jsonl", journal_provenance());
  const nlohmann::ordered_json valid = nlohmann::ordered_json::parse(journal_line(text(0, 0.1)));
  CHECK(lines.check(valid, 2).heads.size() == 2);
  const auto refused = [&](const std::function<void(nlohmann::ordered_json&)>& edit) {
    nlohmann::ordered_json edited = valid;
    edit(edited);
    try {
      lines.check(edited, 2);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused([](auto& j) { j["heads"].erase(1); }), Contains("t.jsonl: line 2: head L1H1 missing"));
  CHECK_THAT(refused([](auto& j) { j["heads"][1][2] = 0; }), Contains("t.jsonl: line 2: /heads/1: [\"\",\"\",0,1] is not a head of this run"));
  CHECK_THAT(refused([](auto& j) { j["heads"][0][4][8] = 0.5; }), Contains("/heads/0/4/8: L1H0 sink_rate: expected 0 or 1"));
  CHECK_THAT(refused([](auto& j) { j["heads"][0][4][9] = j["heads"][0][4][5].template get<double>() + 1e-6; }),
             Contains("/heads/0: L1H0: previous_token_score 0.05000"));
  CHECK_THAT(refused([](auto& j) { j["heads"][0][4][8] = 1; }), Contains("/heads/0: L1H0: first_token_mass 0.06000000000000001 at most 0.09999999999999999 while sink_rate is 1"));
  CHECK_THAT(refused([](auto& j) { j["heads"][1][4][7] = nullptr; }),
             Contains("/heads/1: L1H1 induction_score is null and L1H0's a number (where it is defined is the text's"));
  CHECK_THAT(refused([](auto& j) { j["heads"][0][4][3] = 1.5; }), Contains("/heads/0: L1H0: mean_distance 1.5 above 1.0 ((tokens - 1)/2 for 3 tokens"));
  CHECK_THAT(refused([](auto& j) { j["heads"][0][4][3] = 2.5; }), Contains("/heads/0/4/3: L1H0 mean_distance: expected a number in [0, 2]"));
  CHECK_THAT(refused([](auto& j) { j["heads"][0][4][4] = nullptr; }), Contains("L1H0 diagonal_mass: expected a number (defined on every text), got null"));
  CHECK_THAT(refused([](auto& j) { j["tokens"] = 17; }), Contains("/tokens: expected a number of tokens from 1, at most 16 (settings.max_tokens), got 17"));
  CHECK_THAT(refused([](auto& j) { j["extra"] = 1; }), Contains("t.jsonl: line 2: unknown member /extra"));
}

TEST_CASE("census_journal: texts read back, a half-written last line cut off, another run journal refused", "[census][errors]") {
  test::TempDir dir;
  const std::string path = dir.file("texts.jsonl");
  {
    JournalWriter journal(path, journal_header(journal_provenance(), "0/1"));
    journal.append(journal_line(text(0, 0.1)));
    journal.append(journal_line(text(1, 0.1)));
  }
  const std::string whole = test::read_file(path);
  std::ofstream(path, std::ios::app) << "{\"index\": 2, \"tok";
  const std::vector<TextStatistics> texts = read_journal(path, journal_provenance(), "0/1");
  REQUIRE(texts.size() == 2);
  CHECK(texts[1].index == 1);
  CHECK(texts[1].heads[1].second[4] == text(1, 0.1).heads[1].second[4]);  // doubles round-trip exactly
  CHECK_FALSE(texts[1].heads[0].second[7]);
  CHECK(test::read_file(path) == whole);  // the half line is gone
  // The member that differs is named, with both values.
  REQUIRE_THROWS_WITH(read_journal(path, journal_provenance(0.5), "0/1"),
                      Contains("texts.jsonl: is the journal of a run with another settings.sink_epsilon (0.3, this run: 0.5)"));
  REQUIRE_THROWS_WITH(read_journal(path, journal_provenance(), "1/2"), Contains("is the journal of a run with another shard"));
  const CensusProvenance fewer = journal_provenance(0.3, 50), all = journal_provenance(0.3, 520);
  const std::string other = dir.file("other.jsonl");
  {
    JournalWriter journal(other, journal_header(all, "0/1"));
    journal.append(journal_line(text(0, 0.1)));
  }
  REQUIRE_THROWS_WITH(read_journal(other, fewer, "0/1"),
                      Contains("another corpus.texts (520, this run: 50: --limit or the corpus changed)"));
  // A damaged journal is refused: a text twice, or an index the run does not hold.
  const std::string twice = dir.file("twice.jsonl");
  {
    JournalWriter journal(twice, journal_header(all, "0/1"));
    journal.append(journal_line(text(0, 0.1)));
    journal.append(journal_line(text(0, 0.1)));
  }
  REQUIRE_THROWS_WITH(read_journal(twice, all, "0/1"), Contains("twice.jsonl: line 3: text 0 is in the journal twice"));
  const std::string past = dir.file("past.jsonl");
  {
    JournalWriter journal(past, journal_header(fewer, "0/1"));
    TextStatistics far = text(0, 0.1);
    far.index = 4000;
    journal.append(journal_line(far));
  }
  REQUIRE_THROWS_WITH(read_journal(past, fewer, "0/1"), Contains("line 2: text 4000 is not a text of this run (the corpus has 50"));
  const std::string other_shard = dir.file("shard.jsonl");
  {
    JournalWriter journal(other_shard, journal_header(all, "1/2"));
    journal.append(journal_line(text(2, 0.1)));
  }
  REQUIRE_THROWS_WITH(read_journal(other_shard, all, "1/2"), Contains("text 2 is not a text of this run"));
  // The fuzzer once gave a header's shard "9/x" as this run's: std::stol threw std::invalid_argument.
  for (const char* shard : {"9/x", "", "2", "2/2", "-1/2", "1/2/3", " 1/2", "99999999999999999999/2"}) {
    CHECK_THROWS_AS(read_journal(other_shard, all, shard), UsageError);
    CHECK_THROWS_WITH(read_journal(other_shard, all, shard),
                      "--shard: expected K/N with 0 <= K < N, e.g. 0/4, got \"" + std::string(shard) + "\"");
  }
}

// census.png once left out a statistic defined on no text (the induction score of texts that
// repeat no token) without a word, and drew a head whose statistic was undefined as a 0.
TEST_CASE("corpus_census: census.png draws a statistic defined on no text as an empty panel that says so", "[census][render]") {
  const PictureSettings options;
  const std::size_t induction = 7;
  REQUIRE(corpus_statistic_names()[induction] == "induction_score");
  SECTION("defined on no text: an empty panel, titled and warned") {
    std::vector<std::string> warnings;
    const std::vector<GridRequest> requests = corpus_census_requests(census_of({1, 3}), options, warnings);
    REQUIRE(requests.size() == 1);
    const GridRequest& r = requests.front();
    REQUIRE(r.panels.size() == corpus_statistic_names().size());
    REQUIRE(r.panel_allowed.size() == r.panels.size());
    CHECK(r.panel_titles[induction] == "induction score: defined on no text");
    CHECK_FALSE(r.panel_allowed[induction]->any());
    CHECK(r.panel_allowed[0]->all());
    REQUIRE(warnings.size() == 1);
    CHECK(warnings.front() == "census.png: induction_score defined on no text: drawn as an empty panel");
    std::vector<std::string> render_warnings;
    CHECK_FALSE(corpus_census_png(census_of({1, 3}), options, render_warnings).empty());
  }
  SECTION("defined on some text: drawn, no warning") {
    std::vector<std::string> warnings;
    const std::vector<GridRequest> requests = corpus_census_requests(census_of({0, 1}), options, warnings);
    CHECK(requests.front().panel_titles[induction] == "induction score");
    CHECK(requests.front().panel_allowed[induction]->all());
    CHECK(warnings.empty());
  }
  SECTION("a head where a statistic is undefined is a masked cell, not a 0") {
    CorpusCensus c(provenance(), 10);
    TextStatistics t = text(0);
    t.heads[1].second[induction].reset();
    c.add(t);
    std::vector<std::string> warnings;
    const GridRequest r = corpus_census_requests(c, options, warnings).front();
    CHECK((*r.panel_allowed[induction])(0, 0) == 1);
    CHECK((*r.panel_allowed[induction])(0, 1) == 0);
    CHECK(warnings.empty());
  }
}

TEST_CASE("corpus_census: census.png marks cross-attention's self-only statistics as such, without a warning", "[census][render]") {
  CorpusCensus c(provenance(), 10);
  TextStatistics t;
  t.index = 0;
  t.tokens = 3;
  std::vector<std::optional<double>> values(corpus_statistic_names().size());
  values[0] = 0.5;  // entropy_mean; the rest (mean_distance on) are self-attention's only
  values[1] = 0.4;
  values[2] = 0.9;
  t.heads.push_back({CensusHead{"decoder", "cross", 0, 0}, values});
  c.add(t);
  std::vector<std::string> warnings;
  const std::vector<GridRequest> requests = corpus_census_requests(c, PictureSettings(), warnings);
  REQUIRE(requests.size() == 1);
  CHECK(requests.front().panel_titles[2] == "max weight");
  CHECK(requests.front().panel_titles[3] == "mean distance (tokens): self-attention only");
  CHECK(requests.front().panel_titles[11] == "induction_score_tl (TL): self-attention only");
  CHECK_FALSE(requests.front().panel_allowed[3]->any());
  CHECK(warnings.empty());
}

TEST_CASE("corpus_census: texts covered in any order give the same sorted ranges", "[census]") {
  CHECK(census_of({0, 1, 2, 3, 5}).covered() == IndexRanges{{0, 3}, {5, 5}});
  CHECK(census_of({5, 1, 2, 0, 3}).covered() == IndexRanges{{0, 3}, {5, 5}});
  CHECK(census_of({0, 3, 6, 9}).covered() == IndexRanges{{0, 0}, {3, 3}, {6, 6}, {9, 9}});
  CHECK(census_of({9, 6, 3, 0, 4, 5}).covered() == IndexRanges{{0, 0}, {3, 6}, {9, 9}});
}
