#include "io/json_file.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "io/fast_json.hpp"
#include "io/file_text.hpp"
#include "io/safetensors_sniff.hpp"

namespace attnviz {

namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 2,
// column 3: ..."; keep what follows "column N: " and use our own file/line/column prefix.
// The "; last read: '…'" tail is dropped: it may hold the very bytes that are not UTF-8.
std::string detail_after_position(const std::string& what) {
  std::string detail = what;
  const std::size_t column = detail.find("column ");
  if (column != std::string::npos) {
    const std::size_t colon = detail.find(": ", column);
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
  }
  const std::size_t last_read = detail.find("; last read:");
  if (last_read != std::string::npos) detail = detail.substr(0, last_read);
  return detail;
}

// Line and column (1-based) of byte offset `byte` (nlohmann counts the failing byte too).
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t byte) {
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

namespace {

// The document `text` holds (`readable` bytes readable from its start, see fast_json.hpp);
// `file` names it in errors.
nlohmann::json parse_text(std::string_view text, std::size_t readable, const std::string& file, const char* number_rule) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw InputError::unreadable(file, "the file is empty (expected a JSON object)");
  }
  if (std::optional<FastDocument> document = fast_parse_json(text, readable)) return std::move(document->root);
  // JSON allows repeated keys, but one of them would be dropped silently: refuse instead.
  std::vector<std::set<std::string>> keys_per_object;
  std::string duplicate;
  int too_deep = 0;
  const nlohmann::json::parser_callback_t check = [&](int depth, nlohmann::json::parse_event_t event,
                                                      nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (depth > kMaxJsonDepth && too_deep == 0) too_deep = depth;
    if (event == Event::object_start) keys_per_object.emplace_back();
    if (event == Event::object_end && !keys_per_object.empty()) keys_per_object.pop_back();
    if (event == Event::key && !keys_per_object.empty() && duplicate.empty() &&
        !keys_per_object.back().insert(parsed.get<std::string>()).second) {
      duplicate = parsed.get<std::string>();
    }
    return true;
  };
  try {
    nlohmann::json document = nlohmann::json::parse(text, check);
    if (too_deep != 0) {
      throw InputError::unreadable(file, "JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                                             " levels (attnviz files need at most 4)");
    }
    if (!duplicate.empty()) {
      throw InputError::unreadable(file, "the key \"" + duplicate +
                                             "\" appears twice in one object (one value would be lost)");
    }
    return document;
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, column] = line_and_column(text, e.byte);
    throw InputError::parse(file, line, column, detail_after_position(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number beyond double range, e.g. 1e400; its literal may be huge.
    // nlohmann gives no position for it, so the literal's first occurrence as a whole token
    // gives line and column.
    constexpr std::size_t kMaxEchoBytes = 80;
    std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    const std::size_t open = what.find('\'');
    const std::size_t close = what.rfind('\'');
    std::size_t at = std::string_view::npos;
    if (open != std::string::npos && close > open + 1) {
      const std::string literal = what.substr(open + 1, close - open - 1);
      const auto part_of_number = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+'; };
      for (at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + 1)) {
        const std::size_t end = at + literal.size();
        if ((at == 0 || !part_of_number(text[at - 1])) && (end == text.size() || !part_of_number(text[end]))) break;
      }
    }
    if (what.size() > kMaxEchoBytes) what = what.substr(0, kMaxEchoBytes) + "…'";
    if (at == std::string_view::npos) throw InputError::unreadable(file, what + " (" + number_rule + ")");
    const auto [line, column] = line_and_column(text, at + 1);
    throw InputError::parse(file, line, column, what + " (" + number_rule + ")");
  }
}


// Reads what is left of a stream of unknown size, in chunks, refusing to go past what the
// memory budget allows (or 1 GiB without one): /dev/urandom must not fill the memory.
void read_stream_rest(std::ifstream& in, std::string& text, const std::string& path, double memory_budget_bytes) {
  constexpr double kUnbudgetedLimitBytes = 1024.0 * 1024.0 * 1024.0;
  const double limit = memory_budget_bytes > 0 ? memory_budget_bytes / kParseBytesPerFileByte : kUnbudgetedLimitBytes;
  std::string chunk(kSniffBytes, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (static_cast<double>(text.size()) > limit) {
      throw LimitError::memory("reading " + path + " (a stream, more than " +
                                   std::to_string(text.size() / (1024 * 1024)) + " MiB so far)",
                               static_cast<double>(text.size()) * kParseBytesPerFileByte,
                               limit * kParseBytesPerFileByte, "--max-memory MIB");
    }
  }
}

// attnviz files are objects: a large file that does not start with '{' is refused from its
// first kilobytes, before it is read (or touched) in full.
void require_object_start(std::string_view head, std::uint64_t file_bytes, const std::string& path) {
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";  // nlohmann skips it, so the sniff does too
  const std::size_t start = head.substr(0, kUtf8Bom.size()) == kUtf8Bom ? kUtf8Bom.size() : 0;
  const std::size_t first = head.find_first_not_of(" \t\r\n", start);
  if (first != std::string_view::npos && head[first] == '{') return;
  // Model and dump files where a layer's JSON was expected, whatever their size: say how to give them.
  if (head.substr(0, 4) == "GGUF") {
    throw InputError::inconsistent(path, "is a GGUF model file, not JSON: give a whole model with --model");
  }
  if (looks_like_safetensors(head, file_bytes)) {
    throw InputError::inconsistent(path, "is a safetensors file, not JSON: give a Hugging Face model's folder with --model, "
                                         "or an attnviz safetensors dump to render or compare");
  }
  if (first == std::string_view::npos || head.size() < kSniffBytes) return;
  const auto [line, column] = line_and_column(head, first + 1);
  const unsigned char c = static_cast<unsigned char>(head[first]);
  char found[96];
  if (c >= 0x20 && c < 0x7f) {
    std::snprintf(found, sizeof found, "'%c' at line %zu, column %zu", c, line, column);
  } else {
    std::snprintf(found, sizeof found, "byte 0x%02x at line %zu, column %zu", c, line, column);
  }
  throw InputError::bad_value(path, "", "a JSON object (a file starting with '{')", found);
}

void require_no_nul(std::string_view text, const std::string& path) {
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const auto [line, column] = line_and_column(text, nul + 1);
    throw InputError::parse(path, line, column, "a NUL byte (JSON text has none)");
  }
}

