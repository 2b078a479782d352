// cli/text_input (issue 34 §2): where a run's text comes from (--text, --text -, --text-file) and
// the empty text every command refuses.
#include <sstream>
#include <string>

#include "cli/run.hpp"
#include "cli/text_input.hpp"
#include "core/error.hpp"
#include "support/test_support.hpp"

using namespace attnviz;

namespace {

Options model_options(Command command) {
  Options o;
  o.command = command;
  o.model = test::data_file("stories260k/stories260K.gguf");
  return o;
}

}  // namespace

TEST_CASE("text input: --text - and --text-file - read standard input, one final newline dropped as llama.cpp's -f", "[cli]") {
  Options o = model_options(Command::Tokenize);
  o.text = "-";
  std::istringstream in("Once upon\na time\n\n");
  const Options read = with_text_read(o, in);
  CHECK(*read.text == "Once upon\na time\n");  // only the last newline goes
  o.text.reset();
  o.text_file = "-";
  std::istringstream crlf("Lily\r\n");
  CHECK(*with_text_read(o, crlf).text == "Lily");
  std::istringstream bad("ok \xFF");
  CHECK_THROWS_WITH(with_text_read(o, bad), "standard input: the text is not UTF-8: byte 0xFF at offset 3 starts no valid character "
                                            "(check the terminal's or the file's encoding)");
}

TEST_CASE("text input: an empty text is refused by every command that runs one, naming where it came from", "[cli][errors]") {
  for (const Command command : {Command::Dump, Command::Heatmaps, Command::Compare, Command::Explain, Command::Tokenize,
                                Command::Attribute}) {
    Options o = model_options(command);
    o.text = "";
    o.output = "never_written";
    std::ostringstream out, err;
    std::istringstream in;
    CHECK(run(o, out, err, in) == kExitInputError);
    CHECK(err.str() == "attnviz: error: --text: is empty: give the text to run (an empty text would run BOS alone, or nothing), "
                       "the ids with --token-ids, or --generate N to continue from BOS alone\n");
  }
  Options o = model_options(Command::Dump);
  o.text_file = "-";
  std::istringstream only_newline("\n");
  CHECK_THROWS_WITH(check_text(with_text_read(o, only_newline)),
                    "--text-file: standard input (--text-file -) is empty: give the text to run (an empty text would run BOS "
                    "alone, or nothing), the ids with --token-ids, or --generate N to continue from BOS alone");
  o.text_file.reset();
  o.text = "";
  o.generate = 40;
  CHECK_NOTHROW(check_text(o));  // a continuation from BOS alone
}
