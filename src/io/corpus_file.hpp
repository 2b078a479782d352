// A corpus for `attnviz census --corpus FILE` (issue 22): plain text, one text per line, or
// JSONL, one {"text": "…"} or {"token_ids": [...]} per line. Read as a stream, line by line, so
// that a large corpus costs one line of memory; blank lines are skipped in both formats.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnviz {

/// How to read a corpus, from the command line.
struct CorpusSettings {
  std::string format;            ///< "text", "jsonl", or "" = by the name (".jsonl": JSONL, else text)
  bool skip_bad_lines = false;   ///< skip (and count) bad lines instead of refusing the corpus
  long limit = -1;               ///< the first N texts only (counted after skipped lines); -1 = all
};

/// One text of the corpus: exactly one of text / token_ids is set.
struct CorpusText {
  long index = 0;                                   ///< from 0, counting texts only (after skipped lines)
  long line = 0;                                    ///< from 1, in the file
  std::optional<std::string> text;                  ///< UTF-8, non-empty; BOS added as the model says
  std::optional<std::vector<std::int32_t>> token_ids;  ///< non-empty, used as given
};

/// What a pass over the corpus found.
struct CorpusScan {
  std::string format;                     ///< "text" or "jsonl"
  long texts = 0;                         ///< texts taken (≤ limit)
  bool cut_by_limit = false;              ///< a text came after the limit's last (the limit changed the run)
  std::vector<std::string> skipped;       ///< "line L: why" for each bad line skipped (--skip-bad-lines)
  std::vector<std::string> warnings;      ///< e.g. JSONL fields other than text/token_ids, named once
  std::uint64_t fingerprint = 0;          ///< FNV-1a 64 of the file's bytes (which corpus it is)
};

/// "text" or "jsonl" for `path` under `settings` (the --corpus-format, else the name).
/// Throws UsageError for a format that is neither.
std::string corpus_format(const std::string& path, const CorpusSettings& settings);

/// Reads `path` once, calling `each` for every text in order (may be empty to only scan).
/// Throws InputError "FILE: line L: …" for a line that is not valid JSON (JSONL), not an
/// object, has no "text"/"token_ids", an empty or non-string text, empty or non-integer ids,
/// both fields, or text that is not UTF-8 — unless settings.skip_bad_lines, which records it in
/// CorpusScan::skipped; InputError "FILE: cannot read" for a missing file, "FILE: is not a
/// regular file" for a pipe or device, and "FILE: no texts" for a corpus without any text (after
/// skipped lines).
CorpusScan read_corpus(const std::string& path, const CorpusSettings& settings,
                       const std::function<void(const CorpusText&)>& each);

/// FNV-1a 64-bit hash of `bytes` continued from `hash` (start: kFnvOffset).
constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
std::uint64_t fnv1a(std::uint64_t hash, const std::string& bytes);

}  // namespace attnviz
