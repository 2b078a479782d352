#include "cli/run.hpp"

#include <Eigen/Core>
#include <cstdio>
#include <ostream>

#include "cli/attention_job.hpp"
#include "cli/compare_job.hpp"
#include "cli/heatmap_job.hpp"
#include "cli/profile.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "io/record_json.hpp"

namespace attnviz {

std::vector<std::string> input_files(const Options& options) {
  std::vector<std::string> inputs = {options.sentence, options.weights, options.source};
  inputs.insert(inputs.end(), options.fonts.begin(), options.fonts.end());
  return inputs;
}

namespace {

// Messages quote tokens and paths as given; control characters (a newline, ESC of a terminal
// sequence) are shown escaped so every message stays one harmless line.
std::string printable(const std::string& text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      shown += escaped;
    } else {
      shown += c;
    }
  }
  return shown;
}

void print_warnings(const std::vector<std::string>& warnings, std::ostream& err) {
  for (const std::string& w : warnings) err << "attnviz: warning: " << printable(w) << "\n";
}

void require_output(const Options& options, const char* what) {
  if (options.output.empty()) throw UsageError::bad_option("-o", std::string("required: ") + what);
}

void run_dump(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  require_output(options, "the dump file to write");
  const AttentionRecord record = compute_record(options, warnings, &timer);
  timer.lap("compute");
  OutputSet files;
  files.protect(input_files(options));
  files.add(options.output, record_to_json(record));
  timer.lap("render");
  files.commit();
  timer.lap("write");
  out << "wrote " << options.output << ": " << record.num_heads << (record.num_heads == 1 ? " head x " : " heads x ")
      << record.query_tokens.size()
      << " queries x " << record.key_tokens.size() << " keys\n";
}

void run_pictures(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  require_output(options, "the folder for the PNG files");
  const AttentionRecord record =
      options.command == Command::Render ? read_record(options.sentence, memory_budget_bytes(options))
                                          : compute_record(options, warnings, &timer);
  if (options.command == Command::Render) timer.lap("load");  // render has no maths: compute is empty,
  timer.lap("compute");                                       // printed so every command has the phases
  OutputSet files = render_heatmaps(record, options, warnings, memory_budget_bytes(options));
  files.protect(input_files(options));
  timer.lap("render");
  files.commit();
  timer.lap("write");
  out << "wrote " << files.paths().size() << " PNG files to " << options.output << "/ (grid.png and one per head)\n";
}

void dispatch(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  switch (options.command) {
    case Command::Dump: return run_dump(options, timer, out, warnings);
    case Command::Heatmaps:
    case Command::Render: return run_pictures(options, timer, out, warnings);
    case Command::Compare: return run_compare(options, timer, out, warnings);
  }
}

}  // namespace

int run(const Options& options, std::ostream& out, std::ostream& err) {
  if (options.threads > 0) Eigen::setNbThreads(options.threads);
  PhaseTimer timer(options.profile);
  std::vector<std::string> warnings;
  int code = kExitOk;
  std::string error;
  try {
    dispatch(options, timer, out, warnings);
    out.flush();
    if (!out) throw OutputError::cannot_write("standard output", "the results could not be printed");
  } catch (const LimitError& e) {
    error = e.what();
    code = kExitLimitError;
  } catch (const OutputError& e) {
    error = e.what();
    code = kExitOutputError;
  } catch (const Error& e) {  // InputError, UsageError
    error = e.what();
    code = kExitInputError;
  } catch (const std::bad_alloc&) {
    error = "out of memory (lower the input size or --max-memory)";
    code = kExitLimitError;
  } catch (const std::exception& e) {
    error = std::string("internal error: ") + e.what() + " (please report this)";
    code = kExitInternalError;
  }
  print_warnings(warnings, err);
  if (!error.empty()) err << "attnviz: error: " << printable(error) << "\n";
  timer.print(err);
  return code;
}

}  // namespace attnviz
