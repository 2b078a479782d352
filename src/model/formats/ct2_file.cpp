#include "model/formats/ct2_file.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/counted.hpp"
#include "core/error.hpp"
#include "model/formats/ggml_types.hpp"

namespace attnviz {

namespace {

// Binary versions this reader understands: 2 added the spec name and revision (version 1 files
// use OpenNMT-tf v1 names, which CTranslate2 itself maps in transformer.cc); 6 is
// CURRENT_BINARY_VERSION of model_spec.py and model.h.
constexpr std::uint32_t kMinBinaryVersion = 2;
constexpr std::uint32_t kMaxBinaryVersion = 6;
// Versions from which the file has an alias table and type ids (model.cc, Model::load).
constexpr std::uint32_t kAliasVersion = 3;
constexpr std::uint32_t kTypeIdVersion = 4;
// CTranslate2's variables are at most 4-D (convolutions); a larger rank is a foreign file.
constexpr std::size_t kMaxRank = 8;

std::string bytes_text(std::uint64_t n) { return counted(static_cast<long long>(n), "byte"); }

// Bounds-checked little-endian reads over the file's bytes; every failure names what was being
// read, where, and how much of the file there is.
class Cursor {
 public:
  Cursor(const std::vector<std::uint8_t>& bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }

  const std::uint8_t* take(std::uint64_t n, const std::string& what) {
    if (n > remaining()) {
      throw InputError::inconsistent(path_, "truncated: " + what + " needs " + bytes_text(n) + " at offset " +
                                                std::to_string(pos_) + ", the file has " +
                                                bytes_text(bytes_.size()));
    }
    const std::uint8_t* p = bytes_.data() + pos_;
    pos_ += static_cast<std::size_t>(n);
    return p;
  }

  template <typename T>
  T read(const std::string& what) {
    T value;
    std::memcpy(&value, take(sizeof value, what), sizeof value);
    return value;
  }

