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

// Temporaries that exist right now, for the signal handler. A fixed array of fixed buffers:
// the handler may only use async-signal-safe calls (unlink, _exit), no allocation.
constexpr int kMaxPendingTemporaries = 4096;
constexpr std::size_t kMaxPathBytes = 4096;
char g_pending[kMaxPendingTemporaries][kMaxPathBytes];
std::atomic<int> g_pending_count{0};

// Folders made for temporaries (a model run writes each layer's pictures ahead, issue 38).
constexpr int kMaxPendingFolders = 1024;
char g_pending_folders[kMaxPendingFolders][kMaxPathBytes];
std::atomic<int> g_pending_folder_count{0};

extern "C" void remove_temporaries_and_exit(int signal_number) {
  const int n = g_pending_count.load();
  for (int i = 0; i < n; ++i) {
    if (g_pending[i][0] != '\0') unlink(g_pending[i]);
  }
  // A folder goes once its children have: one pass per level (rmdir fails on the others).
  const int folders = g_pending_folder_count.load();
  for (bool removed = true; removed;) {
    removed = false;
    for (int i = 0; i < folders; ++i)
      if (g_pending_folders[i][0] != '\0' && rmdir(g_pending_folders[i]) == 0) {
        g_pending_folders[i][0] = '\0';
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

// Returns the slot used (or the list's length when it is full).
int register_temporary(const std::string& path) {
  const int slot = g_pending_count.load();
  if (slot >= kMaxPendingTemporaries || path.size() >= kMaxPathBytes) return slot;
  std::memcpy(g_pending[slot], path.c_str(), path.size() + 1);
  g_pending_count.store(slot + 1);
  return slot;
}

// Returns the slot used, as register_temporary does.
int register_folder(const std::string& path) {
  const int slot = g_pending_folder_count.load();
  if (slot >= kMaxPendingFolders || path.size() >= kMaxPathBytes) return slot;
  std::memcpy(g_pending_folders[slot], path.c_str(), path.size() + 1);
  g_pending_folder_count.store(slot + 1);
  return slot;
}

void forget_folders(int from) {
  if (from >= 0 && from < g_pending_folder_count.load()) g_pending_folder_count.store(from);
}

// Forgets the temporaries from slot `from` on (a set forgets its own, which are the last ones
// registered: sets write one after another).
void forget_temporaries(int from) {
  if (from >= 0 && from < g_pending_count.load()) g_pending_count.store(from);
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

void OutputSet::remove_written() noexcept {
  for (const std::string& t : temporaries_) ::unlink(t.c_str());
  forget_temporaries(registered_from_);
  forget_folders(folders_registered_from_);
  std::error_code ec;
  std::sort(created_.begin(), created_.end(),  // deepest first; remove() takes only empty folders
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const std::string& folder : created_) fs::remove(folder, ec);
  temporaries_.clear();
  created_.clear();
  registered_from_ = folders_registered_from_ = -1;
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
    const int slot = register_folder(created_.back());
    if (folders_registered_from_ < 0) folders_registered_from_ = slot;
  }
  for (std::size_t i = temporaries_.size(); i < paths_.size(); ++i) {
    temporaries_.push_back(temporary_name(paths_[i], i));
    const int slot = register_temporary(temporaries_.back());
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
  forget_temporaries(registered_from_);
  temporaries_.clear();
  created_.clear();
  registered_from_ = folders_registered_from_ = -1;
}

}  // namespace attnviz
