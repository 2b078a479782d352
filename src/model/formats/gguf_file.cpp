#include "model/formats/gguf_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <tuple>

#include "core/error.hpp"

namespace attnviz {

namespace {

constexpr std::uint64_t kDefaultAlignment = 32;  // GGUF_DEFAULT_ALIGNMENT
constexpr int kMaxDims = 4;                      // GGML_MAX_DIMS

// GGUF value type ids (gguf.md).
enum ValueType : std::uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};

// The name gguf.md gives value type `type` ("uint32", "array"…), or "value type N" for an id
// outside 0-12.
std::string type_name(std::uint32_t type) {
  static const char* const kNames[] = {"uint8", "int8",  "uint16", "int16",  "uint32", "int32", "float32",
                                       "bool",  "string", "array", "uint64", "int64",  "float64"};
  return type <= kFloat64 ? kNames[type] : "value type " + std::to_string(type);
}

// "a uint32", "an int8", "an array of float32": what a value of the file is, for messages.
std::string describe_value(std::uint32_t type, std::uint32_t element_type) {
  const std::string name = type == kArray ? "array of " + type_name(element_type) : type_name(type);
  const bool vowel = name[0] == 'a' || name[0] == 'i';  // "a uint8": u is said "you"
  return (vowel ? "an " : "a ") + name;
}

// Bytes of a scalar of `type`; 0 for string, array or an unknown id.
std::uint64_t scalar_bytes(std::uint32_t type) {
  switch (type) {
    case kUint8: case kInt8: case kBool: return 1;
    case kUint16: case kInt16: return 2;
    case kUint32: case kInt32: case kFloat32: return 4;
    case kUint64: case kInt64: case kFloat64: return 8;
    default: return 0;
  }
}

// Reads little-endian values from the mapped header, never past its end.
class Cursor {
 public:
  Cursor(const std::string& file, const std::uint8_t* data, std::uint64_t size)
      : file_(file), data_(data), size_(size) {}

  std::uint64_t position() const { return position_; }
  std::uint64_t remaining() const { return size_ - position_; }

  void need(std::uint64_t bytes, const std::string& what) const {
    if (bytes > remaining())
      throw InputError::inconsistent(file_, "truncated: " + what + " at byte " + std::to_string(position_) +
                                                " needs " + std::to_string(bytes) + " bytes, the file has " +
                                                std::to_string(remaining()) + " left");
  }

  template <typename T>
  T read(const std::string& what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, data_ + position_, sizeof(T));
    position_ += sizeof(T);
    return value;
  }

  std::string string(const std::string& what) {
    const auto length = read<std::uint64_t>(what + " (its length)");
    need(length, what);
    std::string text(reinterpret_cast<const char*>(data_ + position_), length);
    position_ += length;
    return text;
  }

 private:
  const std::string& file_;
  const std::uint8_t* data_;
  std::uint64_t size_;
  std::uint64_t position_ = 0;
};

