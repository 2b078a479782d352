// Reads one JSON file into an nlohmann::json document, turning every failure (missing file,
// directory, syntax error, number overflow, invalid UTF-8) into an InputError naming the file.
// Does not interpret the document (input_schema and record_json do).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace attnviz {

/// Parses `path` as JSON. Throws InputError::unreadable (cannot open, a directory, empty) or
/// InputError::parse (syntax, with line and column) naming `path`.
nlohmann::json read_json_file(const std::string& path);

/// Parses JSON text; `file` names it in errors. Throws InputError as read_json_file.
nlohmann::json parse_json_text(const std::string& text, const std::string& file);

}  // namespace attnviz
