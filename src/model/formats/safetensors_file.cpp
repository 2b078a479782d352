#include "model/formats/safetensors_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <tuple>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/file_text.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "model/formats/ggml_types.hpp"

namespace attnviz {

namespace {

// Bytes per element of a safetensors dtype; 0 for one this reader does not know.
std::uint64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2") return 1;
  return 0;
}

// __metadata__ is free text for the writer (format, framework), a string -> string map as the
// safetensors crate reads it (Option<HashMap<String, String>>); anything else is refused there.
void check_metadata(const std::string& path, const nlohmann::json& metadata) {
  if (!metadata.is_object()) throw InputError::bad_value(path, "__metadata__", "an object of strings", describe_json(metadata));
  for (const auto& [key, value] : metadata.items())
    if (!value.is_string()) throw InputError::bad_value(path, "__metadata__/" + key, "a string", describe_json(value));
}

constexpr std::uint64_t kMaxHeaderBytes = 100 * 1024 * 1024;  // the format's own limit

}  // namespace

std::int64_t SafetensorsTensor::num_elements() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) throw InputError::unreadable(path, std::strerror(errno));
  if (!S_ISREG(status.st_mode)) throw InputError::unreadable(path, "not a regular file");
  const auto file_bytes = static_cast<std::uint64_t>(status.st_size);
  if (file_bytes < 8) throw InputError::inconsistent(path, "not a safetensors file (" + std::to_string(file_bytes) + " bytes)");
  bytes_ = FileText::map(path, file_bytes, 0);
  if (!bytes_.mapped()) throw InputError::unreadable(path, "the file could not be mapped");
  parse();
}

SafetensorsFile::SafetensorsFile(FileText bytes, const std::string& path) : path_(path), bytes_(std::move(bytes)) {
  if (bytes_.view().size() < 8)
    throw InputError::inconsistent(path, "not a safetensors file (" + std::to_string(bytes_.view().size()) + " bytes)");
  parse();
}

void SafetensorsFile::parse() {
  const std::string& path = path_;
  const auto file_bytes = static_cast<std::uint64_t>(bytes_.view().size());
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes_.view().data());
  std::uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, data, 8);
  if (header_bytes > file_bytes - 8 || header_bytes > kMaxHeaderBytes)
    throw InputError::inconsistent(path, "the header length " + std::to_string(header_bytes) + " runs past the end of the file (" +
                                             std::to_string(file_bytes) + " bytes)");
  // The JSON reader attnviz uses for config.json and tokenizer.json: it refuses a repeated key,
  // which nlohmann (and the crate's serde HashMap) would resolve by keeping one value silently.
  // Leading whitespace is accepted, as the crate's serde_json does (the spec says the header
  // MUST start with '{', but the crate has read such files since #686).
  const nlohmann::json header = parse_json_file(FileText::own(std::string(bytes_.view().substr(8, header_bytes))), path);
  if (!header.is_object()) throw InputError::inconsistent(path, "the header is not a JSON object");
  const std::uint64_t data_start = 8 + header_bytes;
  const std::uint64_t data_bytes = file_bytes - data_start;
  std::vector<const SafetensorsTensor*> by_offset;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      check_metadata(path, entry);
      for (const auto& [key, value] : entry.items()) metadata_.emplace(key, value.get<std::string>());
      continue;
    }
    const std::string what = "tensor " + name;
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets") ||
        !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      throw InputError::inconsistent(path, what + ": expected {\"dtype\", \"shape\", \"data_offsets\": [begin, end]}");
    // The crate's TensorInfo has these three members and ignores others; a member it ignores
    // (a byte order, a stride, a quantization scale) may be one the writer meant to change how
    // the bytes are read, so it is refused rather than guessed at.
    for (const auto& [member, value] : entry.items())
      if (member != "dtype" && member != "shape" && member != "data_offsets")
        throw InputError::inconsistent(path, what + ": unknown member \"" + member + "\" (" + describe_json(value) +
                                                 "; a tensor entry has only dtype, shape and data_offsets)");
    SafetensorsTensor tensor;
    tensor.name = name;
    tensor.dtype = entry["dtype"].get<std::string>();
    std::uint64_t elements = 1;
    for (const auto& dim : entry["shape"]) {
      if (!dim.is_number_unsigned()) throw InputError::inconsistent(path, what + ": shape entries must be whole numbers");
      const auto d = dim.get<std::uint64_t>();
      if (d != 0 && elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / d)
        throw InputError::inconsistent(path, what + ": the product of its shape overflows");
      elements *= d;
      tensor.shape.push_back(static_cast<std::int64_t>(d));
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      throw InputError::inconsistent(path, what + ": data_offsets must be whole numbers");
    const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > data_bytes)
      throw InputError::inconsistent(path, what + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                               "] lie outside the " + std::to_string(data_bytes) + " bytes of data");
    const std::uint64_t element_bytes = dtype_bytes(tensor.dtype);
    if (element_bytes == 0) throw InputError::inconsistent(path, what + ": unknown dtype \"" + tensor.dtype + "\"");
    if (end - begin != elements * element_bytes)
      throw InputError::inconsistent(path, what + ": " + std::to_string(end - begin) + " bytes, but dtype " + tensor.dtype +
                                               " and its shape need " + std::to_string(elements * element_bytes));
    tensor.data = data + data_start + begin;
    tensor.bytes = end - begin;
    by_offset.push_back(&tensors_.emplace(name, std::move(tensor)).first->second);
  }
  check_tiling(by_offset, data + data_start, data_bytes);
}