std::string dims_string(const std::vector<std::int64_t>& dims) {
  std::string text = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

std::int64_t read_integer(Cursor& cursor, std::uint32_t type, const std::string& what, const std::string& file) {
  switch (type) {
    case kUint8: return cursor.read<std::uint8_t>(what);
    case kInt8: return cursor.read<std::int8_t>(what);
    case kUint16: return cursor.read<std::uint16_t>(what);
    case kInt16: return cursor.read<std::int16_t>(what);
    case kUint32: return cursor.read<std::uint32_t>(what);
    case kInt32: return cursor.read<std::int32_t>(what);
    case kInt64: return cursor.read<std::int64_t>(what);
    case kUint64: {
      const auto value = cursor.read<std::uint64_t>(what);
      if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw InputError::inconsistent(file, what + ": " + std::to_string(value) + " is beyond int64");
      return static_cast<std::int64_t>(value);
    }
    default: return 0;
  }
}

bool is_integer_type(std::uint32_t type) {
  return type <= kInt32 ? type != kFloat32 : (type == kUint64 || type == kInt64);
}

double read_float(Cursor& cursor, std::uint32_t type, const std::string& what) {
  return type == kFloat32 ? cursor.read<float>(what) : cursor.read<double>(what);
}

GgufValue::Array read_array(Cursor& cursor, std::uint32_t type, const std::string& what, const std::string& file) {
  const auto count = cursor.read<std::uint64_t>(what + " (its length)");
  const std::uint64_t least = type == kString ? 8 : scalar_bytes(type);
  if (type == kArray) throw InputError::inconsistent(file, what + ": arrays of arrays are not supported");
  if (least == 0)
    throw InputError::inconsistent(file, what + ": an array of unknown " + type_name(type) + " (GGUF knows 0-12)");
  if (count > cursor.remaining() / least)
    throw InputError::inconsistent(file, what + ": an array of " + std::to_string(count) +
                                             " elements cannot fit in the " + std::to_string(cursor.remaining()) +
                                             " bytes left in the file");
  if (type == kString) {
    std::vector<std::string> values(count);
    for (auto& value : values) value = cursor.string(what);
    return values;
  }
  if (type == kBool) {
    std::vector<std::uint8_t> values(count);
    for (auto& value : values) value = cursor.read<std::uint8_t>(what);
    return values;
  }
  if (type == kFloat32 || type == kFloat64) {
    std::vector<double> values(count);
    for (auto& value : values) value = read_float(cursor, type, what);
    return values;
  }
  std::vector<std::int64_t> values(count);
  for (auto& value : values) value = read_integer(cursor, type, what, file);
  return values;
}

GgufValue read_value(Cursor& cursor, const std::string& key, const std::string& file) {
  GgufValue value;
  value.gguf_type = cursor.read<std::uint32_t>("the type of metadata " + key);
  const std::string what = "metadata " + key;
  if (value.gguf_type == kString) {
    value.value = cursor.string(what);
  } else if (value.gguf_type == kArray) {
    value.element_type = cursor.read<std::uint32_t>(what + " (its element type)");
    value.value = read_array(cursor, value.element_type, what, file);
  } else if (value.gguf_type == kBool) {
    value.value = cursor.read<std::uint8_t>(what) != 0;
  } else if (value.gguf_type == kFloat32 || value.gguf_type == kFloat64) {
    value.value = read_float(cursor, value.gguf_type, what);
  } else if (is_integer_type(value.gguf_type)) {
    value.value = read_integer(cursor, value.gguf_type, what, file);
  } else {
    throw InputError::inconsistent(file, what + ": unknown " + type_name(value.gguf_type) + " (GGUF knows 0-12)");
  }
  return value;
}

// The version field: 2 or 3. A file written on a big-endian machine reads as 2 or 3 with its
// bytes reversed (0x03000000 = 50331648), which llama.cpp (gguf.cpp) recognises by its low
// 16 bits being zero; say so rather than report a version that never existed.
void check_version(const std::string& path, std::uint32_t version) {
  if (version == 2 || version == 3) return;
  if ((version & 0xFFFFu) == 0) {
    const std::uint32_t swapped = __builtin_bswap32(version);
    char hex[11];
    std::snprintf(hex, sizeof hex, "0x%08X", version);
    throw InputError::inconsistent(path, "GGUF version " + std::to_string(version) + " (" + hex + ") is version " +
                                             std::to_string(swapped) + " with its bytes reversed: the file is big-endian (written for a big-endian "
                                             "machine such as s390x); attnviz reads little-endian GGUF files only");
  }
  throw InputError::inconsistent(path, "GGUF version " + std::to_string(version) + " is not supported (2 and 3 are)");
}

}  // namespace

std::int64_t GgufTensorInfo::num_rows() const {
  std::int64_t rows = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) rows *= dims[i];
  return rows;
}

