// The per-head statistics fields that the census and --stats files share: the same names in
// both, each file keeping its own key order (census: the fields' order; --stats JSON: sorted,
// as nlohmann::json writes objects).
#include "records/head_stat_fields.hpp"

#include <nlohmann/json.hpp>

#include "records/census_output.hpp"
#include "records/stats_output.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

// A cross-attention head: the positional statistics do not apply.
HeadStats cross_head() {
  HeadStats s;
  s.entropy_mean = 0.5;
  s.entropy_min = 0.25;
  s.entropy_max = 0.75;
  s.entropy_normalised_mean = 0.125;
  s.max_weight_mean = 0.625;
  s.argmax_keys = {1};
  return s;
}

std::vector<std::string> keys_in_file_order(const std::string& text, const std::string& array) {
  const nlohmann::ordered_json document = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& item : document.at(array).at(0).items()) keys.push_back(item.key());
  return keys;
}


}  // namespace

TEST_CASE("head_stat_fields: nine fields, named as the files name them", "[io]") {
  std::vector<std::string> names;
  for (const HeadStatField& field : head_stat_fields()) names.push_back(field.name);
  CHECK(names == std::vector<std::string>{"entropy_mean", "entropy_min", "entropy_max", "entropy_normalised_mean",
                                          "max_weight_mean", "mean_distance", "diagonal_mass", "previous_token_mass",
                                          "first_token_mass"});
  const HeadStats s = cross_head();
  CHECK(head_stat_fields()[3].value(s) == 0.125);
  CHECK(!head_stat_fields()[5].value(s).has_value());
}

TEST_CASE("head_stat_fields: the census keeps the fields' order, --stats JSON sorts its keys", "[io]") {
  const std::vector<CensusRow> rows{{"", "", 1, 2, cross_head(), std::nullopt}};
  CHECK(keys_in_file_order(census_to_json(rows), "heads") ==
        std::vector<std::string>{"layer", "head", "entropy_mean", "entropy_min", "entropy_max",
                                 "entropy_normalised_mean", "max_weight_mean", "mean_distance", "diagonal_mass",
                                 "previous_token_mass", "first_token_mass", "induction_score"});
  CHECK(census_to_csv(rows) ==
        "layer,head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,mean_distance,"
        "diagonal_mass,previous_token_mass,first_token_mass,induction_score\n"
        "1,2,0.5,0.25,0.75,0.125,0.625,,,,,\n");
  // An encoder-decoder's rows say their block first, as the model dump's stack and kind.
  const std::vector<CensusRow> blocks{{"decoder", "cross", 1, 2, cross_head(), std::nullopt}};
  CHECK(keys_in_file_order(census_to_json(blocks), "heads") ==
        std::vector<std::string>{"stack", "kind", "layer", "head", "entropy_mean", "entropy_min", "entropy_max",
                                 "entropy_normalised_mean", "max_weight_mean", "mean_distance", "diagonal_mass",
                                 "previous_token_mass", "first_token_mass", "induction_score"});
  CHECK(census_to_csv(blocks) ==
        "stack,kind,layer,head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,"
        "mean_distance,diagonal_mass,previous_token_mass,first_token_mass,induction_score\n"
        "decoder,cross,1,2,0.5,0.25,0.75,0.125,0.625,,,,,\n");

  StatsReport report;
  report.head_names = {"L0H1"};
  report.stats = {cross_head()};
  report.divergence = Eigen::MatrixXd::Zero(1, 1);
  report.query_tokens = {"q"};
  report.key_tokens = {"k0", "k1"};
  CHECK(keys_in_file_order(stats_to_json(report), "heads") ==
        std::vector<std::string>{"argmax_keys", "diagonal_mass", "entropy_max", "entropy_mean", "entropy_min",
                                 "entropy_normalised_mean", "first_token_mass", "head", "max_weight_mean",
                                 "mean_distance", "previous_token_mass"});
  CHECK(stats_to_csv(report) ==
        "head,entropy_mean,entropy_min,entropy_max,entropy_normalised_mean,max_weight_mean,mean_distance,"
        "diagonal_mass,previous_token_mass,first_token_mass,\"js_L0H1\"\n"
        "\"L0H1\",0.5,0.25,0.75,0.125,0.625,,,,,0\n");
}