// The tensors' byte ranges must tile the data section exactly: sorted by data_offsets, each
// starts where the one before ends, the first at 0, the last at the end of the file (the
// safetensors crate's Metadata::validate and its MetadataIncompleteBuffer check). A gap is bytes
// no tensor reads, an overlap bytes two tensors read: either means a damaged or hand-made file.
void SafetensorsFile::check_tiling(std::vector<const SafetensorsTensor*>& tensors, const std::uint8_t* data,
                                   std::uint64_t data_bytes) const {
  const auto begin = [data](const SafetensorsTensor* t) { return static_cast<std::uint64_t>(t->data - data); };
  const auto end = [&begin](const SafetensorsTensor* t) { return begin(t) + t->bytes; };
  const auto offsets = [&](const SafetensorsTensor* t) {
    return t->name + " (data_offsets [" + std::to_string(begin(t)) + ", " + std::to_string(end(t)) + "])";
  };
  const auto key = [&](const SafetensorsTensor* t) {
    return std::tuple<std::uint64_t, std::uint64_t, const std::string&>(begin(t), end(t), t->name);
  };
  std::sort(tensors.begin(), tensors.end(), [&](auto* a, auto* b) { return key(a) < key(b); });
  std::uint64_t covered = 0;  // bytes [0, covered) belong to the tensors seen so far
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor* tensor : tensors) {
    if (begin(tensor) > covered)
      throw InputError::inconsistent(path_, "bytes [" + std::to_string(covered) + ", " + std::to_string(begin(tensor)) +
                                                ") of the data belong to no tensor (the gap before tensor " + offsets(tensor) + ")");
    if (begin(tensor) < covered) {
      const std::string shared = "bytes [" + std::to_string(begin(tensor)) + ", " + std::to_string(std::min(covered, end(tensor))) + ")";
      throw InputError::inconsistent(path_, "tensor " + offsets(tensor) + " starts inside tensor " + offsets(previous) +
                                                (tensor->bytes == 0 ? std::string() : ": " + shared + " would belong to both"));
    }
    covered = end(tensor);
    previous = tensor;
  }
  if (covered < data_bytes) {
    const std::string where = previous ? "after the last, tensor " + offsets(previous) : std::string("the header lists none");
    throw InputError::inconsistent(path_, "bytes [" + std::to_string(covered) + ", " + std::to_string(data_bytes) +
                                              ") of the data belong to no tensor (" + where + ")");
  }
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Matrix SafetensorsFile::matrix(const SafetensorsTensor& tensor) const {
  GgmlType type;
  if (tensor.dtype == "F32") type = GgmlType::F32;
  else if (tensor.dtype == "F16") type = GgmlType::F16;
  else if (tensor.dtype == "BF16") type = GgmlType::BF16;
  else throw InputError::inconsistent(path_, "tensor " + tensor.name + ": dtype " + tensor.dtype + " is not supported (F32, F16, BF16 are)");
  const std::int64_t rows = tensor.shape.empty() ? 1 : tensor.shape[0];
  const std::int64_t cols = rows == 0 ? 0 : tensor.num_elements() / rows;
  Matrix values(rows, cols);
  dequantize_row(type, tensor.data, values.data(), tensor.num_elements());
  return values;
}

}  // namespace attnviz
