// CLI11 wiring: subcommands, flags, help text and validators, filling an Options struct.
// Does not run anything (run.cpp does).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/options.hpp"

namespace attnviz {

/// Adds the subcommands dump, heatmaps, render and compare with all their flags to `app`;
/// after app.parse(), `options` holds the user's choices (command set by the callbacks).
void add_options(CLI::App& app, Options& options);

/// app.parse() of `args` (in order, without the program name), except that single-dash words
/// CLI11 would misread throw a CLI::ParseError (exit code 109) naming the word and the option
/// likely meant: one starting with h ("-heads", "-hello"; CLI11 reads -h, then more short
/// flags, and prints help), so -h asks for help only alone; and a long option's name
/// ("-output x.json", which CLI11 reads as -o "utput"), unless -h or --help asks for help.
/// Throws what app.parse() throws otherwise.
void parse_arguments(CLI::App& app, std::vector<std::string> args);

}  // namespace attnviz
