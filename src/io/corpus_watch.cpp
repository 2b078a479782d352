#include "io/corpus_watch.hpp"

#include <sys/stat.h>

#include <utility>

#include "core/error.hpp"

namespace attnviz {

FileStamp stamp_of(const std::string& path) {
  struct stat status {};
  FileStamp stamp;
  if (stat(path.c_str(), &status) != 0) return stamp;
  stamp.size = static_cast<long long>(status.st_size);
  stamp.modified_ns = static_cast<long long>(status.st_mtim.tv_sec) * 1'000'000'000LL + status.st_mtim.tv_nsec;
  stamp.device = static_cast<unsigned long long>(status.st_dev);
  stamp.inode = static_cast<unsigned long long>(status.st_ino);
  return stamp;
}

CorpusWatch::CorpusWatch(std::string path) : path_(std::move(path)), start_(stamp_of(path_)) {}

void CorpusWatch::require_unchanged(const std::string& advice) const {
  const FileStamp now = stamp_of(path_);
  if (now == start_) return;
  std::string what;
  if (now.inode == 0 && now.size == 0 && now.modified_ns == 0)
    what = "it is gone";
  else if (now.inode != start_.inode || now.device != start_.device)
    what = "another file now has its name";
  else if (now.size != start_.size)
    what = "size " + std::to_string(start_.size) + " → " + std::to_string(now.size) + " bytes";
  else
    what = "rewritten: same size, new modification time";
  fail(what, advice);
}

void CorpusWatch::fail(const std::string& what, const std::string& advice) const {
  throw InputError::inconsistent(path_, "changed while the census read it (" + what + "): " + advice);
}

}  // namespace attnviz
