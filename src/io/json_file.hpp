// Reads one JSON file into an nlohmann::json document, turning every failure (missing file,
// directory, syntax error, number overflow, invalid UTF-8) into an InputError naming the file.
// Does not interpret the document (input_schema and record_json do).
#pragma once

#include <nlohmann/json.hpp>
#include <map>
#include <set>
#include <string>

#include "io/fast_json.hpp"
#include "io/file_text.hpp"

namespace attnviz {

/// Deepest nesting accepted: attnviz's formats need 4 levels; hostile files may have 100000.
inline constexpr int kMaxJsonDepth = 64;

/// Memory a parse may take per byte of JSON text, text included, in the worst case: the
/// error path builds an nlohmann document, 16 bytes per value plus vector growth, and a file
/// of one-digit numbers ("0,0,0,…") has a value every 2 bytes (measured: 19×).
inline constexpr double kParseBytesPerFileByte = 20.0;

/// What a file's top level must be. attnviz's own formats and most model files are objects,
/// and a large file that does not start with '{' is refused from its first 64 KiB before it is
/// read in full; a CTranslate2 vocabulary.json is a list, of any size.
enum class JsonRoot { Object, Any };

/// What a number beyond double's range (1e999) is told after "number overflow parsing '1e999'":
/// the model inputs hold float32 (kFloat32Numbers); a format of doubles passes its own rule.
inline constexpr const char* kFloat32Numbers = "numbers must fit in float32";

/// Parses `path` as JSON. Throws InputError::unreadable (cannot open, a directory, empty),
/// InputError::parse (syntax, duplicate key, nesting deeper than kMaxJsonDepth; with line and
/// column where known) naming `path`, or LimitError::memory when parsing would need more than
/// `memory_budget_bytes` (estimated from the file size before reading it). A number too large
/// for a double is refused with `number_rule` in parentheses.
nlohmann::json read_json_file(const std::string& path, double memory_budget_bytes = 0, JsonRoot root = JsonRoot::Object,
                              const char* number_rule = kFloat32Numbers);

/// `text` (a request's body, say) parsed as read_json_file parses a file's, its faults named
/// after `name`: InputError for a NUL byte, syntax (with line and column), a duplicate key,
/// nesting deeper than kMaxJsonDepth, a number beyond double (with `number_rule`).
nlohmann::json parse_json_text(std::string_view text, const std::string& name, const char* number_rule = kFloat32Numbers);

/// The text of `path` (mapped when it is a regular file, read when it is a pipe or device)
/// after the directory, memory-budget, object-start (JsonRoot::Object) and NUL checks. Throws
/// as read_json_file.
FileText read_input_text(const std::string& path, double memory_budget_bytes, JsonRoot root = JsonRoot::Object);

/// Input texts by path, each read at most once: a pipe (`<(…)`, /dev/stdin) can only be read
/// once, so every later look at the same input (a retry, a sniff, a second role) uses this.
using InputTexts = std::map<std::string, FileText>;

/// The text of `path` from `texts`, read into it first if absent. Throws as read_input_text.
const FileText& input_text(InputTexts& texts, const std::string& path, double memory_budget_bytes);

/// read_json_file on text already read from `path`.
nlohmann::json parse_json_file(const FileText& text, const std::string& path);

/// As parse_json_file, but the root members named in `matrix_members` come back as matrices
/// when the fast path takes the file (see fast_json.hpp); otherwise `matrices` is empty and
/// every member is in `root`. Throws as read_json_file.
FastDocument parse_json_document(const FileText& text, const std::string& path,
                                 const std::set<std::string>& matrix_members, const char* number_rule = kFloat32Numbers);

}  // namespace attnviz
