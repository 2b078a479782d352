#include "io/file_text.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <utility>

namespace attnviz {

namespace {

// The file mapped last, for the handler's message (a fixed buffer: the handler may only use
// async-signal-safe calls). Inputs are parsed one at a time, so it is the one being read.
char g_mapped_path[1024] = "";

extern "C" void input_shrank(int) {
  constexpr char kBefore[] = "attnviz: error: ";
  constexpr char kAfter[] = ": the file shrank while attnviz read it; nothing was written\n";
  ssize_t ignored = write(STDERR_FILENO, kBefore, sizeof kBefore - 1);
  ignored = write(STDERR_FILENO, g_mapped_path, strnlen(g_mapped_path, sizeof g_mapped_path));
  ignored = write(STDERR_FILENO, kAfter, sizeof kAfter - 1);
  (void)ignored;
  _exit(1);
}

void install_sigbus_handler() {
  static const bool installed = [] {
    std::signal(SIGBUS, input_shrank);
    return true;
  }();
  (void)installed;
}

// Size and modification time of `fd`; false when fstat fails.
bool file_state(int fd, std::size_t& size, long long& modified_ns) {
  struct stat status {};
  if (fstat(fd, &status) != 0) return false;
  size = static_cast<std::size_t>(status.st_size);
  modified_ns = static_cast<long long>(status.st_mtim.tv_sec) * 1'000'000'000LL + status.st_mtim.tv_nsec;
  return true;
}

}  // namespace

FileText FileText::map(const std::string& path, std::size_t size, std::size_t padding) {
  FileText text;
  if (size == 0) return text;
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t page_bytes = page > 0 ? static_cast<std::size_t>(page) : 4096;
  const std::size_t bytes = (size + padding + page_bytes - 1) / page_bytes * page_bytes;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  std::size_t size_now = 0;
  long long modified_ns = 0;
  if (!file_state(fd, size_now, modified_ns) || size_now != size) {  // changed since the caller's stat
    close(fd);
    return text;
  }
  // Anonymous zero pages first, then the file over their start: the bytes past the end of the
  // file are zeros either way (POSIX zero-fills the rest of the file's last page), and the
  // padding never reaches past the mapping.
  void* region = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) {
    close(fd);
    return text;
  }
  void* file = mmap(region, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  if (file == MAP_FAILED) {
    close(fd);
    munmap(region, bytes);
    return text;
  }
  std::strncpy(g_mapped_path, path.c_str(), sizeof g_mapped_path - 1);
  install_sigbus_handler();
  text.mapping_ = region;
  text.mapping_bytes_ = bytes;
  text.data_ = static_cast<const char*>(region);
  text.size_ = size;
  text.fd_ = fd;
  text.modified_ns_ = modified_ns;
  return text;
}

bool FileText::changed_since_mapped() const {
  if (!mapped()) return false;
  std::size_t size = 0;
  long long modified_ns = 0;
  return !file_state(fd_, size, modified_ns) || size != size_ || modified_ns != modified_ns_;
}

FileText FileText::own(std::string text) {
  FileText out;
  out.owned_ = std::move(text);
  return out;
}

FileText::FileText(FileText&& other) noexcept { *this = std::move(other); }

FileText& FileText::operator=(FileText&& other) noexcept {
  if (this != &other) {
    release();
    owned_ = std::move(other.owned_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    fd_ = std::exchange(other.fd_, -1);
    modified_ns_ = std::exchange(other.modified_ns_, 0);
  }
  return *this;
}

FileText::~FileText() { release(); }

void FileText::release() noexcept {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  if (fd_ >= 0) close(fd_);
  mapping_ = nullptr;
  fd_ = -1;
}

}  // namespace attnviz