GgufFile::GgufFile(const std::string& path) : path_(path) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) throw InputError::unreadable(path, std::strerror(errno));
  if (!S_ISREG(status.st_mode)) throw InputError::unreadable(path, "not a regular file");
  file_bytes_ = static_cast<std::uint64_t>(status.st_size);
  if (file_bytes_ < 4) throw InputError::inconsistent(path, "not a GGUF file (" + std::to_string(file_bytes_) + " bytes)");
  bytes_ = FileText::map(path, file_bytes_, 0);
  if (!bytes_.mapped()) throw InputError::unreadable(path, "the file could not be mapped");
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes_.view().data());
  Cursor cursor(path_, data, file_bytes_);

  if (std::memcmp(data, "GGUF", 4) != 0) {
    const std::string_view head = bytes_.view().substr(0, 64);
    const std::size_t first = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    const bool json = first != std::string_view::npos && head[first] == '{';
    throw InputError::inconsistent(path, std::string("not a GGUF file (its first bytes are not \"GGUF\")") +
                                             (json ? "; it looks like JSON: a layer's JSON is given without --model" : ""));
  }
  cursor.read<std::uint32_t>("magic");
  version_ = cursor.read<std::uint32_t>("the version");
  check_version(path, version_);
  const auto tensor_count = cursor.read<std::uint64_t>("the tensor count");
  const auto metadata_count = cursor.read<std::uint64_t>("the metadata count");
  // Each key/value takes at least 12 bytes, each tensor entry at least 8 + 4 + 8 + 4 + 8.
  if (metadata_count > cursor.remaining() / 12 || tensor_count > cursor.remaining() / 32)
    throw InputError::inconsistent(path, std::to_string(metadata_count) + " metadata keys and " +
                                             std::to_string(tensor_count) + " tensors cannot fit in a file of " +
                                             std::to_string(file_bytes_) + " bytes");

  for (std::uint64_t i = 0; i < metadata_count; ++i) {
    std::string key = cursor.string("metadata key " + std::to_string(i));
    GgufValue value = read_value(cursor, key, path_);
    if (metadata_.count(key)) throw InputError::inconsistent(path, "metadata key " + key + " appears twice");
    metadata_.emplace(std::move(key), std::move(value));
  }

  const std::uint64_t alignment = read_alignment();

  tensors_.resize(tensor_count);
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensorInfo& info = tensors_[i];
    info.name = cursor.string("tensor name " + std::to_string(i));
    const std::string what = "tensor " + info.name;
    const auto n_dims = cursor.read<std::uint32_t>(what + " (its dimension count)");
    if (n_dims < 1 || n_dims > kMaxDims)
      throw InputError::inconsistent(path, what + ": " + std::to_string(n_dims) + " dimensions (expected 1 to 4)");
    std::int64_t elements = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto dim = cursor.read<std::int64_t>(what + " (its dimensions)");
      if (dim < 1) throw InputError::inconsistent(path, what + ": dimension " + std::to_string(d) + " is " + std::to_string(dim));
      if (elements > std::numeric_limits<std::int64_t>::max() / dim)
        throw InputError::inconsistent(path, what + ": the product of its dimensions overflows");
      elements *= dim;
      info.dims.push_back(dim);
    }
    info.type = cursor.read<std::uint32_t>(what + " (its type)");
    info.offset = cursor.read<std::uint64_t>(what + " (its offset)");
    if (ggml_type_name(info.type).rfind("type ", 0) == 0)
      throw InputError::inconsistent(path, what + ": unknown tensor type id " + std::to_string(info.type));
    if (tensor_index_.count(info.name)) throw InputError::inconsistent(path, "tensor " + info.name + " appears twice");
    tensor_index_.emplace(info.name, i);
  }

  const std::uint64_t data_start = (cursor.position() + alignment - 1) / alignment * alignment;
  if (tensor_count > 0 && data_start > file_bytes_) {
    const bool given = has("general.alignment");
    throw InputError::inconsistent(path, "the tensor data would start at byte " + std::to_string(data_start) +
                                             " (the header's end, byte " + std::to_string(cursor.position()) +
                                             ", rounded up to a multiple of " +
                                             (given ? "metadata general.alignment " : "the default alignment ") +
                                             std::to_string(alignment) + "), past the end of the file (" +
                                             std::to_string(file_bytes_) + " bytes): truncated" +
                                             (given ? ", or a wrong general.alignment" : ""));
  }
  for (GgufTensorInfo& info : tensors_) {
    const std::string what = "tensor " + info.name;
    if (info.offset % alignment != 0)
      throw InputError::inconsistent(path, what + ": offset " + std::to_string(info.offset) +
                                               " is not a multiple of the alignment " + std::to_string(alignment));
    if (!ggml_type_supported(info.type)) continue;  // refused when used, naming the type
    const std::int64_t block = ggml_block_elements(info.type);
    if (info.row_length() % block != 0)
      throw InputError::inconsistent(path, what + ": rows of " + std::to_string(info.row_length()) + " elements are not whole " +
                                               ggml_type_name(info.type) + " blocks of " + std::to_string(block));
    const std::uint64_t blocks = static_cast<std::uint64_t>(info.num_elements() / block);
    const std::uint64_t block_bytes = ggml_block_bytes(info.type);
    if (blocks > std::numeric_limits<std::uint64_t>::max() / block_bytes)
      throw InputError::inconsistent(path, what + ": its size overflows");
    info.bytes = blocks * block_bytes;
    if (info.offset > file_bytes_ - data_start || info.bytes > file_bytes_ - data_start - info.offset)
      throw InputError::inconsistent(path, what + " (" + std::to_string(info.bytes) + " bytes at offset " +
                                               std::to_string(info.offset) + ") runs past the end of the file (" +
                                               std::to_string(file_bytes_ - data_start) + " bytes of tensor data)");
    info.data = data + data_start + info.offset;
  }
  check_layout(alignment);
}

