#include "io/atomic_output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include "core/error.hpp"

namespace attnviz {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxPathBytes = 4096;

// Paths for the signal handler to remove: a fixed array of fixed buffers, since the handler may
// only use async-signal-safe calls (unlink, rmdir), no allocation. A set adds its paths and later
// forgets them from its first slot on (sets write one after another, so theirs are the last).
template <int kCapacity>
struct PendingPaths {
  char paths[kCapacity][kMaxPathBytes];
  std::atomic<int> count{0};

  // Returns the slot used (or the list's length when it is full or the path too long).
  int add(const std::string& path) {
    const int slot = count.load();
    if (slot >= kCapacity || path.size() >= kMaxPathBytes) return slot;
    std::memcpy(paths[slot], path.c_str(), path.size() + 1);
    count.store(slot + 1);
    return slot;
  }
  void forget_from(int slot) {
    if (slot >= 0 && slot < count.load()) count.store(slot);
  }
};

PendingPaths<4096> g_temporaries;  // temporaries that exist right now
PendingPaths<1024> g_folders;      // folders made for them (a model run writes ahead, issue 38)

extern "C" void remove_temporaries_and_exit(int signal_number) {
  const int n = g_temporaries.count.load();
  for (int i = 0; i < n; ++i) {
    if (g_temporaries.paths[i][0] != '\0') unlink(g_temporaries.paths[i]);
  }
  // A folder goes once its children have: one pass per level (rmdir fails on the others).
  const int folders = g_folders.count.load();
  for (bool removed = true; removed;) {
    removed = false;
    for (int i = 0; i < folders; ++i)
      if (g_folders.paths[i][0] != '\0' && rmdir(g_folders.paths[i]) == 0) {
        g_folders.paths[i][0] = '\0';
        removed = true;
      }
  }
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

void install_handlers_once() {
  static const bool installed = [] {
    std::signal(SIGINT, remove_temporaries_and_exit);
    std::signal(SIGTERM, remove_temporaries_and_exit);
    std::signal(SIGHUP, remove_temporaries_and_exit);
    return true;
  }();
  (void)installed;
}

std::string temporary_name(const std::string& path, std::size_t index) {
  const fs::path target(path);
  const std::string name = "." + target.filename().string() + ".tmp-" + std::to_string(getpid()) + "-" +
                           std::to_string(index);
  return (target.parent_path() / name).string();
}

void write_whole_file(const std::string& temporary, const std::vector<std::string>& pieces, const std::string& target) {
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputError::cannot_write(target, std::strerror(errno));
  for (const std::string& bytes : pieces) {
    std::size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const std::string reason = std::strerror(errno);
        ::close(fd);
        throw OutputError::cannot_write(target, reason);
      }
      written += static_cast<std::size_t>(n);
    }
  }
  if (::close(fd) != 0) throw OutputError::cannot_write(target, std::strerror(errno));
}

}  // namespace

void OutputSet::add(std::string path, std::string bytes) {
  std::vector<std::string> pieces;
  pieces.push_back(std::move(bytes));
  add(std::move(path), std::move(pieces));
}

void OutputSet::add(std::string path, std::vector<std::string> pieces) {
  paths_.push_back(std::move(path));
  contents_.push_back(std::move(pieces));
}

void OutputSet::create_directory(std::string directory) { directories_.push_back(std::move(directory)); }

void OutputSet::append(OutputSet&& other) {
  assert(other.temporaries_.empty() && "a set written ahead is committed, not appended");
  for (std::size_t i = 0; i < other.paths_.size(); ++i) add(std::move(other.paths_[i]), std::move(other.contents_[i]));
  for (std::string& directory : other.directories_) directories_.push_back(std::move(directory));
  other = OutputSet();
}

void refuse_input_as_output(const std::string& output, const std::vector<std::string>& inputs) {
  std::error_code ec;
  if (!fs::exists(output, ec)) return;
  for (const std::string& input : inputs) {
    if (!input.empty() && fs::equivalent(output, input, ec)) {
      throw OutputError::cannot_write(output, "is an input of this run (" + input + "); choose another output");
    }
  }
}

void require_creatable_folder(const std::string& folder, const std::string& output) {
  std::error_code ec;
  fs::path existing = folder;
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path()) existing = existing.parent_path();
  if (existing.empty() || fs::is_directory(existing, ec)) return;
  // create_directories would say only "Not a directory", which reads as if attnviz expected one.
  const std::string what = fs::is_regular_file(existing, ec) ? "is a file, not a folder" : "exists and is not a folder";
  if (existing == fs::path(output)) throw OutputError::cannot_write(output, what);
  throw OutputError::cannot_write(output, existing.string() + " " + what);
}

void OutputSet::protect(std::vector<std::string> inputs) { protected_ = std::move(inputs); }

