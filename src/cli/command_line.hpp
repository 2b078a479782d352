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

/// app.parse() of `args` (in order, without the program name), except that -h asks for help
/// only alone: a single-dash word starting with h ("-heads", "-hello"), which CLI11 reads as -h
/// followed by more short flags, throws a CLI::ParseError (exit code 109) naming the word and
/// the option likely meant. Throws what app.parse() throws otherwise.
void parse_arguments(CLI::App& app, std::vector<std::string> args);

}  // namespace attnviz
