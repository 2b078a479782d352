// census --merge (issue 22): the folders and -o in any order. `--merge -o OUT DIR1 DIR2` once
// parsed wrongly: --merge is a vector option, and CLI11 gave it no folder there.
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

// Parses `attnviz census ARGS…` as main does (parse_arguments) and returns the options.
Options parse_census(std::vector<std::string> args) {
  CLI::App app;
  Options options;
  add_options(app, options);
  args.insert(args.begin(), "census");
  parse_arguments(app, args);
  return options;
}

}  // namespace

TEST_CASE("command_line: census --merge takes its folders and -o in any order", "[cli]") {
  const std::vector<std::string> both = {"s0", "s1"};
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--merge", "s0", "s1", "-o", "out"},
           {"-o", "out", "--merge", "s0", "s1"},
           {"--merge", "-o", "out", "s0", "s1"},
           {"--merge", "s0", "-o", "out", "s1"},
           {"--merge", "--output", "out", "s0", "s1"},
           {"--merge", "-o", "out", "--quiet", "s0", "s1"},
           {"--merge=s0", "-o", "out", "s1"},
       }) {
    std::string line;
    for (const std::string& a : args) line += a + " ";
    INFO(line);
    const Options o = parse_census(args);
    CHECK(o.merge == both);
    CHECK(o.output == "out");
  }
}

TEST_CASE("command_line: census folders without --merge, or --merge without folders, are refused", "[cli][errors]") {
  CHECK_THROWS_WITH(parse_census({"--model", "m.gguf", "--corpus", "c.txt", "-o", "out", "s0"}),
                    Catch::Matchers::Contains("unexpected argument s0: only --merge takes folders"));
  CHECK_THROWS_WITH(parse_census({"--merge", "-o", "out"}), Catch::Matchers::Contains("--merge: needs the folders to combine"));
}
