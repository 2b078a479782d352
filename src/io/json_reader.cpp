#include "io/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace attnviz {

using nlohmann::json;

namespace {

std::string item_pointer(const std::string& pointer, std::size_t index) {
  return pointer + "/" + std::to_string(index);
}

const json& require_array(const json& value, const std::string& file, const std::string& pointer,
                          const std::string& expected) {
  if (!value.is_array()) throw InputError::bad_value(file, pointer, expected, describe_json(value));
  if (value.empty()) throw InputError::bad_value(file, pointer, expected, "an empty array");
  return value;
}

// read_scalar for item `index` of an array, building its JSON pointer only for an error
// message: a string per number costs more than the number's parse.
Scalar read_element(const json& value, const std::string& file, const std::string& array_pointer,
                    std::size_t index) {
  if (value.is_number_float()) {
    const double number = value.get_ref<const json::number_float_t&>();
    if (rounds_to_finite_float32(number)) return static_cast<Scalar>(number);
  }
  return read_scalar(value, file, item_pointer(array_pointer, index));
}

}  // namespace

const json* JsonSource::find(const std::string& key) const {
  const auto it = root.find(key);
  return it == root.end() ? nullptr : &*it;
}

const json& JsonSource::require(const std::string& key, const std::string& what) const {
  const json* value = find(key);
  if (value == nullptr) throw InputError::missing_field(file, "/" + key, what);
  return *value;
}

bool JsonSource::has(const std::string& key) const {
  return find(key) != nullptr || (matrices != nullptr && matrices->count(key) != 0);
}

Matrix JsonSource::take_matrix(const std::string& key, const std::string& missing, const std::string& what) const {
  if (matrices != nullptr) {
    if (const auto it = matrices->find(key); it != matrices->end()) {
      Matrix m = std::move(it->second);
      matrices->erase(it);  // a second read of the member then fails and load_inputs retries
      return m;
    }
  }
  return read_matrix(require(key, missing), file, "/" + key, what);
}

std::string describe_json(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::string: {
      std::string text = value.get<std::string>();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return "a string \"" + text + "\"";
    }
    case json::value_t::array:
      return "an array of " + std::to_string(value.size()) + (value.size() == 1 ? " item" : " items");
    case json::value_t::object: return "an object";
    case json::value_t::number_float: return "the number " + value.dump();
    default: return "the integer " + value.dump();
  }
}

std::string unknown_members_warning(const json& object, const std::string& file, const std::string& pointer,
                                    const std::set<std::string>& known, const std::string& what) {
  if (!object.is_object()) return {};
  std::string names;
  std::size_t count = 0;
  for (const auto& [key, value] : object.items()) {
    if (known.count(key) != 0) continue;
    names += (names.empty() ? "" : ", ") + pointer + "/" + key;
    ++count;
  }
  if (count == 0) return {};
  return file + ": ignoring " + names + ": not " + (count == 1 ? "a field" : "fields") + " of " + what;
}

void require_object(const JsonSource& source) {
  if (!source.root.is_object()) {
    throw InputError::bad_value(source.file, "", "a JSON object", describe_json(source.root));
  }
}

JsonSettings::JsonSettings(const json& root, std::string file) : root_(root), file_(std::move(file)) {
  require_object(JsonSource{root_, file_});
}

const json* JsonSettings::find(const std::string& pointer, JsonNull null) const {
  // nlohmann's JSON pointer (RFC 6901): a step through a value that is not a container, a
  // missing key or an index out of range is "not contained", i.e. absent.
  const json::json_pointer path(pointer);
  looked_at_.insert(pointer);
  if (!root_.contains(path)) return nullptr;
  const json& at = root_.at(path);
  return at.is_null() && null == JsonNull::Absent ? nullptr : &at;
}

namespace {
// `key` as one JSON pointer reference token (RFC 6901: "~" as "~0", "/" as "~1").
std::string pointer_token(const std::string& key) {
  std::string token;
  for (const char c : key) token += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return token;
}
}  // namespace

std::vector<std::string> JsonSettings::unread_members(const std::set<std::string>& harmless) const {
  // Whether `pointer` itself was looked at, and whether a pointer below it was.
  const auto read = [this](const std::string& pointer) { return looked_at_.count(pointer) > 0; };
  const auto read_below = [this](const std::string& pointer) {
    const auto it = looked_at_.lower_bound(pointer + "/");
    return it != looked_at_.end() && it->compare(0, pointer.size() + 1, pointer + "/") == 0;
  };
  std::vector<std::string> unread;
  for (const auto& [key, value] : root_.items()) {
    const std::string pointer = "/" + pointer_token(key);
    if (harmless.count(key)) continue;
    if (read_below(pointer) && value.is_object()) {
      for (const auto& [member, inner] : value.items()) {
        const std::string below = pointer + "/" + pointer_token(member);
        if (!read(below) && !read_below(below)) unread.push_back(below);
      }
    } else if (!read(pointer) && !read_below(pointer)) {
      unread.push_back(pointer);
    }
  }
  return unread;
}

double JsonSettings::number(const std::string& pointer, double fallback, JsonNull null) const {
  const json* value = find(pointer, null);
  return value ? read_double(*value, file_, pointer) : fallback;
}

bool JsonSettings::flag(const std::string& pointer, bool fallback, JsonNull null) const {
  const json* value = find(pointer, null);
  return value ? read_bool(*value, file_, pointer) : fallback;
}

std::string JsonSettings::text(const std::string& pointer, const std::string& fallback, JsonNull null) const {
  const json* value = find(pointer, null);
  return value ? read_string(*value, file_, pointer) : fallback;
}

