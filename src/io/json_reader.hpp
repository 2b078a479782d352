// Typed, validated reads from a JSON document: every value is checked (type, finiteness,
// float32 range, rectangular rows) and every failure names file, JSON pointer, expected and
// found. Does not know the schema's fields (input_schema and record_json do).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Root members the JSON fast path already read as matrices (io/fast_json.hpp).
using MatrixMembers = std::map<std::string, Matrix>;

/// A JSON document and the file it came from, for error messages.
struct JsonSource {
  const nlohmann::json& root;
  std::string file;
  MatrixMembers* matrices = nullptr;  ///< members absent from root, already matrices; may be null

  /// The member `key` of the root object, or nullptr when absent (or one of `matrices`).
  const nlohmann::json* find(const std::string& key) const;
  /// The member `key`; throws InputError::missing_field naming `what` when absent.
  const nlohmann::json& require(const std::string& key, const std::string& what) const;
  /// Whether the root object has the member `key` (in root or in matrices).
  bool has(const std::string& key) const;
  /// read_matrix of the member `key` (moved out of `matrices` when there); throws
  /// InputError::missing_field naming `missing` when absent. `what` as for read_matrix.
  Matrix take_matrix(const std::string& key, const std::string& missing, const std::string& what) const;
};

/// "a string \"ab\"", "null", "an array of 3 items", … — how a found value is described.
std::string describe_json(const nlohmann::json& value);

/// "FILE: ignoring POINTER/a, POINTER/b: not fields of WHAT" for the members of `object` that are
/// not in `known` (an object's members that no reader looks at are named, never dropped in
/// silence); "" when there are none or `object` is not an object.
std::string unknown_members_warning(const nlohmann::json& object, const std::string& file, const std::string& pointer,
                                    const std::set<std::string>& known, const std::string& what);

/// Requires the document root to be an object.
void require_object(const JsonSource& source);

/// What a JSON null means for a member read through JsonSettings.
enum class JsonNull {
  Refused,  ///< null is a wrong type: "expected a number, got null"
  Absent,   ///< null is how the file writes "not set" (Hugging Face's None): the fallback applies
};

/// Typed reads of a settings file's members (config.json, tokenizer.json) by JSON pointer, for
/// readers that walk a document of someone else's format. Every failure names the file, the
/// member's pointer and the value found; an absent member gives the fallback.
class JsonSettings {
 public:
  /// Throws InputError::bad_value unless `root` is an object. Keeps a reference to `root`.
  JsonSettings(const nlohmann::json& root, std::string file);
  const std::string& file() const { return file_; }

  /// The member at `pointer` ("/rope_scaling/factor"); nullptr when it is absent (a step through
  /// a value that is not an object counts as absent) or null with JsonNull::Absent.
  const nlohmann::json* find(const std::string& pointer, JsonNull null = JsonNull::Refused) const;
  double number(const std::string& pointer, double fallback, JsonNull null = JsonNull::Refused) const;
  bool flag(const std::string& pointer, bool fallback, JsonNull null = JsonNull::Refused) const;
  std::string text(const std::string& pointer, const std::string& fallback, JsonNull null = JsonNull::Refused) const;
  std::optional<std::string> optional_text(const std::string& pointer, JsonNull null = JsonNull::Refused) const;

  /// Marks the member at `pointer` as looked at without reading its value: a setting that has
  /// no effect given the others (Qwen's sliding_window while use_sliding_window is false), so
  /// that unread_members does not name it.
  void consider(const std::string& pointer) const { looked_at_.insert(pointer); }
  /// The pointers of the members no read (find, number, …, consider) looked at, in key
  /// order: each root member not in `harmless` that was never looked at ("/foo"), and, inside a
  /// root object the reader looked into (read "/rope_scaling/factor"), each of its members never
  /// looked at ("/rope_scaling/beta"). A member read whole ("/layer_types") counts as read.
  std::vector<std::string> unread_members(const std::set<std::string>& harmless) const;

 private:
  const nlohmann::json& root_;
  std::string file_;
  mutable std::set<std::string> looked_at_;  // every pointer find or consider was given
};

/// True when double `x` rounds to a finite float32: |x| below FLT_MAX plus half its last place
/// (2^128 − 2^103). "3.4028235e38", the shortest spelling of FLT_MAX (numpy's and attnviz's
/// own), is slightly above FLT_MAX as a double and rounds to it.
inline bool rounds_to_finite_float32(double x) { return std::fabs(x) < 0x1.ffffffp+127; }

/// A finite number that rounds to a finite float32. Throws InputError::bad_value otherwise.
Scalar read_scalar(const nlohmann::json& value, const std::string& file, const std::string& pointer);

/// A whole number (JSON integer literal) in [min, max].
long long read_integer(const nlohmann::json& value, const std::string& file,
                       const std::string& pointer, long long min, long long max);

/// A non-empty list of n rows, each a list of the same number (>= 1) of numbers.
/// `what` names the matrix in messages (e.g. "d_model x h·d_k").
Matrix read_matrix(const nlohmann::json& value, const std::string& file, const std::string& pointer,
                   const std::string& what);

/// A non-empty list of numbers.
Vector read_vector(const nlohmann::json& value, const std::string& file, const std::string& pointer);

/// A number as a double, for settings (no float32 rounding: an epsilon of 1e-6 stays 1e-6).
/// JSON numbers are finite (json_file refuses an overflowing one).
double read_double(const nlohmann::json& value, const std::string& file, const std::string& pointer);

/// A string (UTF-8 already validated by the parser).
std::string read_string(const nlohmann::json& value, const std::string& file, const std::string& pointer);

/// true or false.
bool read_bool(const nlohmann::json& value, const std::string& file, const std::string& pointer);

/// A list of strings (UTF-8 already validated by the parser).
Tokens read_strings(const nlohmann::json& value, const std::string& file, const std::string& pointer);

/// A list of 0/1 values (integers 0 or 1, or booleans).
std::vector<std::uint8_t> read_mask(const nlohmann::json& value, const std::string& file,
                                    const std::string& pointer);

/// Throws InputError::shape_mismatch unless m is rows × cols; `meaning` names the dimensions,
/// e.g. "d_model x h·d_k". The one place every matrix shape is checked and worded.
void require_shape(const Matrix& m, long rows, long cols, const std::string& file,
                   const std::string& pointer, const std::string& meaning);

}  // namespace attnviz
