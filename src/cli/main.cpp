// attnviz: see README.md and docs/. main() only parses the command line; run() does the work.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "cli/run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"attnviz: per-head attention weights of a Transformer layer, or of every layer of a whole model (--model: GGUF, "
                   "Hugging Face safetensors, CTranslate2), as JSON and heatmaps", "attnviz"};
  attnviz::Options options;
  attnviz::add_options(app, options);
  try {
    attnviz::parse_arguments(app, std::vector<std::string>(argv + 1, argv + argc));
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return attnviz::run(options, std::cout, std::cerr);
}
