// The bytes of an input file, mapped rather than copied when it is a regular file: a 17 MB
// weights file costs ~1 ms to map against ~15 ms to read into fresh memory, almost all of it
// page faults on the new buffer (issue 7, P3). Either way at least `padding` zero bytes are
// readable after the text, which simdjson's fast path needs to parse in place.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace attnviz {

/// Read-only text of one file (or of bytes read from a stream), with readable padding after it.
/// Move-only; unmaps or frees on destruction.
class FileText {
 public:
  /// Maps regular file `path` of `size` bytes (from stat) read-only. Returns an empty FileText
  /// (mapped() false) when the system refuses the mapping, so the caller can read instead.
  /// A file truncated while mapped raises SIGBUS on access; attnviz's handler then exits with
  /// status 1 and a message rather than a core dump.
  static FileText map(const std::string& path, std::size_t size, std::size_t padding);

  /// True when the mapped file's size or modification time differs from when it was mapped: it
  /// was rewritten in place while being read, so what was parsed may mix old and new bytes.
  /// (A file replaced by rename is not this file: the mapping still holds the old one.) Always
  /// false for owned text.
  bool changed_since_mapped() const;

  /// Owns `text`, whose capacity provides the padding when it has at least `padding` spare bytes.
  static FileText own(std::string text);

  FileText() = default;
  FileText(FileText&& other) noexcept;
  FileText& operator=(FileText&& other) noexcept;
  FileText(const FileText&) = delete;
  FileText& operator=(const FileText&) = delete;
  ~FileText();

  bool mapped() const { return mapping_ != nullptr; }
  std::string_view view() const { return mapped() ? std::string_view(data_, size_) : std::string_view(owned_); }
  /// Bytes readable from view().data(): at least view().size(), plus the padding asked for.
  std::size_t readable() const { return mapped() ? mapping_bytes_ : owned_.capacity(); }

 private:
  void release() noexcept;

  std::string owned_;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;                // kept open so that the check looks at the mapped file itself,
                               // not whatever the path names now (an atomic replace is fine)
  long long modified_ns_ = 0;  // st_mtim when mapped
};

}  // namespace attnviz