// The tensors, in offset order, must neither share bytes nor leave bytes between them that no
// tensor covers beyond the padding to the alignment: llama.cpp (gguf.cpp) requires each
// tensor's offset to be exactly the previous one's end padded to general.alignment. Tensors of
// a type this build cannot decode have no known size; with one of those only overlaps of the
// others are checked.
void GgufFile::check_layout(std::uint64_t alignment) const {
  std::vector<const GgufTensorInfo*> by_offset;
  bool all_sized = true;
  for (const GgufTensorInfo& info : tensors_) {
    if (info.data) by_offset.push_back(&info);
    else all_sized = false;
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](auto* a, auto* b) { return std::tie(a->offset, a->name) < std::tie(b->offset, b->name); });
  const auto range = [](const GgufTensorInfo* t) {
    return t->name + " (bytes [" + std::to_string(t->offset) + ", " + std::to_string(t->offset + t->bytes) + "))";
  };
  std::uint64_t next = 0;  // where the next tensor must start: the previous end, padded
  const GgufTensorInfo* previous = nullptr;
  for (const GgufTensorInfo* tensor : by_offset) {
    if (previous && previous->offset + previous->bytes > tensor->offset)
      throw InputError::inconsistent(path_, "tensors " + range(previous) + " and " + range(tensor) +
                                                " of the tensor data overlap");
    if (all_sized && tensor->offset > next)
      throw InputError::inconsistent(path_, "bytes [" + std::to_string(next) + ", " + std::to_string(tensor->offset) +
                                                ") of the tensor data belong to no tensor (the gap before tensor " +
                                                range(tensor) + "; each tensor starts where the one before ends, padded to the " +
                                                "alignment " + std::to_string(alignment) + ")");
    next = (tensor->offset + tensor->bytes + alignment - 1) / alignment * alignment;
    previous = tensor;
  }
}

// general.alignment (gguf.md: a uint32, a power of two; 32 when absent): tensor offsets are
// multiples of it and the data section starts at the next multiple after the header.
std::uint64_t GgufFile::read_alignment() const {
  const std::string key = "general.alignment";
  const GgufValue* value = find(key);
  if (!value) return kDefaultAlignment;
  // llama.cpp reads it with gguf_get_val_u32, which aborts on any other type; a uint64 that
  // happens to fit is still a file llama.cpp cannot load.
  if (value->gguf_type != kUint32)
    throw InputError::inconsistent(path_, "metadata " + key + ": expected a uint32 (as llama.cpp reads it), got " +
                                              describe_value(value->gguf_type, value->element_type));
  const std::optional<std::int64_t> given = integer(key);
  if (*given <= 0 || *given > std::numeric_limits<std::uint32_t>::max() || (*given & (*given - 1)) != 0)
    throw InputError::inconsistent(path_, "metadata " + key + ": expected a power of two from 1 to 2^31 (a uint32), got " +
                                              std::to_string(*given));
  return static_cast<std::uint64_t>(*given);
}

const GgufValue* GgufFile::find(std::string_view key) const {
  const auto it = metadata_.find(key);
  return it == metadata_.end() ? nullptr : &it->second;
}

void GgufFile::wrong_type(std::string_view key, const char* expected) const {
  throw InputError::inconsistent(path_, "metadata " + std::string(key) + ": expected " + expected +
                                            ", got " + describe_value(find(key)->gguf_type, find(key)->element_type));
}

bool GgufFile::has(std::string_view key) const { return find(key) != nullptr; }

std::optional<std::string> GgufFile::string(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (const auto* text = std::get_if<std::string>(&value->value)) return *text;
  wrong_type(key, "a string");
}

