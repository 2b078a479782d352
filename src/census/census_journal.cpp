#include "census/census_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <utility>
#include <nlohmann/json.hpp>

#include "census/census_journal_check.hpp"
#include "core/error.hpp"

namespace attnviz {

namespace {

using Json = nlohmann::ordered_json;
constexpr const char* kJournalFormat = "attnviz.census.texts";

// K and N of a shard "K/N" (0 <= K < N, as shard_text writes it). Throws UsageError for any
// other text: std::stol would throw std::invalid_argument, which no caller expects.
std::pair<long, long> shard_numbers(const std::string& shard) {
  const std::size_t slash = shard.find('/');
  long k = -1, n = 0;
  const char* end = shard.data() + shard.size();
  if (slash != std::string::npos) {
    const auto [k_end, k_error] = std::from_chars(shard.data(), shard.data() + slash, k);
    const auto [n_end, n_error] = std::from_chars(shard.data() + slash + 1, end, n);
    if (k_error == std::errc() && n_error == std::errc() && k_end == shard.data() + slash && n_end == end && k >= 0 && k < n)
      return {k, n};
  }
  throw UsageError::bad_option("--shard", "expected K/N with 0 <= K < N, e.g. 0/4, got \"" + shard + "\"");
}

// The first place where a header `got` is not in the form this run writes `want` (a member it
// does not write, or a number of the other kind: -1.0 for -1, 0 for 0.0), as "NAME (…)"; empty
// when none. JSON's == takes -1.0 for -1 and ignores nothing else, so this names what == would
// let through or only call "another settings".
std::string header_form_fault(const Json& got, const Json& want, const std::string& name) {
  if (want.is_object() && got.is_object()) {
    for (const auto& item : got.items())
      if (!want.contains(item.key()))
        return "unknown member " + (name.empty() ? "" : name + ".") + item.key() + " (a journal header has here: " +
               [&] { std::string keys; for (const auto& w : want.items()) keys += (keys.empty() ? "" : ", ") + w.key(); return keys; }() + ")";
    for (const auto& item : want.items())
      if (got.contains(item.key()))
        if (std::string fault = header_form_fault(got[item.key()], item.value(), (name.empty() ? "" : name + ".") + item.key()); !fault.empty())
          return fault;
    return "";
  }
  if (want.is_number_integer() && got.is_number() && !got.is_number_integer())
    return name + " " + got.dump() + " (a run writes an integer here: " + want.dump() + ")";
  if (want.is_number_float() && got.is_number_integer())
    return name + " " + got.dump() + " (a run writes a number with a fraction here: " + want.dump() + ")";
  return "";
}

// Whether a journal with header `got` is a run that this run (`want`) extends over more texts:
// the same file, model and settings but a larger --limit (a finished census run again with a
// larger --limit, issue 34 §3). Its texts are then this run's first ones.
bool extends(const Json& got, const Json& want) {
  for (const char* part : {"format", "version", "attnviz_version", "model", "shard"})
    if (!got.contains(part) || got[part] != want[part]) return false;
  Json got_corpus = got["corpus"], want_corpus = want["corpus"], got_settings = got["settings"], want_settings = want["settings"];
  if (!got_corpus.is_object() || !got_settings.is_object() || !got_corpus.contains("texts") || !got_corpus["texts"].is_number_integer() ||
      !want_corpus["texts"].is_number_integer() || got_corpus["texts"].get<long>() >= want_corpus["texts"].get<long>())
    return false;
  // More texts may take in more skipped lines (with --skip-bad-lines, which the settings record
  // as given only once a line was skipped).
  const auto skipped = [](const Json& corpus) {
    return corpus.contains("skipped_lines") && corpus["skipped_lines"].is_number_integer() ? corpus["skipped_lines"].get<long>() : -1;
  };
  if (skipped(got_corpus) < 0 || skipped(got_corpus) > skipped(want_corpus)) return false;
  for (Json* corpus : {&got_corpus, &want_corpus}) {
    corpus->erase("texts");
    corpus->erase("skipped_lines");
  }
  for (Json* settings : {&got_settings, &want_settings}) settings->erase("limit");
  if (skipped(got["corpus"]) == 0 && want_settings.value("skip_bad_lines", false)) got_settings["skip_bad_lines"] = true;
  return got_corpus == want_corpus && got_settings == want_settings;
}

}  // namespace

std::string journal_header(const CensusProvenance& provenance, const std::string& shard) {
  Json header;
  header["format"] = kJournalFormat;
  header["version"] = kCensusVersion;
  header["attnviz_version"] = provenance.attnviz_version;
  header["model"] = Json::parse(provenance.model);
  header["corpus"] = Json::parse(provenance.corpus);
  header["settings"] = Json::parse(provenance.settings);
  header["shard"] = shard;
  return header.dump();
}

std::string journal_line(const TextStatistics& text) {
  Json heads = Json::array();
  for (const auto& [head, values] : text.heads) {
    Json list = Json::array();
    for (const auto& v : values) list.push_back(v ? Json(*v) : Json(nullptr));
    heads.push_back({head.stack, head.kind, head.layer, head.head, std::move(list)});
  }
  return Json{{"index", text.index}, {"tokens", text.tokens}, {"heads", std::move(heads)}}.dump();
}

std::vector<TextStatistics> read_journal(const std::string& path, const CensusProvenance& provenance, const std::string& shard) {
  const auto [shard_index, shard_count] = shard_numbers(shard);  // before the file is touched
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable(path, std::strerror(errno));
  const std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t complete = contents.rfind('\n');
  complete = complete == std::string::npos ? 0 : complete + 1;  // bytes of whole lines
  if (complete < contents.size()) std::filesystem::resize_file(path, complete);  // the text in flight: discarded
  std::vector<TextStatistics> texts;
  std::size_t at = 0;
  long line_number = 0;
  const std::string expected = journal_header(provenance, shard);
  std::set<long> seen;
  std::optional<JournalLineChecker> lines;  // made once the header is known to be this run's
  bool extended = false;  // the header is a smaller --limit's of this run: rewritten at the end
  long corpus_texts = -1;
  if (const Json corpus = Json::parse(provenance.corpus, nullptr, false); corpus.is_object() && corpus.contains("texts") &&
                                                                          corpus["texts"].is_number_integer())
    corpus_texts = corpus["texts"].get<long>();
  while (at < complete) {
    const std::size_t end = contents.find('\n', at);
    const std::string line = contents.substr(at, end - at);
    at = end + 1;
    ++line_number;
    Json value;
    try {
      value = Json::parse(line);
    } catch (const Json::exception&) {  // a syntax error, or a number beyond double's range (1e999)
      throw InputError::inconsistent(path, "line " + std::to_string(line_number) + ": not valid JSON (a damaged journal)");
    }
    if (line_number == 1) {
      if (line == expected) continue;
      const Json want = Json::parse(expected);
      if (const std::string fault = header_form_fault(value, want, ""); !fault.empty())
        throw InputError::inconsistent(path, "line 1: " + fault + ": not a journal header attnviz writes (a damaged journal; remove it to start afresh)");
      if (extends(value, want)) {
        extended = true;
        continue;
      }
      for (const char* part : {"format", "version", "attnviz_version", "model", "corpus", "settings", "shard"}) {
        if (value.contains(part) && value[part] == want[part]) continue;
        // Name the member that differs ("corpus.texts": --limit), not only the part it sits in.
        std::string name = part, was = value.contains(part) ? value[part].dump() : "none", now = want[part].dump();
        if (value.contains(part) && value[part].is_object() && want[part].is_object())
          for (const auto& [key, wanted] : want[part].items())
            if (!value[part].contains(key) || value[part][key] != wanted) {
              name += "." + key;
              was = value[part].contains(key) ? value[part][key].dump() : "none";
              now = wanted.dump();
              break;
            }
        throw InputError::inconsistent(path, "is the journal of a run with another " + name + " (" + was + ", this run: " +
                                                 now + (name == "corpus.texts" ? ": --limit or the corpus changed" : "") +
                                                 "); resume it with the same model, corpus and settings, or give another -o");
      }
      continue;
    }
    try {
      if (!lines) lines.emplace(path, provenance);
      TextStatistics text = lines->check(value, line_number);
      // A damaged journal must not be counted: a text twice, or one this run's shard of the
      // corpus does not hold, would shift every mean without a word.
      const std::string where = "line " + std::to_string(line_number) + ": text " + std::to_string(text.index);
      if (!seen.insert(text.index).second)
        throw InputError::inconsistent(path, where + " is in the journal twice (a damaged journal; remove it to start afresh)");
      if (text.index < 0 || (corpus_texts >= 0 && text.index >= corpus_texts) ||
          text.index % shard_count != shard_index)
        throw InputError::inconsistent(path, where + " is not a text of this run (the corpus has " + std::to_string(corpus_texts) +
                                                 " texts, shard " + shard + "): a damaged journal");
      texts.push_back(std::move(text));
    } catch (const Json::exception& e) {
      throw InputError::inconsistent(path, "line " + std::to_string(line_number) + ": not a journal line (" + e.what() + ")");
    }
  }
  if (line_number == 0) throw InputError::inconsistent(path, "is empty: no header line (remove it to start afresh)");
  if (extended) {
    // The journal is this run's now: a later --resume, or a merge's check of census.json
    // against it, reads the larger run's header. Replaced whole, by a rename.
    const std::size_t first_end = contents.find('\n');
    const std::string temporary = path + ".extend";
    {
      std::ofstream rewritten(temporary, std::ios::binary | std::ios::trunc);
      rewritten << expected << '\n' << contents.substr(first_end + 1, complete - first_end - 1);
      if (!rewritten.flush()) throw OutputError::cannot_write(temporary, std::strerror(errno));
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
      std::filesystem::remove(temporary, ec);
      throw OutputError::cannot_write(path, "could not replace its header for the extended run");
    }
  }
  return texts;
}

JournalWriter::JournalWriter(const std::string& path, const std::string& header) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw OutputError::cannot_write(path, std::strerror(errno));
  // One writer per journal: a second run into the same folder would interleave its texts with
  // this one's (and a later --resume would find each text twice). The lock goes with the
  // process, so a killed run leaves none behind.
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK)
      throw OutputError::cannot_write(path, "another attnviz census is writing this journal now (one run per output folder)");
    throw OutputError::cannot_write(path, std::strerror(error));
  }
  struct stat st {};
  if (::fstat(fd_, &st) == 0 && st.st_size == 0) append(header);  // new: looked at under the lock
}

JournalWriter::~JournalWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalWriter::append(const std::string& line) {
  const std::string bytes = line + "\n";
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw OutputError::cannot_write(path_, std::strerror(errno));
    written += static_cast<std::size_t>(n);
  }
}

}  // namespace attnviz