std::optional<std::string> JsonSettings::optional_text(const std::string& pointer, JsonNull null) const {
  const json* value = find(pointer, null);
  return value ? std::optional<std::string>(read_string(*value, file_, pointer)) : std::nullopt;
}

Scalar read_scalar(const json& value, const std::string& file, const std::string& pointer) {
  if (!value.is_number()) throw InputError::bad_value(file, pointer, "a number", describe_json(value));
  const double number = value.get<double>();
  if (!std::isfinite(number) || !rounds_to_finite_float32(number)) {
    throw InputError::bad_value(file, pointer, "a finite number within float32 range (|x| <= 3.4e38)",
                                value.dump());
  }
  return static_cast<Scalar>(number);
}

double read_double(const json& value, const std::string& file, const std::string& pointer) {
  if (!value.is_number()) throw InputError::bad_value(file, pointer, "a number", describe_json(value));
  return value.get<double>();
}

std::string read_string(const json& value, const std::string& file, const std::string& pointer) {
  if (!value.is_string()) throw InputError::bad_value(file, pointer, "a string", describe_json(value));
  return value.get<std::string>();
}

bool read_bool(const json& value, const std::string& file, const std::string& pointer) {
  if (!value.is_boolean()) throw InputError::bad_value(file, pointer, "true or false", describe_json(value));
  return value.get<bool>();
}

long long read_integer(const json& value, const std::string& file, const std::string& pointer,
                       long long min, long long max) {
  const std::string expected =
      "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!value.is_number_integer()) throw InputError::bad_value(file, pointer, expected, describe_json(value));
  long long number = 0;
  if (value.is_number_unsigned()) {
    const auto unsigned_number = value.get<unsigned long long>();
    if (unsigned_number > static_cast<unsigned long long>(max)) {
      throw InputError::bad_value(file, pointer, expected, value.dump());
    }
    number = static_cast<long long>(unsigned_number);
  } else {
    number = value.get<long long>();
  }
  if (number < min || number > max) throw InputError::bad_value(file, pointer, expected, value.dump());
  return number;
}

Matrix read_matrix(const json& value, const std::string& file, const std::string& pointer,
                   const std::string& what) {
  const std::string expected = "a matrix (" + what + ") as a list of rows of numbers";
  require_array(value, file, pointer, expected);
  const json& first = value.front();
  if (!first.is_array()) {
    throw InputError::bad_value(file, item_pointer(pointer, 0), "a row (a list of numbers) of " + expected,
                                describe_json(first));
  }
  const std::size_t n_cols = first.size();
  if (n_cols == 0) throw InputError::bad_value(file, item_pointer(pointer, 0), "a non-empty row", "an empty array");
  Matrix m(static_cast<Eigen::Index>(value.size()), static_cast<Eigen::Index>(n_cols));
  for (std::size_t r = 0; r < value.size(); ++r) {
    const json& row = value[r];
    const std::string row_pointer = item_pointer(pointer, r);
    if (!row.is_array()) {
      throw InputError::bad_value(file, row_pointer, "a row of " + std::to_string(n_cols) + " numbers",
                                  describe_json(row));
    }
    if (row.size() != n_cols) {
      throw InputError::bad_value(file, row_pointer,
                                  std::to_string(n_cols) + " numbers (as in row 0; rows must all be the same length)",
                                  std::to_string(row.size()) + " numbers");
    }
    for (std::size_t c = 0; c < n_cols; ++c) {
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = read_element(row[c], file, row_pointer, c);
    }
  }
  return m;
}

Vector read_vector(const json& value, const std::string& file, const std::string& pointer) {
  require_array(value, file, pointer, "a list of numbers");
  Vector v(static_cast<Eigen::Index>(value.size()));
  for (std::size_t i = 0; i < value.size(); ++i) {
    v(static_cast<Eigen::Index>(i)) = read_element(value[i], file, pointer, i);
  }
  return v;
}

Tokens read_strings(const json& value, const std::string& file, const std::string& pointer) {
  if (!value.is_array()) throw InputError::bad_value(file, pointer, "a list of strings", describe_json(value));
  if (value.empty()) throw InputError::bad_value(file, pointer, "at least one token", "no tokens (an empty array)");
  Tokens tokens;
  tokens.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      throw InputError::bad_value(file, item_pointer(pointer, i), "a string", describe_json(value[i]));
    }
    tokens.push_back(value[i].get<std::string>());
  }
  return tokens;
}

std::vector<std::uint8_t> read_mask(const json& value, const std::string& file, const std::string& pointer) {
  const std::string expected = "0 or 1 (1 = real token, 0 = padding)";
  if (!value.is_array()) throw InputError::bad_value(file, pointer, "a list of 0/1 values", describe_json(value));
  std::vector<std::uint8_t> mask;
  mask.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const json& item = value[i];
    if (item.is_boolean()) {
      mask.push_back(item.get<bool>() ? 1 : 0);
    } else if (item.is_number_integer() && (item == 0 || item == 1)) {
      mask.push_back(item.get<int>() == 1 ? 1 : 0);
    } else {
      throw InputError::bad_value(file, item_pointer(pointer, i), expected, describe_json(item));
    }
  }
  return mask;
}

void require_shape(const Matrix& m, long rows, long cols, const std::string& file,
                   const std::string& pointer, const std::string& meaning) {
  if (m.rows() == rows && m.cols() == cols) return;
  throw InputError::shape_mismatch(file, pointer, shape_string(rows, cols) + " (" + meaning + ")",
                                   shape_string(m.rows(), m.cols()));
}

}  // namespace attnviz
