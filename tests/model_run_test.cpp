// --layers parsing and block head names of model runs (model/model_run).
#include "core/error.hpp"
#include "model/model_run.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;

TEST_CASE("model_run: --layers accepts all, single layers, lists and ranges", "[model]") {
  CHECK(parse_layer_selection("all", 6).layers.empty());
  CHECK(parse_layer_selection("2", 6).layers == std::vector<int>{2});
  CHECK(parse_layer_selection("3,0", 6).layers == std::vector<int>{0, 3});
  CHECK(parse_layer_selection("1-4", 6).layers == std::vector<int>{1, 2, 3, 4});
  CHECK(parse_layer_selection("0,2-3,2", 0).layers == std::vector<int>{0, 2, 3});
  const LayerSelection two = parse_layer_selection("2", 6);
  CHECK(two.contains(2));
  CHECK_FALSE(two.contains(1));
  CHECK(LayerSelection{}.contains(17));
}

TEST_CASE("model_run: --layers refuses malformed items and layers beyond the model", "[model][errors]") {
  const std::string bad = GENERATE(std::string("x"), std::string("1,"), std::string("-1"), std::string("3-1"),
                                   std::string("1-"), std::string("2 "));
  CHECK_THROWS_AS(parse_layer_selection(bad, 6), UsageError);
  CHECK_THROWS_WITH(parse_layer_selection("6", 6), Contains("--layers") && Contains("0-5"));
}

TEST_CASE("model_run: a block's head names are its record's", "[model]") {
  AttentionBlock block;
  block.layer = 2;
  block.record.layer = 2;
  CHECK(block.head_name(5) == "L2H5");
}
