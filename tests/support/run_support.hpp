// The whole pipeline in process, as `attnviz` runs it: exit code, stdout and stderr of run().
#pragma once

#include <string>

#include "cli/options.hpp"

namespace attnviz::test {

/// What run() returned and printed.
struct RunResult {
  int code;
  std::string out, err;
};

/// run(options) with its output captured.
RunResult run_with(const Options& options);

/// `attnviz render ATTENTION -o OUTPUT`, as Options.
Options render_options(const std::string& attention, const std::string& output);

}  // namespace attnviz::test
