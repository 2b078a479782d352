// Writes a safetensors file (Hugging Face's format: an 8-byte little-endian header length N, N
// bytes of JSON naming each tensor's dtype, shape and data_offsets, with an optional
// "__metadata__" map of strings, then the tensors' bytes, row-major) as its tensors come, so
// that a tensor need not be held once it is handed over (a model dump of 8 GB is written layer
// by layer). The data goes after room kept for the header, which is written last into that room
// padded with spaces (the safetensors crate pads its own headers so, to 8 bytes); a header that
// outgrows the room moves the data once. Does not name tensors, nor make the file atomic
// (OutputSet::stream_ahead gives the temporary it writes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnviz {

class SafetensorsWriter {
 public:
  /// Opens the existing file `file` (truncating it) to write; `target` names it in messages.
  /// Throws OutputError naming `target`.
  SafetensorsWriter(const std::string& file, std::string target);
  ~SafetensorsWriter();
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  /// Bytes kept for the header before the first tensor's data (rounded up to 8). Only before
  /// the first begin(); without it, kDefaultHeaderRoom.
  void reserve_header(std::uint64_t bytes);
  static constexpr std::uint64_t kDefaultHeaderRoom = 64 * 1024;

  /// Starts tensor `name` of `dtype` ("F32" or "F64") and `shape` (row-major, outermost
  /// first); its bytes follow through write(), in order. The previous tensor must be complete.
  void begin(const std::string& name, const char* dtype, const std::vector<std::int64_t>& shape);
  /// The next `count` bytes of the current tensor. Throws OutputError when the disk refuses.
  void write(const void* bytes, std::size_t count);
  /// begin() and write() of a whole float32 / float64 tensor.
  void add(const std::string& name, const std::vector<std::int64_t>& shape, const float* values);
  void add(const std::string& name, const std::vector<std::int64_t>& shape, const double* values);

  /// Writes the header (`metadata`, string → string, first, then the tensors in the order they
  /// came) and closes the file. Requires every tensor complete. Throws OutputError.
  void finish(const std::map<std::string, std::string>& metadata);

  /// Bytes of the header `finish` writes: 8 + N (N the padded JSON). Valid after finish().
  std::uint64_t header_bytes() const { return 8 + room_; }
  /// Bytes of tensor data written so far.
  std::uint64_t data_bytes() const { return end_; }

 private:
  struct Entry {
    std::string name;
    const char* dtype;
    std::vector<std::int64_t> shape;
    std::uint64_t begin, end;
  };
  void pwrite_all(const void* bytes, std::size_t count, std::uint64_t offset);
  void move_data(std::uint64_t new_room);

  int fd_ = -1;
  std::string target_;
  std::uint64_t room_ = kDefaultHeaderRoom;
  std::uint64_t end_ = 0;  // data bytes written
  bool started_ = false;
  std::vector<Entry> entries_;
};

}  // namespace attnviz
