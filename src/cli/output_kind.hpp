// What -o names for each command (issue 34 §3): a folder for the commands that write several
// files (heatmaps, render, explain, attribute, census), one file for those that write one (dump's
// JSON, or "-" for standard output; compare's PNG, its .svg and .html named after it). A name
// that says the other kind is refused before any work, naming the command's outputs.
#pragma once

#include <string>

#include "cli/options.hpp"

namespace attnviz {

/// What `command`'s -o is: "folder", "file" or "" (tokenize takes no -o).
std::string output_kind(Command command);

/// Throws UsageError naming -o when options.output does not fit the command: "-" anywhere but
/// dump; a folder command's -o ending in a file extension attnviz writes (.png, .svg, .html,
/// .json, .csv, .jsonl) and not an existing folder; a file command's -o ending in "/", dump's
/// ending in another output's extension, compare's not ending in .png. An existing folder is
/// always a folder: accepted by a folder command, left to the writer's OutputError by a file
/// command. An empty -o is left to the command (its own "required").
void check_output_kind(const Options& options);

}  // namespace attnviz
