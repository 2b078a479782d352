// Each command's --help against its own parser (issue 34 §3: help texts had been copied between
// commands: attribute's named grid.svg and index.html, explain's listed --layers, which it
// refused). Derived from the parser, so that a flag added later is covered without a word here:
// every flag a command's help names (in its list or in a description) is one the command takes,
// and every flag it takes is listed.
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

// Every "-o" / "--model" word of `text`: a dash at the start of a word, then a letter (not "1-4",
// "pre-/post-norm" or "x - y").
std::set<std::string> flags_named(const std::string& text) {
  static const std::regex flag(R"((^|[^A-Za-z0-9_./-])(--?[A-Za-z][A-Za-z0-9-]*))");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    names.insert((*it)[2].str());
  return names;
}

// Every name of the command's options that --help shows (a hidden option has no group).
std::set<std::string> flags_taken(const CLI::App& command, bool shown_only) {
  std::set<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    if (shown_only && option->get_group().empty()) continue;
    for (const std::string& s : option->get_snames()) names.insert("-" + s);
    for (const std::string& l : option->get_lnames()) names.insert("--" + l);
  }
  return names;
}

}  // namespace

TEST_CASE("command help: every flag a command's help names is one it takes, and every flag it takes is listed", "[cli][help]") {
  CLI::App app;
  Options options;
  add_options(app, options);
  const std::vector<CLI::App*> commands = app.get_subcommands([](const CLI::App*) { return true; });
  REQUIRE(commands.size() >= 8);
  for (const CLI::App* command : commands) {
    const std::string help = command->help();
    INFO("attnviz " << command->get_name() << " --help:\n" << help);
    const std::set<std::string> taken = flags_taken(*command, false);
    for (const std::string& named : flags_named(help)) {
      INFO("named in the help: " << named);
      CHECK(taken.count(named) == 1);
    }
    const std::set<std::string> named = flags_named(help);
    for (const std::string& flag : flags_taken(*command, true)) {
      INFO("taken but not listed: " << flag);
      CHECK(named.count(flag) == 1);
    }
  }
}

TEST_CASE("command help: the top-level help names every command, each with only flags it takes", "[cli][help]") {
  CLI::App app;
  Options options;
  add_options(app, options);
  const std::string help = app.help();
  INFO(help);
  std::set<std::string> any_command;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    CHECK(help.find("  " + command->get_name() + " ") != std::string::npos);
    const std::set<std::string> taken = flags_taken(*command, false);
    any_command.insert(taken.begin(), taken.end());
    for (const std::string& named : flags_named(command->get_description())) {
      INFO(command->get_name() << "'s line names " << named);
      CHECK(taken.count(named) == 1);
    }
  }
  const std::set<std::string> top = flags_taken(app, false);
  for (const std::string& named : flags_named(app.get_description())) {
    INFO("the description names " << named);
    CHECK((top.count(named) == 1 || any_command.count(named) == 1));
  }
}

// The regex itself: words that are no flags stay out.
TEST_CASE("command help: flags_named reads flags, not ranges or hyphenated words", "[cli][help]") {
  CHECK(flags_named("With --model: layers 1-4, pre-/post-norm, x - y, -o DIR, (--no-causal turns), -0.5") ==
        std::set<std::string>{"--model", "-o", "--no-causal"});
}
