#include "io/json_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace attnviz {

namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 2,
// column 3: ..."; keep what follows "column N: " and use our own file/line/column prefix.
std::string detail_after_position(const std::string& what) {
  const std::size_t column = what.find("column ");
  if (column == std::string::npos) return what;
  const std::size_t colon = what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// Line and column (1-based) of byte offset `byte` (nlohmann counts the failing byte too).
std::pair<std::size_t, std::size_t> line_and_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1;
  std::size_t column = 0;
  const std::size_t end = std::min(byte, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError::unreadable(file, "the file is empty (expected a JSON object)");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, column] = line_and_column(text, e.byte);
    throw InputError::parse(file, line, column, detail_after_position(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number beyond double range, e.g. 1e400.
    std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    throw InputError::unreadable(file, what + " (numbers must fit in float32)");
  }
}

nlohmann::json read_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError::unreadable(path, "is a directory, expected a JSON file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable(path, std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError::unreadable(path, std::strerror(errno));
  return parse_json_text(buffer.str(), path);
}

}  // namespace attnviz