// A mapped file rewritten in place while it was parsed: the result may mix old and new bytes.
void require_unchanged(const FileText& text, const std::string& path) {
  if (text.changed_since_mapped()) {
    throw InputError::unreadable(path, "the file changed while attnviz read it; nothing was written, run again");
  }
}

// The text of `path`, after the directory, memory-budget and object-sniff checks, with the
// fast path's padding readable after it: mapped when it is a regular file, read otherwise.
}  // namespace

FileText read_input_text(const std::string& path, double memory_budget_bytes, JsonRoot root) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError::unreadable(path, "is a directory, expected a JSON file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && memory_budget_bytes > 0 && static_cast<double>(size) * kParseBytesPerFileByte > memory_budget_bytes) {
    throw LimitError::memory("reading " + path + " (" + std::to_string(size) + " bytes of JSON)",
                             static_cast<double>(size) * kParseBytesPerFileByte, memory_budget_bytes,
                             "--max-memory MIB");
  }
  const bool regular = !ec && std::filesystem::is_regular_file(path, ec);
  if (regular && size > 0) {
    FileText mapped = FileText::map(path, size, fast_json_padding());
    if (mapped.mapped()) {
      if (root == JsonRoot::Object) require_object_start(mapped.view().substr(0, kSniffBytes), size, path);
      require_no_nul(mapped.view(), path);
      return mapped;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable(path, std::strerror(errno));
  std::string head(kSniffBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  // A pipe has no size: what was read so far stands for it.
  if (root == JsonRoot::Object) require_object_start(head, regular ? size : head.size(), path);
  std::string text = std::move(head);
  if (regular && size > text.size()) {
    const std::size_t prefix = text.size();
    text.reserve(size + fast_json_padding());  // the fast path then parses in place
    text.resize(size);
    in.read(text.data() + prefix, static_cast<std::streamsize>(size - prefix));
    text.resize(prefix + static_cast<std::size_t>(in.gcount()));
  } else {
    read_stream_rest(in, text, path, memory_budget_bytes);  // a pipe or device: size unknown
  }
  require_no_nul(text, path);
  if (in.bad()) throw InputError::unreadable(path, std::strerror(errno));
  return FileText::own(std::move(text));
}

const FileText& input_text(InputTexts& texts, const std::string& path, double memory_budget_bytes) {
  auto it = texts.find(path);
  if (it == texts.end()) it = texts.emplace(path, read_input_text(path, memory_budget_bytes)).first;
  return it->second;
}

nlohmann::json read_json_file(const std::string& path, double memory_budget_bytes, JsonRoot root, const char* number_rule) {
  return std::move(parse_json_document(read_input_text(path, memory_budget_bytes, root), path, {}, number_rule).root);
}

nlohmann::json parse_json_text(std::string_view text, const std::string& name, const char* number_rule) {
  if (text.find('\0') != std::string_view::npos)
    throw InputError::unreadable(name, "holds a NUL byte at byte " + std::to_string(text.find('\0')) + " (JSON text has none)");
  return parse_text(text, text.size(), name, number_rule);
}

nlohmann::json parse_json_file(const FileText& text, const std::string& path) {
  return std::move(parse_json_document(text, path, {}).root);  // no matrix members: all in root
}

FastDocument parse_json_document(const FileText& text, const std::string& path,
                                 const std::set<std::string>& matrix_members, const char* number_rule) {
  std::optional<FastDocument> document = fast_parse_json(text.view(), text.readable(), matrix_members);
  try {
    if (!document) document = FastDocument{parse_text(text.view(), text.readable(), path, number_rule), {}};
  } catch (const InputError&) {
    require_unchanged(text, path);  // a syntax error from a half-rewritten file says so
    throw;
  }
  require_unchanged(text, path);
  return std::move(*document);
}

}  // namespace attnviz
