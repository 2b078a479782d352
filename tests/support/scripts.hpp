// Running the repository's Python scripts (scripts/*.py, Debian's /usr/bin/python3 with
// python3-numpy) from a test: arguments are passed without a shell, standard output returned.
#pragma once

#include <string>
#include <vector>

namespace attnviz::test {

/// Exit code of the scripts when numpy is missing.
inline constexpr int kScriptMissingNumpy = 77;

/// Runs /usr/bin/python3 scripts/NAME ARGS… and returns its standard output. FAILs naming the
/// missing package on exit code 77 and REQUIREs exit code 0 otherwise (the script's stderr
/// goes to the test's).
std::string run_script(const std::string& name, const std::vector<std::string>& args);

}  // namespace attnviz::test
