#include "core/error.hpp"

#include <cmath>
#include <cstdio>

namespace attnviz {

namespace {

std::string mebibytes(double bytes) {
  char text[64];
  const double mib = bytes / (1024.0 * 1024.0);
  std::snprintf(text, sizeof text, mib >= 10 ? "%.0f MiB" : "%.3g MiB", mib);
  return text;
}

std::string at(const std::string& file, const std::string& pointer) {
  return file + ": " + (pointer.empty() ? std::string("/") : pointer);
}

std::string without_nul(const std::string& message) {
  std::string shown;
  shown.reserve(message.size());
  for (const char c : message) {
    if (c == '\0') {
      shown += "\\x00";
    } else {
      shown += c;
    }
  }
  return shown;
}

}  // namespace

Error::Error(const std::string& message) : std::runtime_error(without_nul(message)) {}

std::string shape_string(long rows, long cols) {
  char text[64];
  std::snprintf(text, sizeof text, "[%ld, %ld]", rows, cols);
  return text;
}

InputError InputError::unreadable(const std::string& file, const std::string& reason) {
  return InputError(file + ": cannot read: " + reason);
}

InputError InputError::parse(const std::string& file, std::size_t line, std::size_t column,
                             const std::string& detail) {
  return InputError(file + ": line " + std::to_string(line) + ", column " +
                    std::to_string(column) + ": " + detail);
}

InputError InputError::missing_field(const std::string& file, const std::string& pointer,
                                     const std::string& what) {
  return InputError(at(file, pointer) + ": missing field (" + what + ")");
}

InputError InputError::bad_value(const std::string& file, const std::string& pointer,
                                 const std::string& expected, const std::string& found) {
  return InputError(at(file, pointer) + ": expected " + expected + ", got " + found);
}

InputError InputError::shape_mismatch(const std::string& file, const std::string& pointer,
                                      const std::string& expected, const std::string& found) {
  return InputError(at(file, pointer) + ": expected shape " + expected + ", got " + found);
}

InputError InputError::inconsistent(const std::string& file, const std::string& detail) {
  return InputError(file + ": " + detail);
}

InputError InputError::unsupported_tokenizer(const std::string& file, const std::string& what,
                                             const std::string& supported) {
  return InputError(file + ": " + what + " is not supported (supported: " + supported + "); pass --token-ids");
}

OutputError OutputError::cannot_write(const std::string& path, const std::string& reason) {
  return OutputError(path + ": cannot write: " + reason);
}

UsageError UsageError::bad_option(const std::string& option, const std::string& detail) {
  return UsageError(option + ": " + detail);
}

LimitError LimitError::memory(const std::string& what, double needed_bytes, double limit_bytes,
                              const std::string& option) {
  std::string needed = mebibytes(needed_bytes);
  std::string limit = mebibytes(limit_bytes);
  if (needed == limit) {  // just over: "12053 MiB, over the limit of 12053 MiB" would read as a bug
    needed += " (" + std::to_string(static_cast<long long>(std::ceil(needed_bytes))) + " bytes)";
    limit += " (" + std::to_string(static_cast<long long>(std::floor(limit_bytes))) + " bytes)";
  }
  return LimitError(what + " needs about " + needed + ", over the limit of " + limit + " (raise it with " + option + ")");
}

LimitError LimitError::image_size(const std::string& what, long width_px, long height_px,
                                  long limit_px, const std::string& hint) {
  return LimitError(what + " would be " + std::to_string(width_px) + " x " +
                    std::to_string(height_px) + " px, over the limit of " +
                    std::to_string(limit_px) + " px per side (" + hint + ")");
}

}  // namespace attnviz
