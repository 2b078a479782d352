// CLI11 wiring: subcommands, flags, help text and validators, filling an Options struct.
// Does not run anything (run.cpp does).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/options.hpp"

namespace attnviz {

/// Adds the subcommands dump, heatmaps, render and compare with all their flags to `app`;
/// after app.parse(), `options` holds the user's choices (command set by the callbacks).
void add_options(CLI::App& app, Options& options);

}  // namespace attnviz
