// cli/suggestion: the "did you mean" of misspelt commands and flags (issue 24, section 4).
#include "cli/suggestion.hpp"

#include "support/test_support.hpp"

using namespace attnviz;

TEST_CASE("edit_distance: Levenshtein's insertions, deletions and substitutions", "[cli]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  CHECK(edit_distance("model", "model") == 0);
  CHECK(edit_distance("modle", "model") == 2);  // a swap is two edits
  CHECK(edit_distance("layer", "layers") == 1);
}

TEST_CASE("nearest_name: the flag or command meant, or none when nothing is close", "[cli]") {
  const std::vector<std::string> flags = {"-o", "--output", "--model", "--text", "--layers", "--logits",
                                          "--rollout", "--rollout-residual", "--threads"};
  CHECK(nearest_name("--modle", flags) == "--model");
  CHECK(nearest_name("--layer", flags) == "--layers");
  CHECK(nearest_name("--txt", flags) == "--text");
  CHECK(nearest_name("-model", flags) == "--model");  // dashes are not counted
  CHECK(nearest_name("--outptu", flags) == "--output");
  SECTION("a unique prefix is completed") {
    CHECK(nearest_name("--rollout-res", flags) == "--rollout-residual");
    CHECK(nearest_name("--thr", flags) == "--threads");
  }
  SECTION("nothing for short or far words, shared prefixes, or an exact name") {
    CHECK(nearest_name("-x", flags) == std::nullopt);
    CHECK(nearest_name("--l", flags) == std::nullopt);  // --layers and --logits
    CHECK(nearest_name("--colormap", flags) == std::nullopt);
    CHECK(nearest_name("--model", flags) == std::nullopt);
    CHECK(nearest_name("--", flags) == std::nullopt);
  }
  SECTION("commands") {
    const std::vector<std::string> commands = {"dump", "heatmaps", "render", "compare", "tokenize"};
    CHECK(nearest_name("heatmap", commands) == "heatmaps");
    CHECK(nearest_name("comapre", commands) == "compare");
    CHECK(nearest_name("plot", commands) == std::nullopt);
  }
}
