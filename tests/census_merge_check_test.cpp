// census --merge's checks across inputs (issue 22, hostile tester): the text two inputs both
// cover, naming the two that really hold it; provenance differences member by member; and a
// range for every statistic census_check bounds means by.
#include "census/census_merge_check.hpp"

#include <stdexcept>

#include "census/census_check.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

TEST_CASE("census_merge_check: a shared text names the two inputs that hold it, wherever they stand", "[census][errors]") {
  // The overlap is between the 2nd and 3rd inputs; the 1st was once named as the other holder.
  const std::vector<IndexRanges> three = {{{0, 0}, {3, 3}}, {{1, 1}, {4, 4}}, {{2, 2}, {4, 5}}};
  const std::optional<SharedText> shared = first_shared_text(three);
  REQUIRE(shared);
  CHECK(shared->text == 4);
  CHECK(shared->first == 1);
  CHECK(shared->second == 2);
  // The lowest shared text, found under a long range that reaches past it.
  const std::optional<SharedText> under = first_shared_text({{{0, 9}}, {{12, 12}}, {{11, 12}}, {{5, 5}}});
  REQUIRE(under);
  CHECK(under->text == 5);
  CHECK(under->first == 0);
  CHECK(under->second == 3);
  CHECK_FALSE(first_shared_text({{{0, 0}, {2, 2}}, {{1, 1}, {3, 9}}, {}}));
  CHECK_FALSE(first_shared_text({}));
}

TEST_CASE("census_merge_check: provenance differences name each member with both values", "[census][errors]") {
  const CensusProvenance a{"0.1.0", "{\"name\":\"toy\",\"layers\":2}", "{\"fnv1a64\":\"00\",\"texts\":4}",
                           "{\"sink_epsilon\":0.3,\"no_bos\":false}"};
  CensusProvenance b = a;
  b.settings = "{\"no_bos\":false,\"sink_epsilon\":0.3}";  // another order is no difference
  CHECK(provenance_differences(a, b, "A", "B").empty());
  b.settings = "{\"no_bos\":true,\"sink_epsilon\":0.5}";
  b.corpus = "{\"fnv1a64\":\"01\",\"texts\":4,\"extra\":1}";
  CHECK(provenance_differences(a, b, "A", "B") ==
        "corpus.fnv1a64: \"00\" in A, \"01\" in B; corpus.extra: nothing in A, 1 in B; "
        "settings.no_bos: false in A, true in B; settings.sink_epsilon: 0.3 in A, 0.5 in B");
  b = a;
  b.attnviz_version = "0.2.0";
  CHECK(provenance_differences(a, b, "A", "B") == "attnviz_version: \"0.1.0\" in A, \"0.2.0\" in B");
}

TEST_CASE("census_check: every corpus statistic has the range its mean is checked against", "[census]") {
  for (const std::string& name : corpus_statistic_names()) {
    const StatisticRange& range = statistic_range(name);
    CHECK(range.low == 0);
    CHECK(range.high >= 1);
  }
  CHECK(statistic_range("sink_rate").high == 1);
  CHECK(statistic_range("entropy_mean").high == std::numeric_limits<double>::infinity());
  CHECK_THROWS_AS(statistic_range("attention_to_bos"), std::out_of_range);
}
