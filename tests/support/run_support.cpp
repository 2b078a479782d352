#include "support/run_support.hpp"

#include <sstream>

#include "cli/run.hpp"

namespace attnviz::test {

RunResult run_with(const Options& options) {
  std::ostringstream out, err;
  const int code = run(options, out, err);
  return {code, out.str(), err.str()};
}

Options render_options(const std::string& attention, const std::string& output) {
  Options options;
  options.command = Command::Render;
  options.sentence = attention;
  options.output = output;
  return options;
}

}  // namespace attnviz::test
