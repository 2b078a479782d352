// One run of `attnviz serve` (issue 36): a text on the loaded model gives, from one forward pass,
// the model dump `attnviz dump --model` writes and the page `heatmaps --format html` writes.
#pragma once

#include <string>
#include <vector>

#include "cli/model_job.hpp"
#include "cli/options.hpp"

namespace attnviz {

/// What one served run answers.
struct ServedRun {
  std::string dump_json;    ///< the model dump's JSON text, byte for byte the CLI's (dump --model … -o -); "" with a report
  std::string report_html;  ///< the run's HTML report (index.html of heatmaps --format html), when asked
  long tokens = 0;          ///< the run's tokens, generated ones included
  std::vector<std::string> warnings;
};

/// Runs `request` (its text or token ids, layers, measure, generate; model = the session's) on
/// `session`: the dump, or with `with_report` the report instead (the page's run: the other one
/// is left empty, not paid for). Throws as run_model: UsageError, InputError, LimitError (the memory budget
/// of request.max_memory_mib, the dump's text counted).
ServedRun serve_run(const DecoderSession& session, const Options& request, bool with_report);

/// The same run as `dump --model … -o OUT.safetensors` writes it, byte for byte (its writer streams
/// to a private temporary file, read back and removed). Appends the run's warnings; throws as
/// serve_run, and OutputError when the temporary file cannot be written.
std::string serve_safetensors(const DecoderSession& session, const Options& request, std::vector<std::string>& warnings);

}  // namespace attnviz
