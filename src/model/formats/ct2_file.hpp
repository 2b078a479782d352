// A CTranslate2 model.bin (the weights file of a converted model directory), read once into
// memory and validated against its size before any variable is used. No maths here beyond
// decoding a variable's items to float32.
//
// Layout (little-endian; CTranslate2's python/ctranslate2/specs/model_spec.py ModelSpec._serialize
// writes it, src/models/model.cc Model::load reads it). A string is uint16 n, then n bytes of
// UTF-8 ending in a NUL.
//
//   uint32 binary_version                          1 … 6 (6 is CURRENT_BINARY_VERSION)
//   string spec name, uint32 spec revision         version >= 2 only
//   uint32 number of variables
//   per variable: string name, uint8 rank, uint32 dims[rank],
//     version <= 3: uint8 item size (4 float32, 2 int16, 1 int8), uint32 number of ITEMS
//     version >= 4: uint8 type id (DataType: 0 float32, 1 int8, 2 int16, 3 int32, 4 float16,
//                   5 bfloat16), uint32 number of BYTES
//     then the raw items, row-major
//   version >= 3: uint32 number of aliases, per alias: string alias, string variable name
//
// Scalars (rank 0) hold the spec's configuration from spec revision 3 on (num_heads as int16,
// pre_norm as int8, activation as int8, …). A quantized weight NAME (int8 or int16) comes with
// a float variable NAME_scale: int8 rows are value / scale[row], int16 is value / scale
// (model_spec.py LayerSpec._quantize); an alias also aliases NAME_scale (model.cc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// CTranslate2's DataType ids (include/ctranslate2/types.h), as binary version >= 4 stores them.
enum class Ct2Type : std::uint8_t { Float32 = 0, Int8 = 1, Int16 = 2, Int32 = 3, Float16 = 4, BFloat16 = 5 };

/// "float32", "int8", … or "type <id>" for an id outside the enum.
std::string ct2_type_name(Ct2Type type);

/// One variable of the file. `data` points into the Ct2File's buffer (valid while it lives,
/// not aligned: read with memcpy).
struct Ct2Variable {
  std::string name;
  std::vector<std::int64_t> shape;  ///< row-major; a Dense weight is [out, in]; empty = scalar
  Ct2Type type = Ct2Type::Float32;
  const std::uint8_t* data = nullptr;
  std::uint64_t bytes = 0;

  std::int64_t num_elements() const;
  /// "[96, 32]" or "[]" for a scalar.
  std::string shape_text() const;
};

/// The parsed model.bin. Move-only.
class Ct2File {
 public:
  /// Reads and parses `path`. Throws InputError ("FILE: …", one line) for a missing or
  /// unreadable file, a binary version outside 2…6 (a foreign file gives an absurd version,
  /// reported as not a CTranslate2 model.bin), a header or variable that runs past the end of
  /// the file (truncated: names the variable and the byte counts), a byte count that does not
  /// match the shape and type, an unknown type id, a duplicate name, an alias to a missing
  /// variable, or bytes left over after the last table.
  explicit Ct2File(const std::string& path);

  const std::string& path() const { return path_; }
  std::uint32_t binary_version() const { return binary_version_; }
  const std::string& spec_name() const { return spec_name_; }
  std::uint32_t spec_revision() const { return spec_revision_; }
  const std::vector<Ct2Variable>& variables() const { return variables_; }
  /// Alias name -> variable name (version >= 3).
  const std::map<std::string, std::string, std::less<>>& aliases() const { return aliases_; }

  /// The variable `name` or the one it aliases; nullptr when neither exists.
  const Ct2Variable* find(std::string_view name) const;
  /// As find; throws InputError "FILE: missing variable NAME (ROLE)" when absent.
  const Ct2Variable& variable(std::string_view name, std::string_view role) const;

  /// The variable as float32, [rows, cols] row-major, for a rank-2 variable (a Dense weight as
  /// stored, [out, in]). float16 and bfloat16 are widened exactly; int8 and int16 are divided by
  /// NAME_scale (per row for int8, one value for int16). Throws InputError naming the variable
  /// for another rank, an int32 variable, or a quantized one without its scale (or a scale of
  /// the wrong size).
  Matrix matrix(std::string_view name, std::string_view role) const;
  /// A rank-1 variable as float32 (decoded as matrix()).
  Vector vector(std::string_view name, std::string_view role) const;
  /// A scalar (rank 0, or a single element) of any type, as an integer: the spec's settings
  /// (num_heads, pre_norm, activation…). nullopt when absent; InputError when it is not a
  /// single element or not a whole number.
  std::optional<std::int64_t> integer(std::string_view name) const;

 private:
  std::vector<float> decode(const Ct2Variable& variable, std::int64_t rows) const;

  std::string path_;
  std::vector<std::uint8_t> bytes_;
  std::uint32_t binary_version_ = 0;
  std::string spec_name_;
  std::uint32_t spec_revision_ = 1;
  std::vector<Ct2Variable> variables_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::map<std::string, std::string, std::less<>> aliases_;
};

}  // namespace attnviz
