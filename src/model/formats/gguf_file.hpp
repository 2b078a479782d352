// A GGUF file (ggml's format, as llama.cpp, Ollama and LM Studio use it), mapped read-only:
// its metadata key/values and its tensor table, validated against the file's size before any
// tensor is touched. Tensors are decoded to float32 on demand (one at a time, per layer), never
// all up front. Spec: ggml/docs/gguf.md (versions 2 and 3; little-endian).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/types.hpp"
#include "io/file_text.hpp"
#include "model/formats/ggml_types.hpp"

namespace attnviz {

/// One tensor's entry of the table. GGUF lists dimensions fastest-varying first, so dims[0] is
/// the length of a row as stored, and a 2-D tensor of dims [in, out] is, read row-major, the
/// [out, in] matrix PyTorch's nn.Linear stores (y = x·Wᵀ).
struct GgufTensorInfo {
  std::string name;
  std::vector<std::int64_t> dims;   ///< ggml order: dims[0] fastest
  std::uint32_t type = 0;           ///< ggml_type id (GgmlType)
  std::uint64_t offset = 0;         ///< from the start of the data section
  const std::uint8_t* data = nullptr;  ///< mapped bytes (valid while the GgufFile lives)
  std::uint64_t bytes = 0;          ///< bytes of data

  std::int64_t row_length() const { return dims.empty() ? 1 : dims[0]; }
  /// Product of dims[1…] (1 for a vector).
  std::int64_t num_rows() const;
  std::int64_t num_elements() const { return row_length() * num_rows(); }
};

/// A metadata value: integers of any width as int64 (uint64 beyond int64 is refused), floats as
/// double, strings, and arrays of one element type.
struct GgufValue {
  using Array = std::variant<std::vector<std::int64_t>, std::vector<double>, std::vector<std::uint8_t> /*bool*/,
                             std::vector<std::string>>;
  std::variant<std::int64_t, double, bool, std::string, Array> value;
  std::uint32_t gguf_type = 0;     ///< the file's value type id (0…12)
  std::uint32_t element_type = 0;  ///< for an array (gguf_type 9): its elements' type id
};

/// The mapped file with its parsed header. Move-only; the mapping lives as long as the object.
class GgufFile {
 public:
  /// Maps and parses `path`. Throws InputError ("FILE: …" one line) for a missing or unreadable
  /// file, a wrong magic, an unsupported version (not 2 or 3; a big-endian file is named as
  /// such), a general.alignment that is not a power of two up to 2^31, a truncated header, a
  /// string or array count that cannot fit in the file, duplicate keys or tensor names,
  /// dimensions whose product overflows, a tensor whose data runs past the end of the file or
  /// overlaps another, bytes between tensors that no tensor covers (beyond the alignment's
  /// padding; llama.cpp refuses them too), an unknown type id, or a misaligned offset.
  explicit GgufFile(const std::string& path);
  GgufFile(GgufFile&&) noexcept = default;
  GgufFile& operator=(GgufFile&&) noexcept = default;

  const std::string& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  std::uint64_t file_bytes() const { return file_bytes_; }

  // Metadata. Each accessor returns nullopt when the key is absent and throws InputError
  // ("FILE: metadata KEY: expected an integer, got an array of float32") when it is present with
  // another type.
  bool has(std::string_view key) const;
  std::optional<std::string> string(std::string_view key) const;
  std::optional<std::int64_t> integer(std::string_view key) const;  ///< any integer type
  std::optional<double> number(std::string_view key) const;         ///< any integer or float type
  std::optional<bool> boolean(std::string_view key) const;
  /// Arrays; nullptr when absent. Numeric arrays of any integer type come as int64, of float
  /// types as double (number_array converts either).
  const std::vector<std::string>* string_array(std::string_view key) const;
  std::optional<std::vector<double>> number_array(std::string_view key) const;
  std::optional<std::vector<std::int64_t>> integer_array(std::string_view key) const;
  const std::map<std::string, GgufValue, std::less<>>& metadata() const { return metadata_; }

  // Tensors.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  /// nullptr when absent.
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  /// Throws InputError "FILE: missing tensor NAME (ROLE)" when absent.
  const GgufTensorInfo& tensor(std::string_view name, std::string_view role) const;
  /// Like tensor(), and checks its dims (ggml order) equal `dims`; throws InputError
  /// "FILE: tensor NAME: expected dims [a, b] (MEANING), got [c, d]".
  const GgufTensorInfo& tensor(std::string_view name, const std::vector<std::int64_t>& dims,
                               std::string_view meaning) const;

  /// The tensor decoded to float32 as a row-major [num_rows, row_length] matrix (for a weight
  /// [out, in], as nn.Linear stores it). Throws InputError naming the tensor and its type when
  /// the type is not supported.
  Matrix matrix(const GgufTensorInfo& tensor) const;
  /// Rows `ids` of the tensor decoded as matrix() would, in that order ([ids.size(), row_length]);
  /// each id must be in [0, num_rows).
  Matrix matrix_rows(const GgufTensorInfo& tensor, const std::vector<std::int32_t>& ids) const;
  /// A 1-D tensor (or any tensor, flattened) decoded to float32.
  Vector vector(const GgufTensorInfo& tensor) const;

 private:
  const GgufValue* find(std::string_view key) const;
  std::uint64_t read_alignment() const;
  void check_layout(std::uint64_t alignment) const;
  [[noreturn]] void wrong_type(std::string_view key, const char* expected) const;

  std::string path_;
  std::uint32_t version_ = 0;
  std::uint64_t file_bytes_ = 0;
  FileText bytes_;  // the mapped file
  std::map<std::string, GgufValue, std::less<>> metadata_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, std::size_t, std::less<>> tensor_index_;
};

}  // namespace attnviz
