// Noticing that a corpus changed while `attnviz census` reads it (issue 22). A census reads its
// corpus several times (to number the texts, to check them, to run them) and records its FNV-1a
// hash: a file edited, cut short or replaced in between would give texts that are not those
// numbered and hashed. stat(2) before each text is cheap next to a forward pass, and a change
// that keeps size and time is caught by the hash of the last read.
#pragma once

#include <string>

namespace attnviz {

/// What stat(2) says of a file: size in bytes, modification time in ns, device and inode (a
/// file replaced by rename has another inode). All zero when the file cannot be stat'ed.
struct FileStamp {
  long long size = 0;
  long long modified_ns = 0;
  unsigned long long device = 0;
  unsigned long long inode = 0;
  bool operator==(const FileStamp&) const = default;
};

/// The stamp of `path` now (by name: follows symlinks); all zero when it cannot be stat'ed.
FileStamp stamp_of(const std::string& path);

/// The corpus as it was when the run started.
class CorpusWatch {
 public:
  /// Stamps `path` now.
  explicit CorpusWatch(std::string path);
  /// Whether the file's stamp differs from the one taken at construction.
  bool changed() const { return stamp_of(path_) != start_; }
  /// Throws InputError "PATH: changed while the census read it (WHAT): ADVICE" when changed(),
  /// WHAT naming what differs (size 1200 → 800 bytes, modification time, another file).
  void require_unchanged(const std::string& advice) const;
  /// Throws that InputError whatever the stamp says (a change the hash found); `what` says how.
  [[noreturn]] void fail(const std::string& what, const std::string& advice) const;

 private:
  std::string path_;
  FileStamp start_;
};

}  // namespace attnviz