void check_output_targets(const std::vector<std::string>& paths, const std::vector<std::string>& inputs) {
  std::set<std::string> seen;  // canonical paths: a grid of 4096 heads has 4097 outputs
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::error_code ec;
    const fs::file_status status = fs::symlink_status(paths[i], ec);
    if (fs::is_directory(status)) throw OutputError::cannot_write(paths[i], "is a folder");
    if (fs::exists(status) && !fs::is_regular_file(status)) {
      throw OutputError::cannot_write(paths[i], "exists and is not a regular file (a device, FIFO or link); "
                                                "attnviz replaces files whole and will not replace it");
    }
    if (!seen.insert(fs::weakly_canonical(paths[i], ec).string()).second) {
      throw OutputError::cannot_write(paths[i], "named twice as an output of this run");
    }
    refuse_input_as_output(paths[i], inputs);
  }
}

namespace {

// Creates each folder of `folders` that is missing, with its missing parents, and adds to
// `created` every folder that did not exist before, so that a failed run can remove them again
// (including when this throws OutputError, naming the folder that cannot be created).
void create_folders(const std::vector<std::string>& folders, std::vector<fs::path>& created) {
  for (const std::string& folder : folders) {
    std::error_code ec;
    for (fs::path p = folder; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
      if (std::find(created.begin(), created.end(), p) == created.end()) created.push_back(p);
      if (p == p.parent_path()) break;
    }
    require_creatable_folder(folder, folder);
    fs::create_directories(folder, ec);
    if (ec) throw OutputError::cannot_write(folder, "cannot create the folder: " + ec.message());
    if (!fs::is_directory(folder, ec)) throw OutputError::cannot_write(folder, "exists and is not a folder");
  }
}

}  // namespace

OutputSet::~OutputSet() { remove_written(); }

OutputSet::OutputSet(OutputSet&& other) noexcept
    : paths_(std::move(other.paths_)),
      contents_(std::move(other.contents_)),
      protected_(std::move(other.protected_)),
      directories_(std::move(other.directories_)),
      temporaries_(std::exchange(other.temporaries_, {})),
      created_(std::exchange(other.created_, {})),
      registered_from_(std::exchange(other.registered_from_, -1)),
      folders_registered_from_(std::exchange(other.folders_registered_from_, -1)) {}

OutputSet& OutputSet::operator=(OutputSet&& other) noexcept {
  if (this == &other) return *this;
  remove_written();
  paths_ = std::move(other.paths_);
  contents_ = std::move(other.contents_);
  protected_ = std::move(other.protected_);
  directories_ = std::move(other.directories_);
  temporaries_ = std::exchange(other.temporaries_, {});
  created_ = std::exchange(other.created_, {});
  registered_from_ = std::exchange(other.registered_from_, -1);
  folders_registered_from_ = std::exchange(other.folders_registered_from_, -1);
  return *this;
}

void OutputSet::forget_written() noexcept {
  g_temporaries.forget_from(registered_from_);
  g_folders.forget_from(folders_registered_from_);
  temporaries_.clear();
  created_.clear();
  registered_from_ = folders_registered_from_ = -1;
}

void OutputSet::remove_written() noexcept {
  for (const std::string& t : temporaries_) ::unlink(t.c_str());
  std::error_code ec;
  std::sort(created_.begin(), created_.end(),  // deepest first; remove() takes only empty folders
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& folder : created_) fs::remove(folder, ec);
  forget_written();
}

// Writes the temporaries of the files not yet written (and creates their folders).
void OutputSet::write_temporaries() {
  std::vector<std::string> folders = directories_;
  for (std::size_t i = temporaries_.size(); i < paths_.size(); ++i) {
    const fs::path parent = fs::path(paths_[i]).parent_path();
    if (!parent.empty() && (folders.empty() || folders.back() != parent.string())) folders.push_back(parent.string());
  }
  std::vector<fs::path> created;
  try {
    create_folders(folders, created);
  } catch (...) {
    for (const fs::path& folder : created) created_.push_back(folder.string());
    throw;
  }
  for (const fs::path& folder : created) {
    created_.push_back(folder.string());
    const int slot = g_folders.add(created_.back());
    if (folders_registered_from_ < 0) folders_registered_from_ = slot;
  }
  for (std::size_t i = temporaries_.size(); i < paths_.size(); ++i) {
    temporaries_.push_back(temporary_name(paths_[i], i));
    const int slot = g_temporaries.add(temporaries_.back());
    if (registered_from_ < 0) registered_from_ = slot;
    write_whole_file(temporaries_.back(), contents_[i], paths_[i]);
    contents_[i] = {};  // on disk now: its memory serves the next layer
  }
}

void OutputSet::write_ahead() {
  check_output_targets(paths_, protected_);
  install_handlers_once();
  try {
    write_temporaries();
  } catch (...) {
    remove_written();
    throw;
  }
}

std::string OutputSet::stream_ahead(std::string path) {
  add(std::move(path), std::vector<std::string>());
  write_ahead();
  return temporaries_.back();
}

void OutputSet::commit() {
  check_output_targets(paths_, protected_);
  install_handlers_once();
  try {
    write_temporaries();
    for (std::size_t i = 0; i < paths_.size(); ++i) {
      if (std::rename(temporaries_[i].c_str(), paths_[i].c_str()) != 0) {
        throw OutputError::cannot_write(paths_[i], std::strerror(errno));
      }
    }
  } catch (...) {
    remove_written();
    throw;
  }
  forget_written();  // in place now: neither a later failure nor a signal may remove them
}

}  // namespace attnviz
