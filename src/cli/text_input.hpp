// Where a run's text comes from (issue 34 §2): --text TEXT, -p TEXT, --text - (standard input),
// -f/--text-file FILE, as llama.cpp's -p and -f take a prompt; and the checks every command
// applies to the text before tokenizing it (UTF-8, not empty).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "cli/options.hpp"

namespace attnviz {

/// "" when `text` is UTF-8; else what is wrong, naming the first bad byte and its offset
/// ("is not UTF-8: byte 0xFF at offset 3 starts no valid character (…)").
std::string utf8_problem(std::string_view text);

/// `options` with the text read where the command line points at one: --text-file FILE (its
/// bytes), --text - or --text-file - (standard input, `in`; text_file is then "-"). One final newline ("\n", or "\r\n")
/// is dropped, as llama.cpp's -f drops it; everything else is kept. Options without either are
/// returned as they are. Throws UsageError for --text with --text-file; InputError naming the
/// file (or "standard input") for one that cannot be read, is a folder, or is not UTF-8 (the
/// byte and its offset).
Options with_text_read(const Options& options, std::istream& in);

/// Refuses an empty text (--text "", an empty --text-file or standard input), unless --generate
/// continues from BOS alone, for the commands
/// that run or split one (not census, whose texts are its corpus's lines): UsageError naming where it came from (an empty text runs BOS alone,
/// or nothing). Also refuses --no-parse-special without a text to read (it would change nothing).
void check_text(const Options& options);

}  // namespace attnviz