std::optional<std::int64_t> GgufFile::integer(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (const auto* number = std::get_if<std::int64_t>(&value->value)) return *number;
  wrong_type(key, "an integer");
}

std::optional<double> GgufFile::number(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (const auto* real = std::get_if<double>(&value->value)) return *real;
  if (const auto* whole = std::get_if<std::int64_t>(&value->value)) return static_cast<double>(*whole);
  wrong_type(key, "a number");
}

std::optional<bool> GgufFile::boolean(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (const auto* flag = std::get_if<bool>(&value->value)) return *flag;
  wrong_type(key, "a boolean");
}

const std::vector<std::string>* GgufFile::string_array(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return nullptr;
  if (const auto* array = std::get_if<GgufValue::Array>(&value->value))
    if (const auto* strings = std::get_if<std::vector<std::string>>(array)) return strings;
  wrong_type(key, "an array of strings");
}

std::optional<std::vector<double>> GgufFile::number_array(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (const auto* array = std::get_if<GgufValue::Array>(&value->value)) {
    if (const auto* reals = std::get_if<std::vector<double>>(array)) return *reals;
    if (const auto* wholes = std::get_if<std::vector<std::int64_t>>(array))
      return std::vector<double>(wholes->begin(), wholes->end());
  }
  wrong_type(key, "an array of numbers");
}

std::optional<std::vector<std::int64_t>> GgufFile::integer_array(std::string_view key) const {
  const GgufValue* value = find(key);
  if (!value) return std::nullopt;
  if (const auto* array = std::get_if<GgufValue::Array>(&value->value))
    if (const auto* wholes = std::get_if<std::vector<std::int64_t>>(array)) return *wholes;
  wrong_type(key, "an array of integers");
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name, std::string_view role) const {
  if (const GgufTensorInfo* info = find_tensor(name)) return *info;
  throw InputError::inconsistent(path_, "missing tensor " + std::string(name) + " (" + std::string(role) + ")");
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name, const std::vector<std::int64_t>& dims,
                                       std::string_view meaning) const {
  const GgufTensorInfo& info = tensor(name, meaning);
  if (info.dims != dims)
    throw InputError::inconsistent(path_, "tensor " + info.name + ": expected dims " + dims_string(dims) + " (" +
                                              std::string(meaning) + "), got " + dims_string(info.dims));
  return info;
}

Matrix GgufFile::matrix(const GgufTensorInfo& tensor) const {
  if (!ggml_type_supported(tensor.type))
    throw InputError::inconsistent(path_, "tensor " + tensor.name + ": type " + ggml_type_name(tensor.type) +
                                              " is not supported (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, "
                                              "q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs are)");
  const std::int64_t rows = tensor.num_rows(), cols = tensor.row_length();
  Matrix values(rows, cols);
  const std::uint64_t row_bytes = tensor.bytes / static_cast<std::uint64_t>(rows);
  for (std::int64_t r = 0; r < rows; ++r)
    dequantize_row(static_cast<GgmlType>(tensor.type), tensor.data + static_cast<std::uint64_t>(r) * row_bytes,
                   values.row(r).data(), cols);
  return values;
}

Matrix GgufFile::matrix_rows(const GgufTensorInfo& tensor, const std::vector<std::int32_t>& ids) const {
  if (!ggml_type_supported(tensor.type))
    throw InputError::inconsistent(path_, "tensor " + tensor.name + ": type " + ggml_type_name(tensor.type) +
                                              " is not supported (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, "
                                              "q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs are)");
  const std::int64_t rows = tensor.num_rows(), cols = tensor.row_length();
  Matrix values(static_cast<Eigen::Index>(ids.size()), cols);
  const std::uint64_t row_bytes = tensor.bytes / static_cast<std::uint64_t>(rows);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= rows)
      throw InputError::inconsistent(path_, "tensor " + tensor.name + ": row " + std::to_string(ids[i]) + " of " +
                                                std::to_string(rows) + " requested");
    dequantize_row(static_cast<GgmlType>(tensor.type), tensor.data + static_cast<std::uint64_t>(ids[i]) * row_bytes,
                   values.row(static_cast<Eigen::Index>(i)).data(), cols);
  }
  return values;
}

Vector GgufFile::vector(const GgufTensorInfo& tensor) const {
  const Matrix values = matrix(tensor);
  return Eigen::Map<const Vector>(values.data(), values.size());
}

}  // namespace attnviz
