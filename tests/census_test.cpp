// The head census (issue 13): every statistic of one head on hand values, and the CSV layout.
#include "cli/census_job.hpp"

#include <cmath>

#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::WithinAbs;
using attnviz::test::matrix;

namespace {

// "a b a", causal: row 0 on itself, row 1 0.4/0.6, row 2 0.2/0.3/0.5.
AttentionBlock hand_block() {
  AttentionBlock block;
  block.layer = 2;
  block.record.layer = 2;
  block.record.causal = true;
  block.record.query_tokens = block.record.key_tokens = {"a", "b", "a"};
  block.record.num_heads = 1;
  block.record.weights = {matrix({{1, 0, 0}, {0.4, 0.6, 0}, {0.2, 0.3, 0.5}})};
  return block;
}

}  // namespace

TEST_CASE("census: every statistic of a head on hand values", "[census]") {
  const std::vector<CensusRow> rows = census_of_block(hand_block());
  REQUIRE(rows.size() == 1);
  const CensusRow& r = rows.front();
  CHECK(r.layer == 2);
  CHECK(r.head == 0);
  const double h1 = -(0.4 * std::log(0.4) + 0.6 * std::log(0.6));                      // 0.673012
  const double h2 = -(0.2 * std::log(0.2) + 0.3 * std::log(0.3) + 0.5 * std::log(0.5));  // 1.029653
  CHECK_THAT(r.stats.entropy_mean, WithinAbs((0 + h1 + h2) / 3, 1e-6));
  CHECK_THAT(r.stats.entropy_min, WithinAbs(0, 1e-12));
  CHECK_THAT(r.stats.entropy_max, WithinAbs(h2, 1e-6));
  // Row 0 sees one key: H/ln k is 0 there by definition.
  CHECK_THAT(r.stats.entropy_normalised_mean, WithinAbs((0 + h1 / std::log(2.0) + h2 / std::log(3.0)) / 3, 1e-6));
  CHECK_THAT(r.stats.max_weight_mean, WithinAbs((1 + 0.6 + 0.5) / 3, 1e-6));
  CHECK_THAT(*r.stats.mean_distance, WithinAbs((0 + 0.4 * 1 + (0.2 * 2 + 0.3 * 1)) / 3, 1e-6));
  CHECK_THAT(*r.stats.diagonal_mass, WithinAbs((1 + 0.6 + 0.5) / 3, 1e-6));
  CHECK_THAT(*r.stats.previous_mass, WithinAbs((0.4 + 0.3) / 2, 1e-6));
  CHECK_THAT(*r.stats.first_token_mass, WithinAbs((1 + 0.4 + 0.2) / 3, 1e-6));
  // Query 2 ("a") had "a" at 0, followed by key 1: weight 0.3; no other row repeats.
  CHECK_THAT(*r.induction, WithinAbs(0.3, 1e-6));
}

TEST_CASE("census: CSV has layer, head, the --stats names and the induction score", "[census]") {
  std::vector<CensusRow> rows = census_of_block(hand_block());
  const std::string csv = census_to_csv(rows);
  CHECK(csv.substr(0, csv.find('\n')) ==
        "layer,head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,mean_distance,"
        "diagonal_mass,previous_token_mass,first_token_mass,induction_score");
  CHECK(csv.find("\n2,0,0.567555,0,1.02965,") != std::string::npos);
  const std::string tail = ",0.35,0.533333,0.3\n";
  CHECK(csv.substr(csv.size() - tail.size()) == tail);
  rows.front().induction.reset();
  CHECK(census_to_csv(rows).substr(census_to_csv(rows).size() - 2) == ",\n");
  CHECK(census_to_json(rows).find("the text repeats no token") != std::string::npos);
}

TEST_CASE("census: the file name must end in .csv or .json", "[census][errors]") {
  CHECK(census_format("x.CSV") == ".csv");
  CHECK_THROWS_WITH(census_format("x.txt"), "--census: the file name must end in .csv or .json, got \"x.txt\"");
}
