#include "io/safetensors_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.hpp"

namespace attnviz {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian: this writer copies memory as it is");

namespace {

std::uint64_t round_up_8(std::uint64_t n) { return (n + 7) / 8 * 8; }

std::uint64_t element_count(const std::vector<std::int64_t>& shape) {
  std::uint64_t n = 1;
  for (const std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

}  // namespace

SafetensorsWriter::SafetensorsWriter(const std::string& file, std::string target) : target_(std::move(target)) {
  fd_ = ::open(file.c_str(), O_RDWR | O_TRUNC | O_CLOEXEC);
  if (fd_ < 0) throw OutputError::cannot_write(target_, std::strerror(errno));
}

SafetensorsWriter::~SafetensorsWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SafetensorsWriter::reserve_header(std::uint64_t bytes) {
  if (started_) throw std::logic_error("SafetensorsWriter::reserve_header after the first tensor");
  room_ = round_up_8(std::max<std::uint64_t>(bytes, 8));
}

void SafetensorsWriter::pwrite_all(const void* bytes, std::size_t count, std::uint64_t offset) {
  const auto* p = static_cast<const char*>(bytes);
  while (count > 0) {
    const ssize_t n = ::pwrite(fd_, p, count, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw OutputError::cannot_write(target_, n < 0 ? std::strerror(errno) : "the disk took no more bytes");
    p += n;
    count -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void SafetensorsWriter::begin(const std::string& name, const char* dtype, const std::vector<std::int64_t>& shape) {
  if (!entries_.empty() && end_ != entries_.back().end)
    throw std::logic_error("safetensors tensor " + entries_.back().name + " is incomplete");
  started_ = true;
  const std::uint64_t bytes = element_count(shape) * (std::strcmp(dtype, "F64") == 0 ? 8 : 4);
  entries_.push_back(Entry{name, dtype, shape, end_, end_ + bytes});
}

void SafetensorsWriter::write(const void* bytes, std::size_t count) {
  if (entries_.empty() || end_ + count > entries_.back().end)
    throw std::logic_error("safetensors: more bytes than the tensor's shape holds");
  pwrite_all(bytes, count, 8 + room_ + end_);
  end_ += count;
}

void SafetensorsWriter::add(const std::string& name, const std::vector<std::int64_t>& shape, const float* values) {
  begin(name, "F32", shape);
  write(values, element_count(shape) * sizeof(float));
}

void SafetensorsWriter::add(const std::string& name, const std::vector<std::int64_t>& shape, const double* values) {
  begin(name, "F64", shape);
  write(values, element_count(shape) * sizeof(double));
}

// Moves every data byte from 8 + room_ to 8 + new_room, last chunk first (the ranges overlap).
void SafetensorsWriter::move_data(std::uint64_t new_room) {
  constexpr std::uint64_t kChunk = 16u << 20;
  std::vector<char> buffer(static_cast<std::size_t>(std::min(kChunk, std::max<std::uint64_t>(end_, 1))));
  for (std::uint64_t stop = end_; stop > 0;) {
    const std::uint64_t start = stop > buffer.size() ? stop - buffer.size() : 0;
    const std::size_t count = static_cast<std::size_t>(stop - start);
    for (std::size_t got = 0; got < count;) {
      const ssize_t n = ::pread(fd_, buffer.data() + got, count - got, static_cast<off_t>(8 + room_ + start + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw OutputError::cannot_write(target_, "reading back the data to make room for the header failed");
      got += static_cast<std::size_t>(n);
    }
    pwrite_all(buffer.data(), count, 8 + new_room + start);
    stop = start;
  }
  room_ = new_room;
}

void SafetensorsWriter::finish(const std::map<std::string, std::string>& metadata) {
  if (!entries_.empty() && end_ != entries_.back().end)
    throw std::logic_error("safetensors tensor " + entries_.back().name + " is incomplete");
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (const Entry& e : entries_)
    header[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {e.begin, e.end}}};
  // Text that is not UTF-8 (a byte token's piece) shows U+FFFD, as in the JSON dump.
  std::string text = header.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  if (text.size() > room_) move_data(round_up_8(text.size()));
  text.resize(static_cast<std::size_t>(room_), ' ');
  const std::uint64_t n = room_;
  char length[8];
  std::memcpy(length, &n, 8);
  pwrite_all(length, 8, 0);
  pwrite_all(text.data(), text.size(), 8);
  // An empty file's data would leave the file shorter than its header says.
  if (::ftruncate(fd_, static_cast<off_t>(8 + room_ + end_)) != 0) throw OutputError::cannot_write(target_, std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw OutputError::cannot_write(target_, std::strerror(errno));
}

}  // namespace attnviz
