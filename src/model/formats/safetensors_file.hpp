// A Hugging Face safetensors file, mapped read-only: the JSON header (read with nlohmann/json)
// and the tensors it lists, validated against the file before any is touched. Format:
// 8-byte little-endian header length, the header (name -> {dtype, shape, data_offsets}), then
// the data; offsets are relative to the end of the header (huggingface/safetensors docs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"
#include "io/file_text.hpp"

namespace attnviz {

/// One tensor of a safetensors file. shape is row-major (PyTorch's): a Linear weight is [out, in].
struct SafetensorsTensor {
  std::string name;
  std::string dtype;                 ///< "F32", "F16", "BF16" (decodable); others are listed but refused when used
  std::vector<std::int64_t> shape;
  const std::uint8_t* data = nullptr;
  std::uint64_t bytes = 0;
  std::int64_t num_elements() const;
};

/// The mapped file and its tensor table.
class SafetensorsFile {
 public:
  /// Maps and validates `path`. Throws InputError (one line naming the file and the tensor) for
  /// a header length past the end, a header that is not a JSON object, a tensor without dtype,
  /// shape or data_offsets, offsets out of range, a byte count that disagrees with dtype ×
  /// shape, tensors that do not tile the data exactly (bytes [a, b) that no tensor covers, or
  /// that two tensors share), or a __metadata__ that is not an object of strings, as the
  /// safetensors crate refuses them; and, stricter than the crate, a key repeated in one
  /// object or a tensor entry member other than dtype, shape and data_offsets.
  explicit SafetensorsFile(const std::string& path);
  /// The same on bytes already read from `path` (a mapped file or a pipe's bytes).
  SafetensorsFile(FileText bytes, const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsTensor, std::less<>>& tensors() const { return tensors_; }
  const SafetensorsTensor* find(std::string_view name) const;
  /// The header's __metadata__ (string -> string; empty when absent): free text for the writer
  /// ("format": "pt"), and the aliases safetensors.torch.save_model records for the tensors it
  /// dropped as copies of others (SafetensorsSet follows them).
  const std::map<std::string, std::string, std::less<>>& metadata() const { return metadata_; }

  /// The tensor decoded to float32 as [rows, cols] = [shape[0], product of the rest] (a vector
  /// is [n, 1]). Throws InputError for a dtype other than F32, F16, BF16.
  Matrix matrix(const SafetensorsTensor& tensor) const;

 private:
  void parse();
  void check_tiling(std::vector<const SafetensorsTensor*>& tensors, const std::uint8_t* data, std::uint64_t data_bytes) const;

  std::string path_;
  FileText bytes_;
  std::map<std::string, SafetensorsTensor, std::less<>> tensors_;
  std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace attnviz
