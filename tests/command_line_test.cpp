// Argument parsing only (CLI11's TApp style): an App set up by add_options, fed argument vectors.
// Here: compare --heads naming heads of a whole model, plain (L0H3) or with their block
// (enc.L0H3, dec.L0H3, cross.L0H3) for encoder-decoder models; the one-line errors of misspelt
// flags and options before a command.
#include "cli/command_line.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
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
  // A new user typed the panel titles of a layer without a number (H0 · head 0 of 2).
  SECTION("H<h>, as pictures of a layer without a number title their heads, is a head number") {
    CHECK(parse_heads("H0,H1").heads == std::vector<int>{0, 1});
    CHECK(parse_heads("H12,3").heads == std::vector<int>{12, 3});
    CHECK_THROWS_WITH(parse_heads("H1,1"), Contains("head 1 is named twice"));
    CHECK_THROWS_WITH(parse_heads("H"), Contains("or heads named as the pictures name them (H3, or L0H3"));
    CHECK_THROWS_WITH(parse_heads("HH1"), Contains("got \"HH1\""));
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

namespace {

// The error line and exit code `attnviz ARGS` gets from CLI11 (as main() prints it), or
// "(parsed)" when ARGS parse.
std::pair<std::string, int> failure_of(std::vector<std::string> args) {
  CLI::App app;
  Options options;
  add_options(app, options);
  try {
    parse_arguments(app, args);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    const int code = app.exit(e, out, err);
    return {err.str(), code};
  }
  return {"(parsed)", 0};
}

}  // namespace

// Issue 24, section 4: misspelt flags got CLI11's "The following argument was not expected",
// and `attnviz -o out/x` an unknown command "out/x".
TEST_CASE("command_line: a misspelt flag is named with the nearest of its command's flags", "[cli][errors]") {
  CHECK(failure_of({"dump", "--modle", "m.gguf", "-o", "x.json"}) ==
        std::pair<std::string, int>{"attnviz: error: dump: unknown option \"--modle\"; did you mean \"--model\"? "
                                    "(see attnviz dump --help)\n", 109});
  // Testers: with -o misspelt (or missing) the message was only "--output is required".
  CHECK(failure_of({"dump", "in.json", "--outptu", "x.json"}) ==
        std::pair<std::string, int>{"attnviz: error: dump: unknown option \"--outptu\"; did you mean \"--output\"? "
                                    "(see attnviz dump --help)\n", 109});
  CHECK(failure_of({"tokenize", "--modle", "m.gguf", "--text", "a"}).first ==
        "attnviz: error: tokenize: unknown option \"--modle\"; did you mean \"--model\"? (see attnviz tokenize --help)\n");
  CHECK(failure_of({"dump", "in.json"}).second == 106);  // nothing misspelt: the required option is named
  // A tester: --text with invalid UTF-8 was tokenized as stray byte tokens.
  CHECK(failure_of({"tokenize", "--model", "m.gguf", "--text", "\xFF\xFE ok"}) ==
        std::pair<std::string, int>{"attnviz: error: --text: is not UTF-8: byte 0xFF at offset 0 starts no valid character "
                                    "(check the terminal's or the file's encoding) (see attnviz --help, or attnviz COMMAND --help)\n", 105});
  CHECK(failure_of({"dump", "--model", "m.gguf", "--text", "caf\xC3", "-o", "x.json"}).first ==
        "attnviz: error: --text: is not UTF-8: byte 0xC3 at offset 3 starts no valid character (check the terminal's or "
        "the file's encoding) (see attnviz --help, or attnviz COMMAND --help)\n");
  CHECK(failure_of({"tokenize", "--model", "m.gguf", "--text", "caf\xC3\xA9 \xE7\x8C\xAB"}).first == "(parsed)");
  // A tester: --rollout-residual without --rollout was ignored in silence.
  CHECK(failure_of({"heatmaps", "--model", "m.gguf", "--text", "a", "--rollout-residual", "0.3", "-o", "x"}) ==
        std::pair<std::string, int>{"attnviz: error: --rollout-residual requires --rollout (see attnviz --help, or attnviz "
                                    "COMMAND --help)\n", 107});
  CHECK(failure_of({"dump", "--model", "m.gguf", "--layer", "3", "-o", "x.json"}).first ==
        "attnviz: error: dump: unknown option \"--layer\"; did you mean \"--layers\"? (see attnviz dump --help)\n");
  CHECK(failure_of({"heatmaps", "--model=m.gguf", "--rollout-res=0.3", "-o", "x"}).first ==
        "attnviz: error: heatmaps: unknown option \"--rollout-res\"; did you mean \"--rollout-residual\"? "
        "(see attnviz heatmaps --help)\n");
  CHECK(failure_of({"compare", "a.json", "--haeds", "0,1", "-o", "x.png"}).first ==
        "attnviz: error: compare: unknown option \"--haeds\"; did you mean \"--heads\"? (see attnviz compare --help)\n");
}

TEST_CASE("command_line: a flag of another command says whose it is, a far one is only named", "[cli][errors]") {
  CHECK(failure_of({"tokenize", "--model", "m.gguf", "--text", "a", "--format", "png"}).first ==
        "attnviz: error: tokenize: unknown option \"--format\": it is an option of dump, heatmaps, render, compare, explain and attribute "
        "(see attnviz tokenize --help)\n");
  CHECK(failure_of({"dump", "a.json", "-x", "-o", "x.json"}).first ==
        "attnviz: error: dump: unknown option \"-x\" (see attnviz dump --help)\n");
}

TEST_CASE("command_line: an option before any command is said to belong after one", "[cli][errors]") {
  CHECK(failure_of({"-o", "out/x"}) ==
        std::pair<std::string, int>{"attnviz: error: option \"-o\" comes before any command; name the command first: "
                                    "attnviz COMMAND -o out/x (commands: dump, heatmaps, render, compare, explain, tokenize, attribute, census, serve)\n",
                                    109});
  CHECK(failure_of({"--model", "m.gguf", "tokenize"}).first ==
        "attnviz: error: option \"--model\" comes before any command; name the command first: attnviz COMMAND "
        "--model m.gguf (commands: dump, heatmaps, render, compare, explain, tokenize, attribute, census, serve)\n");
  CHECK_THAT(failure_of({"--modle"}).first,
             Contains("option \"--modle\" comes before any command; name the command first: attnviz COMMAND --modle ..."));
  // A misspelt command still gets its suggestion.
  CHECK_THAT(failure_of({"heatmap", "a.json"}).first, Contains("unknown command \"heatmap\"; did you mean \"heatmaps\"?"));
}

TEST_CASE("command_line: tokenize --json asks for the JSON document even on a terminal", "[cli]") {
  CLI::App app;
  Options options;
  add_options(app, options);
  options.table = true;
  app.parse(std::vector<std::string>{"--json", "a", "--text", "m.gguf", "--model", "tokenize"});  // reversed
  CHECK(options.command == Command::Tokenize);
  CHECK_FALSE(options.table);
}

TEST_CASE("command_line: a word that is no command, with options after it, is an unknown command", "[cli][errors]") {
  CHECK(failure_of({"heatmap", "a.json", "-o", "out"}).first ==
        "attnviz: error: unknown command \"heatmap\"; did you mean \"heatmaps\"? (commands: dump, heatmaps, render, "
        "compare, explain, tokenize, attribute, census, serve)\n");
  CHECK(failure_of({"heatmap", "-o", "out"}).first ==
        "attnviz: error: unknown command \"heatmap\"; did you mean \"heatmaps\"? (commands: dump, heatmaps, render, "
        "compare, explain, tokenize, attribute, census, serve)\n");
  CHECK(failure_of({"plot", "-o", "out"}).first ==
        "attnviz: error: unknown command \"plot\" (commands: dump, heatmaps, render, compare, explain, tokenize, attribute, census, serve)\n");
}

// Issue 24 §2: a weights file may say "causal": true; --no-causal is the way to override it off.
TEST_CASE("command_line: --causal and --no-causal are flags of the attention commands and exclude each other",
          "[cli]") {
  const auto parse = [](std::vector<std::string> args) {
    CLI::App app;
    Options options;
    add_options(app, options);
    std::reverse(args.begin(), args.end());
    app.parse(args);
    return options;
  };
  for (const char* command : {"dump", "heatmaps", "compare"}) {
    const Options off = parse({command, "s.json", "-o", "x", "--no-causal"});
    CHECK(off.no_causal);
    CHECK_FALSE(off.causal);
    CHECK(parse({command, "s.json", "-o", "x", "--causal"}).causal);
    CHECK_THROWS_AS(parse({command, "s.json", "-o", "x", "--causal", "--no-causal"}), CLI::ExcludesError);
  }
}

// Tester's report (misread flags): "--causal=false" read as "flag not given", so a weights
// file's "causal": true stayed in force. Every switch of every command refuses a value.
TEST_CASE("command_line: a switch given a value is refused, naming the switch", "[cli][errors]") {
  for (const char* value : {"false", "0", "no", "off", "true", "1", ""}) {
    INFO(value);
    CHECK(failure_of({"dump", "s.json", "-o", "x.json", std::string("--causal=") + value}) ==
          std::pair<std::string, int>{
              "attnviz: error: dump: the switch --causal takes no value: name it to turn it on, leave it out to "
              "leave it off (--no-causal turns a weights file's \"causal\": true off) (see attnviz dump --help)\n",
              114});
  }
  CHECK_THAT(failure_of({"heatmaps", "s.json", "-o", "x", "--causal", "--no-causal=false"}).first,
             Contains("heatmaps: the switch --no-causal takes no value"));
  // Every switch of every command, help and version included.
  const std::vector<std::vector<std::string>> switches = {
      {"dump", "--scores"},    {"dump", "--outputs"},       {"dump", "--logits"},     {"dump", "--no-bos"},
      {"dump", "--rollout"},   {"dump", "--profile"},       {"heatmaps", "--annotate"}, {"render", "--rollout"},
      {"compare", "--average"}, {"compare", "--no-causal"}, {"tokenize", "--json"},   {"dump", "--help"},
  };
  for (const std::vector<std::string>& sw : switches) {
    INFO(sw[0] + " " + sw[1]);
    const auto [line, code] = failure_of({sw[0], "s.json", "-o", "x", sw[1] + "=false"});
    CHECK_THAT(line, Contains(sw[0] + ": the switch " + sw[1] + " takes no value"));
    CHECK(code == 114);
  }
  CHECK(failure_of({"--version=0"}).second == 114);
  CHECK(failure_of({"--help=0"}).second == 114);
}

// Tester's report: "compare x.json -heads 0" printed help and exited 0 (CLI11 reads -h, then
// "-eads"). -h is help only alone; a single-dash word starting with h is an unknown option.
TEST_CASE("command_line: a single-dash word starting with h is an unknown option, not help", "[cli][errors]") {
  CHECK(failure_of({"compare", "x.json", "-heads", "0", "-o", "y.png"}) ==
        std::pair<std::string, int>{"attnviz: error: compare: unknown option \"-heads\"; did you mean \"--heads\"? "
                                    "(see attnviz compare --help)\n", 109});
  CHECK(failure_of({"dump", "s.json", "-o", "x.json", "-hello"}) ==
        std::pair<std::string, int>{"attnviz: error: dump: unknown option \"-hello\"; did you mean \"--help\"? "
                                    "(see attnviz dump --help)\n", 109});
  CHECK(failure_of({"-hlep"}) == std::pair<std::string, int>{"attnviz: error: unknown option \"-hlep\"; did you mean "
                                                             "\"--help\"? (see attnviz --help)\n", 109});
  // Help still works alone, also beside such a word, and in every command.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-h"}, {"--help"}, {"dump", "-h"}, {"compare", "x.json", "-heads", "0", "-h"}, {"tokenize", "--help"}}) {
    CLI::App app;
    Options options;
    add_options(app, options);
    CHECK_THROWS_AS(parse_arguments(app, args), CLI::CallForHelp);
  }
}

// The same kind: "-output x.json" was read as -o "utput", and "-outputs" as -o "utputs".
TEST_CASE("command_line: a long option's name after a single dash is refused, naming the option", "[cli][errors]") {
  CHECK(failure_of({"dump", "s.json", "-output", "x.json"}) ==
        std::pair<std::string, int>{"attnviz: error: dump: unknown option \"-output\"; did you mean \"--output\"? "
                                    "(see attnviz dump --help)\n", 109});
  CHECK(failure_of({"dump", "s.json", "-o", "x.json", "-outputs"}).first ==
        "attnviz: error: dump: unknown option \"-outputs\"; did you mean \"--outputs\"? (see attnviz dump --help)\n");
  CHECK(failure_of({"heatmaps", "s.json", "-o", "x", "-cmap=magma"}).first ==
        "attnviz: error: heatmaps: unknown option \"-cmap\"; did you mean \"--cmap\"? (see attnviz heatmaps --help)\n");
  // -o with its value attached stays -o; after "--" every word is a positional.
  CLI::App app;
  Options options;
  add_options(app, options);
  parse_arguments(app, {"dump", "s.json", "-oout.json"});
  CHECK(options.output == "out.json");
}
