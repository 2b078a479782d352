#include "cli/picture_choices.hpp"

#include "core/error.hpp"

namespace attnviz {

void check_picture_choices(const Options& options) {
  const bool compare = options.command == Command::Compare;
  if (compare && options.scale != "fixed" && options.scale != "shared") {
    throw UsageError::bad_option("--scale", "compare puts every head on one colour scale: use fixed or shared (" +
                                                options.scale + " is for heatmaps and render)");
  }
  if (options.exclude_sink) {
    if (compare) throw UsageError::bad_option("--exclude-sink", "is for heatmaps and render (compare draws every head on one scale)");
    if (options.scale != "head" && options.scale != "layer" && options.scale != "shared") {
      throw UsageError::bad_option("--exclude-sink", "leaves the sink out of a computed range: it needs --scale head, layer or shared "
                                                     "(got --scale " + options.scale + ")");
    }
  }
  if (options.rows == "generated" && options.command == Command::Heatmaps && options.generate <= 0) {
    throw UsageError::bad_option("--rows", "generated draws the rows of generated tokens: it needs --model with --generate N "
                                           "(N > 0), or render of a dump of such a run");
  }
}

int first_generated_row(int prompt_length, long n_q, const std::string& what) {
  if (prompt_length <= 0 || prompt_length >= n_q) {
    throw UsageError::bad_option("--rows", "generated: " + what + " has no generated tokens (made without --generate N, or the "
                                           "model stopped at once); use --rows all");
  }
  return prompt_length;
}

}  // namespace attnviz
