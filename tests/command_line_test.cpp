// Argument parsing only (CLI11's TApp style): an App set up by add_options, fed argument vectors.
// Here: compare --heads naming heads of a whole model, plain (L0H3) or with their block
// (enc.L0H3, dec.L0H3, cross.L0H3) for encoder-decoder models.
#include "cli/command_line.hpp"

#include <string>
#include <vector>

#include "support/test_support.hpp"

using namespace attnviz;
using Catch::Matchers::Contains;

namespace {

// Parses `attnviz compare --model m --heads HEADS -o x.png` and returns the options.
Options parse_heads(const std::string& heads) {
  CLI::App app;
  Options options;
  add_options(app, options);
  std::vector<std::string> args = {"x.png", "-o", heads, "--heads", "m", "--model", "compare"};  // reversed
  app.parse(args);
  return options;
}

}  // namespace

TEST_CASE("command_line: --heads takes plain and block-named heads of a whole model", "[cli]") {
  SECTION("plain, as for decoder-only models") {
    CHECK(parse_heads("L0H3,L4H1").layer_heads == std::vector<LayerHead>{{0, 3, ""}, {4, 1, ""}});
  }
  SECTION("every block of an encoder-decoder") {
    CHECK(parse_heads("enc.L0H3,dec.L1H1,cross.L12H7").layer_heads ==
          std::vector<LayerHead>{{0, 3, "enc"}, {1, 1, "dec"}, {12, 7, "cross"}});
  }
  SECTION("the same layer and head in two blocks are two heads") {
    CHECK(parse_heads("enc.L0H3,dec.L0H3").layer_heads.size() == 2);
  }
  SECTION("plain head numbers stay single-layer heads") {
    const Options o = parse_heads("0,3");
    CHECK(o.heads == std::vector<int>{0, 3});
    CHECK(o.layer_heads.empty());
  }
}

TEST_CASE("command_line: malformed --heads names list the forms", "[cli][errors]") {
  const std::string bad = GENERATE(std::string("self.L0H3"), std::string(".L0H3"), std::string("enc.L0H3x"),
                                   std::string("enc.dec.L0H3"), std::string("ENC.L0H3"), std::string("enc.L-1H3"),
                                   std::string("cross.L1"));
  INFO(bad);
  CHECK_THROWS_WITH(parse_heads(bad), Contains("--heads: expected heads named L<layer>H<head> separated by commas") &&
                                          Contains("(encoder-decoder models: enc.L0H3, dec.L0H3 or cross.L0H3)") &&
                                          Contains("got \"" + bad + "\""));
}

TEST_CASE("command_line: a head named twice in one block is refused", "[cli][errors]") {
  CHECK_THROWS_WITH(parse_heads("cross.L1H1,cross.L1H1"), Contains("cross.L1H1 is named twice"));
}
