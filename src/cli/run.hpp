// The pipeline behind every subcommand, and the one place that turns errors into messages
// and exit codes (docs/exit-codes-and-limits.md). Testable without CLI11: tests build Options
// directly.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "model/model_record.hpp"

namespace attnviz {

/// Exit codes (docs/exit-codes-and-limits.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitInputError = 1,  ///< bad input file or option combination
  kExitOutputError = 2, ///< could not write output
  kExitInternalError = 3,
  kExitLimitError = 4,  ///< over the memory or image-size limit
};

/// Runs one subcommand. Prints results and "attnviz: warning: …" lines to `out`/`err`,
/// one "attnviz: error: …" line on failure, and returns an ExitCode. Writes files only
/// when everything succeeded (io/atomic_output). dump -o - writes its JSON to `out` and its
/// "wrote …" line to `err`, so that `out` holds one JSON document; other commands refuse -o -.
int run(const Options& options, std::ostream& out, std::ostream& err);

/// run() with `in` as standard input: --text - and --text-file - read the text from it.
int run(const Options& options, std::ostream& out, std::ostream& err, std::istream& in);

/// The files a run reads (inputs, the model file or every file of a model folder, fonts), which
/// its outputs must never replace.
std::vector<std::string> input_files(const Options& options);

/// The model report page's title: "MODEL · N tokens · B attention blocks".
std::string model_report_title(const ModelRunInfo& info, std::size_t blocks);

}  // namespace attnviz
