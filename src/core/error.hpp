// The one exception family of attnviz. Every message is built by a named factory in
// error.cpp, so wording stays uniform: file, JSON pointer, expected, found.
// The CLI maps each class to an exit code (see docs/exit-codes-and-limits.md); modules never print.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace attnviz {

/// Base of all errors attnviz reports to the user.
class Error : public std::runtime_error {
 public:
  /// A NUL byte in `message` (a name read from a damaged file) is kept as the text "\x00":
  /// what() is a C string, and would end the message there.
  explicit Error(const std::string& message);
  explicit Error(const char* message) : Error(std::string(message)) {}
};

/// An input file is unreadable, malformed, or inconsistent with another input (exit code 1).
class InputError : public Error {
 public:
  using Error::Error;
  /// "FILE: cannot read: REASON" (missing file, a directory, permission).
  static InputError unreadable(const std::string& file, const std::string& reason);
  /// "FILE: line L, column C: DETAIL" for JSON syntax errors.
  static InputError parse(const std::string& file, std::size_t line, std::size_t column,
                          const std::string& detail);
  /// "FILE: POINTER: missing field (WHAT)".
  static InputError missing_field(const std::string& file, const std::string& pointer,
                                  const std::string& what);
  /// "FILE: POINTER: expected EXPECTED, got FOUND" for a wrong JSON type or value.
  static InputError bad_value(const std::string& file, const std::string& pointer,
                              const std::string& expected, const std::string& found);
  /// "FILE: POINTER: expected shape [r, c] (MEANING), got [r', c']".
  static InputError shape_mismatch(const std::string& file, const std::string& pointer,
                                   const std::string& expected, const std::string& found);
  /// "FILE: DETAIL" for inconsistencies between fields (counts, divisibility).
  static InputError inconsistent(const std::string& file, const std::string& detail);
  /// "FILE: WHAT is not supported (supported: SUPPORTED); pass --token-ids" for a tokenizer
  /// this build does not implement (WHAT names it, e.g. `tokenizer model "t5"`).
  static InputError unsupported_tokenizer(const std::string& file, const std::string& what,
                                          const std::string& supported);
};

/// An output could not be written (exit code 2).
class OutputError : public Error {
 public:
  using Error::Error;
  /// "PATH: cannot write: REASON".
  static OutputError cannot_write(const std::string& path, const std::string& reason);
};

/// Options that do not fit together or the input they are applied to (exit code 1).
class UsageError : public Error {
 public:
  using Error::Error;
  /// "OPTION: DETAIL".
  static UsageError bad_option(const std::string& option, const std::string& detail);
};

/// The job would need more memory or pixels than allowed (exit code 4).
class LimitError : public Error {
 public:
  using Error::Error;
  /// "WHAT needs about N MiB, over the limit of M MiB (OPTION to raise it)".
  static LimitError memory(const std::string& what, double needed_bytes, double limit_bytes,
                           const std::string& option);
  /// "WHAT would be W × H px, over the limit of L px per side (OPTION ...)".
  static LimitError image_size(const std::string& what, long width_px, long height_px,
                               long limit_px, const std::string& hint);
};

/// "[r, c]" — the one way shapes are printed in messages.
std::string shape_string(long rows, long cols);

}  // namespace attnviz
