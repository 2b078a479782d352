#include "support/run_support.hpp"

#include <sstream>

#include "cli/run.hpp"

namespace attnviz::test {

RunResult run_with(const Options& options) {
  std::ostringstream out, err;
  const int code = run(options, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace attnviz::test
