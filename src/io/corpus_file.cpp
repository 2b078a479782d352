#include "io/corpus_file.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "core/counted.hpp"
#include "core/error.hpp"

namespace attnviz {

namespace {

// A bad line: the reason, without the file and line (added by the caller).
struct BadLine {
  std::string why;
};

bool is_blank(const std::string& line) {
  for (char c : line)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return false;
  return true;
}

// The byte offset of the first invalid UTF-8 sequence, or npos (RFC 3629: no overlongs,
// surrogates or code points above U+10FFFF).
std::size_t invalid_utf8_at(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    std::uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (std::size_t k = 1; k < n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return i;
      cp = (cp << 6) | (cc & 0x3Fu);
    }
    const std::uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n;
  }
  return std::string::npos;
}

void require_utf8(const std::string& text, const char* what) {
  const std::size_t at = invalid_utf8_at(text);
  if (at != std::string::npos)
    throw BadLine{std::string(what) + " is not UTF-8 (byte offset " + std::to_string(at) + ")"};
}

std::string type_name(const nlohmann::json& value) {
  if (value.is_string()) return "\"" + value.get<std::string>() + "\"";
  if (value.is_number_integer()) return "the integer " + value.dump();
  return std::string(value.type_name());
}

CorpusText text_line(const std::string& line) {
  require_utf8(line, "the line");
  CorpusText text;
  text.text = line;
  return text;
}

CorpusText jsonl_line(const std::string& line, std::set<std::string>& other_fields) {
  nlohmann::json value;
  // nlohmann keeps the last of a repeated key in silence: {"text": "a", "text": "b"} would run
  // "b". A stack of the keys seen, one set per open object, names it instead.
  std::vector<std::set<std::string>> keys;
  const auto no_duplicate_keys = [&keys](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end && !keys.empty()) keys.pop_back();
    if (event == Event::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      throw BadLine{"the key " + parsed.dump() + " appears twice in one object; give it once"};
    return true;
  };
  try {
    value = nlohmann::json::parse(line, no_duplicate_keys);
  } catch (const nlohmann::json::parse_error& e) {
    const char* detail = std::strstr(e.what(), "syntax error");
    throw BadLine{std::string("not valid JSON: ") + (detail ? detail : e.what())};
  } catch (const nlohmann::json::out_of_range& e) {
    // 406: a number beyond double's range (1e999): a bad line like any other, not an internal error.
    const char* detail = std::strstr(e.what(), "number overflow");
    throw BadLine{std::string("not valid JSON here: ") + (detail ? detail : e.what()) + " (beyond a double's range)"};
  }
  if (!value.is_object()) throw BadLine{"expected a JSON object {\"text\": \"...\"}, got " + std::string(value.type_name())};
  const bool has_text = value.contains("text"), has_ids = value.contains("token_ids");
  if (has_text && has_ids) throw BadLine{"has both \"text\" and \"token_ids\"; give one"};
  if (!has_text && !has_ids) throw BadLine{"has no \"text\" (or \"token_ids\")"};
  for (const auto& item : value.items())
    if (item.key() != "text" && item.key() != "token_ids") other_fields.insert(item.key());
  CorpusText text;
  if (has_text) {
    const nlohmann::json& t = value.at("text");
    if (!t.is_string()) throw BadLine{"/text: expected a string, got " + type_name(t)};
    std::string s = t.get<std::string>();
    if (s.empty()) throw BadLine{"/text: is empty"};
    require_utf8(s, "/text");
    text.text = std::move(s);
    return text;
  }
  const nlohmann::json& ids = value.at("token_ids");
  if (!ids.is_array()) throw BadLine{"/token_ids: expected an array of token ids, got " + type_name(ids)};
  if (ids.empty()) throw BadLine{"/token_ids: is empty"};
  std::vector<std::int32_t> list;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const nlohmann::json& id = ids[i];
    if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > std::numeric_limits<std::int32_t>::max())
      throw BadLine{"/token_ids/" + std::to_string(i) + ": expected a token id (an integer from 0), got " + type_name(id)};
    list.push_back(static_cast<std::int32_t>(id.get<long long>()));
  }
  text.token_ids = std::move(list);
  return text;
}

}  // namespace

std::uint64_t fnv1a(std::uint64_t hash, const std::string& bytes) {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string corpus_format(const std::string& path, const CorpusSettings& settings) {
  if (settings.format == "text" || settings.format == "jsonl") return settings.format;
  if (!settings.format.empty())
    throw UsageError::bad_option("--corpus-format", "expected text or jsonl, got \"" + settings.format + "\"");
  const std::string suffix = ".jsonl";
  const bool jsonl = path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return jsonl ? "jsonl" : "text";
}

CorpusScan read_corpus(const std::string& path, const CorpusSettings& settings,
                       const std::function<void(const CorpusText&)>& each) {
  CorpusScan scan;
  scan.format = corpus_format(path, settings);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable(path, std::strerror(errno));
  // A census reads its corpus twice (to number the texts, then to run them) and a resumed or
  // sharded run reads it again: a pipe would be empty the second time.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError::inconsistent(path, "is a directory: --corpus takes a file of texts, one per line (text or JSONL)");
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError::inconsistent(path, "is not a regular file (a pipe, /dev/stdin or a device): the corpus is read more than "
                                         "once, to number its texts and then to run them; write it to a file first");
  scan.fingerprint = kFnvOffset;
  std::set<std::string> other_fields;
  std::string line;
  long line_number = 0, blank = 0;
  while (std::getline(in, line)) {
    ++line_number;
    scan.fingerprint = fnv1a(scan.fingerprint, line + "\n");
    const bool past_limit = settings.limit >= 0 && scan.texts >= settings.limit;
    if (past_limit && scan.cut_by_limit) continue;  // hash the whole file all the same
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A UTF-8 byte order mark (an editor's) is no part of text 0, in either format.
    if (line_number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (past_limit) {
      // Whether --limit cut anything: a text after the last taken (a bad line there is not one).
      if (is_blank(line)) continue;
      try {
        std::set<std::string> ignored;
        (void)(scan.format == "jsonl" ? jsonl_line(line, ignored) : text_line(line));
        scan.cut_by_limit = true;
      } catch (const BadLine&) {
      }
      continue;
    }
    if (is_blank(line)) {
      ++blank;
      continue;
    }
    CorpusText text;
    try {
      text = scan.format == "jsonl" ? jsonl_line(line, other_fields) : text_line(line);
    } catch (const BadLine& bad) {
      const std::string where = "line " + std::to_string(line_number) + ": " + bad.why;
      if (!settings.skip_bad_lines) throw InputError::inconsistent(path, where + " (--skip-bad-lines skips such lines)");
      scan.skipped.push_back(where);
      continue;
    }
    text.index = scan.texts++;
    text.line = line_number;
    if (each) each(text);
  }
  if (in.bad()) throw InputError::unreadable(path, "read error");
  if (scan.texts == 0) {
    throw InputError::inconsistent(path, "no texts to run (" + counted(line_number, "line") + ": " + std::to_string(blank) +
                                             " blank, " + std::to_string(scan.skipped.size()) + " bad)");
  }
  if (!other_fields.empty()) {
    std::string names;
    for (const std::string& f : other_fields) names += (names.empty() ? "\"" : ", \"") + f + "\"";
    scan.warnings.push_back(path + ": fields other than \"text\"/\"token_ids\" are not read: " + names);
  }
  return scan;
}

}  // namespace attnviz
