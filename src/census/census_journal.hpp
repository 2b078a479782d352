// DIR/texts.jsonl, the journal of a census run (issue 22): a header line saying what produced
// it (attnviz version, model, corpus, settings, shard), then one line per finished text with
// every head's values, appended and flushed as each text finishes. An interrupted run loses at
// most the text in flight; --resume reads the journal back and skips its texts.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "census/corpus_census.hpp"

namespace attnviz {

/// The journal's name in the output folder.
inline constexpr const char* kJournalName = "texts.jsonl";

/// The header line's JSON (no newline): format "attnviz.census.texts", version, provenance, shard "K/N".
std::string journal_header(const CensusProvenance& provenance, const std::string& shard);

/// One text's line (no newline): {"index", "tokens", "heads": [[stack, kind, layer, head, [values or null]]…]}.
std::string journal_line(const TextStatistics& text);

/// The texts of an existing journal at `path`, in order. Requires the header to equal
/// journal_header(provenance, shard), else throws InputError naming the part that differs (a
/// journal of another model, corpus, settings or shard). A journal of the same run over fewer
/// texts (a smaller --limit of the same corpus file: corpus.texts and settings.limit alone
/// differ, and it had fewer texts) is extended: its header is replaced by this run's (the file
/// rewritten whole, by a rename; OutputError if that fails) and its texts are returned. A last line without its newline (the
/// text in flight when the run stopped) is cut off the file. Throws InputError "FILE: line L: …"
/// for a damaged line; UsageError when `shard` is not "K/N" with 0 <= K < N.
std::vector<TextStatistics> read_journal(const std::string& path, const CensusProvenance& provenance, const std::string& shard);

/// Appends lines to a journal, each written whole with one write() and flushed to the system
/// before the next text starts.
class JournalWriter {
 public:
  /// Opens `path` for appending (creating it); writes `header` first when the file is new.
  JournalWriter(const std::string& path, const std::string& header);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  /// Appends `line` and a newline. Throws OutputError.
  void append(const std::string& line);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace attnviz