  // uint16 n, then n bytes whose last is the NUL (model_spec.py _write_string).
  std::string string(const std::string& what) {
    const auto n = read<std::uint16_t>(what);
    const std::uint8_t* p = take(n, what);
    std::string text(reinterpret_cast<const char*>(p), n);
    if (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
  }

 private:
  const std::vector<std::uint8_t>& bytes_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::size_t item_bytes(Ct2Type type) {
  switch (type) {
    case Ct2Type::Float32: case Ct2Type::Int32: return 4;
    case Ct2Type::Int16: case Ct2Type::Float16: case Ct2Type::BFloat16: return 2;
    case Ct2Type::Int8: return 1;
  }
  return 0;
}

// model.cc get_dtype_from_item_size: the (flawed, by CTranslate2's own comment) rule of versions
// before 4, where 2 bytes always meant int16.
std::optional<Ct2Type> type_from_item_size(std::uint8_t item_size) {
  switch (item_size) {
    case 4: return Ct2Type::Float32;
    case 2: return Ct2Type::Int16;
    case 1: return Ct2Type::Int8;
    default: return std::nullopt;
  }
}

std::vector<std::uint8_t> read_whole_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError::unreadable(path, "is a directory");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError::unreadable(path, std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) throw InputError::unreadable(path, "cannot tell its size");
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  in.seekg(0);
  // One read of the whole file (a byte-wise stream iterator took seconds per GB).
  if (!in.read(reinterpret_cast<char*>(bytes.data()), size)) throw InputError::unreadable(path, "read error");
  return bytes;
}

template <typename T>
T load(const std::uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

}  // namespace

std::string ct2_type_name(Ct2Type type) {
  switch (type) {
    case Ct2Type::Float32: return "float32";
    case Ct2Type::Int8: return "int8";
    case Ct2Type::Int16: return "int16";
    case Ct2Type::Int32: return "int32";
    case Ct2Type::Float16: return "float16";
    case Ct2Type::BFloat16: return "bfloat16";
  }
  return "type " + std::to_string(static_cast<int>(type));
}

std::int64_t Ct2Variable::num_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string Ct2Variable::shape_text() const {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Ct2File::Ct2File(const std::string& path) : path_(path), bytes_(read_whole_file(path)) {
  Cursor in(bytes_, path_);
  binary_version_ = in.read<std::uint32_t>("the binary version");
  if (binary_version_ < kMinBinaryVersion || binary_version_ > kMaxBinaryVersion) {
    const bool plausible = binary_version_ >= 1 && binary_version_ < 64;
    throw InputError::inconsistent(
        path_, (plausible ? "CTranslate2 binary version " + std::to_string(binary_version_) + " is not supported"
                          : "not a CTranslate2 model.bin (its first 4 bytes read as binary version " +
                                std::to_string(binary_version_) + ")") +
                   "; versions " + std::to_string(kMinBinaryVersion) + " to " + std::to_string(kMaxBinaryVersion) +
                   " are read");
  }
  spec_name_ = in.string("the spec name");
  spec_revision_ = in.read<std::uint32_t>("the spec revision");
  const auto count = in.read<std::uint32_t>("the number of variables");
  // Each variable takes at least 8 bytes (empty name, rank 0, type, count): a count beyond that
  // is a foreign or corrupt file, refused before reserving memory for it.
  if (count > in.remaining() / 8) {
    throw InputError::inconsistent(path_, "truncated: " + std::to_string(count) + " variables cannot fit in the " +
                                              bytes_text(in.remaining()) + " after the header");
  }
  variables_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    Ct2Variable v;
    const std::string which = "variable " + std::to_string(i);
    v.name = in.string(which + "'s name");
    const std::string label = "variable " + v.name;
    const auto rank = in.read<std::uint8_t>(label + "'s rank");
    if (rank > kMaxRank) {
      throw InputError::inconsistent(path_, label + ": rank " + std::to_string(rank) + " (at most " +
                                                std::to_string(kMaxRank) + ")");
    }
    std::uint64_t elements = 1;
    for (std::uint8_t d = 0; d < rank; ++d) {
      const auto dim = in.read<std::uint32_t>(label + "'s shape");
      v.shape.push_back(dim);
      if (dim != 0 && elements > std::numeric_limits<std::uint64_t>::max() / 4 / dim) {
        throw InputError::inconsistent(path_, label + ": shape " + v.shape_text() + " is too large");
      }
      elements *= dim;
    }
    const auto type_byte = in.read<std::uint8_t>(label + "'s type");
    const auto stored_count = in.read<std::uint32_t>(label + "'s size");
    std::uint64_t bytes = 0;
    if (binary_version_ >= kTypeIdVersion) {
      if (type_byte > static_cast<std::uint8_t>(Ct2Type::BFloat16)) {
        throw InputError::inconsistent(path_, label + ": unknown type id " + std::to_string(type_byte) +
                                                  " (0 float32, 1 int8, 2 int16, 3 int32, 4 float16, 5 bfloat16)");
      }
      v.type = static_cast<Ct2Type>(type_byte);
      bytes = stored_count;
    } else {
      const auto type = type_from_item_size(type_byte);
      if (!type) {
        throw InputError::inconsistent(path_, label + ": unknown item size " + std::to_string(type_byte) +
                                                  " (4 float32, 2 int16, 1 int8)");
      }
      v.type = *type;
      bytes = static_cast<std::uint64_t>(stored_count) * type_byte;
    }
    if (bytes != elements * item_bytes(v.type)) {
      throw InputError::inconsistent(path_, label + ": " + bytes_text(bytes) + " stored, but shape " + v.shape_text() +
                                                " of " + ct2_type_name(v.type) + " needs " +
                                                bytes_text(elements * item_bytes(v.type)));
    }
    v.bytes = bytes;
    v.data = in.take(bytes, label + "'s data");
    if (!index_.emplace(v.name, variables_.size()).second) {
      throw InputError::inconsistent(path_, label + " appears twice");
    }
    variables_.push_back(std::move(v));
  }
  if (binary_version_ >= kAliasVersion) {
    const auto alias_count = in.read<std::uint32_t>("the number of aliases");
    if (alias_count > in.remaining() / 4) {
      throw InputError::inconsistent(path_, "truncated: " + std::to_string(alias_count) + " aliases cannot fit in the " +
                                                bytes_text(in.remaining()) + " left");
    }
    for (std::uint32_t i = 0; i < alias_count; ++i) {
      std::string alias = in.string("alias " + std::to_string(i));
      std::string target = in.string("alias " + alias + "'s variable");
      if (!index_.contains(target)) {
        throw InputError::inconsistent(path_, "alias " + alias + " names missing variable " + target);
      }
      aliases_.emplace(std::move(alias), std::move(target));
    }
  }
  if (in.remaining() != 0) {
    throw InputError::inconsistent(path_, bytes_text(in.remaining()) + " after the last table at offset " +
                                              std::to_string(in.position()) + " (not a binary version " +
                                              std::to_string(binary_version_) + " model.bin?)");
  }
}

const Ct2Variable* Ct2File::find(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) {
    // An alias NAME also stands for NAME_scale of its target (model.cc, register_variable_alias).
    auto alias = aliases_.find(name);
    std::string target;
    if (alias != aliases_.end()) {
      target = alias->second;
    } else if (name.ends_with("_scale")) {
      auto base = aliases_.find(name.substr(0, name.size() - 6));
      if (base == aliases_.end()) return nullptr;
      target = base->second + "_scale";
    } else {
      return nullptr;
    }
    it = index_.find(target);
    if (it == index_.end()) return nullptr;
  }
  return &variables_[it->second];
}

const Ct2Variable& Ct2File::variable(std::string_view name, std::string_view role) const {
  const Ct2Variable* v = find(name);
  if (v == nullptr) {
    throw InputError::inconsistent(path_, "missing variable " + std::string(name) + " (" + std::string(role) + ")");
  }
  return *v;
}

std::vector<float> Ct2File::decode(const Ct2Variable& v, std::int64_t rows) const {
  const auto n = v.num_elements();
  std::vector<float> out(static_cast<std::size_t>(n));
  switch (v.type) {
    case Ct2Type::Float32:
      std::memcpy(out.data(), v.data, v.bytes);
      return out;
    case Ct2Type::Float16:
      dequantize_row(GgmlType::F16, v.data, out.data(), n);
      return out;
    case Ct2Type::BFloat16:
      dequantize_row(GgmlType::BF16, v.data, out.data(), n);
      return out;
    case Ct2Type::Int32:
      throw InputError::inconsistent(path_, "variable " + v.name + ": int32 is not a weight type");
    case Ct2Type::Int8:
    case Ct2Type::Int16:
      break;
  }
  const std::string scale_name = v.name + "_scale";
  const Ct2Variable* scale_variable = find(scale_name);
  if (scale_variable == nullptr) {
    throw InputError::inconsistent(path_, "variable " + v.name + " is " + ct2_type_name(v.type) +
                                              " but the file has no " + scale_name + " to dequantize it");
  }
  if (scale_variable->type == Ct2Type::Int8 || scale_variable->type == Ct2Type::Int16 ||
      scale_variable->type == Ct2Type::Int32) {
    throw InputError::inconsistent(path_, "variable " + scale_name + ": expected a float type, got " +
                                              ct2_type_name(scale_variable->type));
  }
  const std::vector<float> scale = decode(*scale_variable, 1);
  const auto scales = static_cast<std::int64_t>(scale.size());
  if (scales != 1 && scales != rows) {
    throw InputError::inconsistent(path_, "variable " + scale_name + ": shape " + scale_variable->shape_text() +
                                              ", expected 1 or " + std::to_string(rows) + " scales (the rows of " +
                                              v.name + " " + v.shape_text() + ")");
  }
  const std::int64_t cols = rows > 0 ? n / rows : 0;
  // CTranslate2's Dequantize: x / scale, per row for int8 (model_spec.py: scale = 127 / amax(row)).
  for (std::int64_t i = 0; i < n; ++i) {
    const float s = scale[scales == 1 ? 0 : static_cast<std::size_t>(i / cols)];
    const float q = v.type == Ct2Type::Int8 ? static_cast<float>(load<std::int8_t>(v.data + i))
                                            : static_cast<float>(load<std::int16_t>(v.data + 2 * i));
    out[static_cast<std::size_t>(i)] = q / s;
  }
  return out;
}

Matrix Ct2File::matrix(std::string_view name, std::string_view role) const {
  const Ct2Variable& v = variable(name, role);
  if (v.shape.size() != 2) {
    throw InputError::inconsistent(path_, "variable " + v.name + " (" + std::string(role) +
                                              "): expected a matrix, got shape " + v.shape_text());
  }
  const std::vector<float> values = decode(v, v.shape[0]);
  Matrix m(v.shape[0], v.shape[1]);
  std::memcpy(m.data(), values.data(), values.size() * sizeof(float));
  return m;
}

Vector Ct2File::vector(std::string_view name, std::string_view role) const {
  const Ct2Variable& v = variable(name, role);
  if (v.shape.size() != 1) {
    throw InputError::inconsistent(path_, "variable " + v.name + " (" + std::string(role) +
                                              "): expected a vector, got shape " + v.shape_text());
  }
  const std::vector<float> values = decode(v, v.shape[0]);
  return Eigen::Map<const Vector>(values.data(), static_cast<Eigen::Index>(values.size()));
}

std::optional<std::int64_t> Ct2File::integer(std::string_view name) const {
  const Ct2Variable* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (v->num_elements() != 1) {
    throw InputError::inconsistent(path_, "variable " + v->name + ": expected a scalar, got shape " + v->shape_text());
  }
  switch (v->type) {
    case Ct2Type::Int8: return load<std::int8_t>(v->data);
    case Ct2Type::Int16: return load<std::int16_t>(v->data);
    case Ct2Type::Int32: return load<std::int32_t>(v->data);
    case Ct2Type::Float32: case Ct2Type::Float16: case Ct2Type::BFloat16: break;
  }
  const float value = decode(*v, 1)[0];
  if (!(std::isfinite(value) && value == std::floor(value))) {
    throw InputError::inconsistent(path_, "variable " + v->name + ": expected a whole number, got " +
                                              std::to_string(value));
  }
  return static_cast<std::int64_t>(value);
}

}  // namespace attnviz
