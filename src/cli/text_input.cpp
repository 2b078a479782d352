#include "cli/text_input.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <sstream>

#include <utf8proc.h>

#include "core/error.hpp"

namespace attnviz {

namespace {

constexpr const char* kStandardInput = "standard input";

// Where the text was read from, for messages: the option the user gave.
std::string text_source(const Options& o) {
  if (o.text_file) return *o.text_file == "-" ? std::string(kStandardInput) + " (--text-file -)" : "--text-file " + *o.text_file;
  return "--text";
}

std::string without_final_newline(std::string text) {
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (!text.empty() && text.back() == '\r') text.pop_back();
  return text;
}

std::string read_stream(std::istream& in, const std::string& name) {
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw InputError::unreadable(name, "reading it failed");
  return bytes.str();
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError::unreadable(path, "is a folder; --text-file takes a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable(path, "cannot be opened (does it exist, and may it be read?)");
  return read_stream(in, path);
}

}  // namespace

std::string utf8_problem(std::string_view text) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  utf8proc_int32_t code_point = 0;
  for (utf8proc_ssize_t at = 0; at < size;) {
    const utf8proc_ssize_t used = utf8proc_iterate(bytes + at, size - at, &code_point);
    if (used < 0) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", bytes[at]);
      return "is not UTF-8: byte " + std::string(byte) + " at offset " + std::to_string(at) +
             " starts no valid character (check the terminal's or the file's encoding)";
    }
    at += used;
  }
  return {};
}

Options with_text_read(const Options& options, std::istream& in) {
  Options o = options;
  if (o.text_file && o.text)
    throw UsageError::bad_option("--text-file", "give the text once: --text \"...\" or --text-file FILE, not both");
  const bool dash = o.text && *o.text == "-";
  if (!o.text_file && !dash) return o;
  if (dash) o.text_file = "-";
  const bool from_stdin = *o.text_file == "-";
  const std::string name = from_stdin ? kStandardInput : *o.text_file;
  const std::string text = without_final_newline(from_stdin ? read_stream(in, name) : read_text_file(name));
  if (const std::string problem = utf8_problem(text); !problem.empty())
    throw InputError::inconsistent(name, "the text " + problem);
  o.text = text;
  return o;
}

void check_text(const Options& o) {
  if (o.command == Command::Census) return;  // its texts are the corpus's lines
  // With --generate, an empty text is a continuation from BOS alone: kept.
  if (o.text && o.text->empty() && o.generate <= 0)
    throw UsageError::bad_option(o.text_file ? "--text-file" : "--text",
                                 (o.text_file ? text_source(o) + " is empty" : std::string("is empty")) +
                                     ": give the text to run (an empty text would run BOS alone, or nothing), the ids with --token-ids, or "
                                     "--generate N to continue from BOS alone");
  if (o.no_parse_special && !o.text && !o.target)
    throw UsageError::bad_option("--no-parse-special", "goes with a text (--text, --text-file); --token-ids are used as given");
}

}  // namespace attnviz
