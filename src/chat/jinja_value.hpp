// The values a chat template computes with: undefined, none, booleans, integers, floats, strings,
// lists, mappings (insertion-ordered, like Python's dict), namespaces and callables. Their printing
// and truth follow Hugging Face's renderer (@huggingface/jinja), the reference chat templates are
// checked against: `{{ true }}` prints "true", a list prints as JSON, a float 1.0 as "1.0".
// Does not parse or evaluate templates (jinja_parser, jinja_interpreter do).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace attnviz::jinja {

struct Value;
struct CallArgs;

/// A list (Python list or tuple); shared, so `{% set a = b %}` aliases as in Jinja.
using List = std::vector<Value>;

/// A mapping with string keys in insertion order (what a JSON object or `{...}` literal gives).
struct Mapping {
  std::vector<std::pair<std::string, Value>> entries;
  /// The value of `key`, or nullptr.
  const Value* find(const std::string& key) const;
  Value* find(const std::string& key);
  /// Sets `key` (replacing its value in place, or appending it).
  void set(const std::string& key, Value value);
};

/// A callable: a macro, `namespace`, `range`, a bound method. Throws attnviz::jinja::RenderError.
using Function = std::function<Value(CallArgs&)>;

/// One template value. Lists, mappings and namespaces are shared by reference (as in Python).
struct Value {
  struct Undefined {};
  struct None {};
  struct Namespace {
    Mapping members;
  };
  using Storage = std::variant<Undefined, None, bool, std::int64_t, double, std::string,
                               std::shared_ptr<List>, std::shared_ptr<Mapping>,
                               std::shared_ptr<Namespace>, std::shared_ptr<Function>>;
  Storage v;

  Value() = default;
  Value(None) : v(None{}) {}
  Value(bool b) : v(b) {}
  Value(std::int64_t i) : v(i) {}
  Value(int i) : v(static_cast<std::int64_t>(i)) {}
  Value(double d) : v(d) {}
  Value(std::string s) : v(std::move(s)) {}
  Value(const char* s) : v(std::string(s)) {}
  Value(List list) : v(std::make_shared<List>(std::move(list))) {}
  Value(Mapping map) : v(std::make_shared<Mapping>(std::move(map))) {}
  Value(Function f) : v(std::make_shared<Function>(std::move(f))) {}
  static Value namespace_of(Mapping members);

  bool is_undefined() const { return std::holds_alternative<Undefined>(v); }
  bool is_none() const { return std::holds_alternative<None>(v); }
  bool is_bool() const { return std::holds_alternative<bool>(v); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v); }
  bool is_float() const { return std::holds_alternative<double>(v); }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return std::holds_alternative<std::string>(v); }
  bool is_list() const { return std::holds_alternative<std::shared_ptr<List>>(v); }
  bool is_mapping() const { return std::holds_alternative<std::shared_ptr<Mapping>>(v); }
  bool is_namespace() const { return std::holds_alternative<std::shared_ptr<Namespace>>(v); }
  bool is_function() const { return std::holds_alternative<std::shared_ptr<Function>>(v); }

  bool as_bool() const { return std::get<bool>(v); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v); }
  /// An integer, float or boolean as a double.
  double as_number() const;
  const std::string& as_string() const { return std::get<std::string>(v); }
  List& as_list() const { return *std::get<std::shared_ptr<List>>(v); }
  Mapping& as_mapping() const { return *std::get<std::shared_ptr<Mapping>>(v); }
  Mapping& as_namespace() const { return std::get<std::shared_ptr<Namespace>>(v)->members; }
  const Function& as_function() const { return *std::get<std::shared_ptr<Function>>(v); }

  /// Jinja truth: empty strings, lists and mappings, 0, none and undefined are false.
  bool truthy() const;
  /// The type's name in messages ("string", "list", "mapping", ...).
  std::string type_name() const;
};

/// Keyword arguments of one call, in the order written.
struct CallArgs {
  List positional;
  Mapping keywords;
  std::shared_ptr<Value> caller;  ///< the body of `{% call %}`, for the macro it calls
  /// The positional argument `index`, else the keyword `name`, else nullptr.
  const Value* get(std::size_t index, const std::string& name) const;
};

/// What `{{ value }}` writes: strings as they are, undefined and none as nothing is handled by
/// the caller; booleans "true"/"false", integers in decimal, floats as JavaScript prints them
/// (with ".0" when whole), lists, mappings and namespaces as JSON (strings quoted).
std::string to_output(const Value& value);

/// How `tojson` writes `value` (Python json.dumps' separators: ", " and ": ", or "," with
/// `indent`); `undefined_as_null` false makes undefined print as "undefined" (to_output's lists).
struct JsonStyle {
  int indent = -1;  ///< -1: one line
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::string item_separator;  ///< empty: the default for `indent`
  std::string key_separator = ": ";
  bool undefined_as_null = true;
};
std::string to_json(const Value& value, const JsonStyle& style);

/// A JSON document as a template value (objects keep their key order).
Value from_json_text(const std::string& json_text);

/// Equality as @huggingface/jinja's `==` computes it: numbers and booleans by value (true == 1),
/// strings by content, lists/mappings/namespaces by identity, none == none, undefined == undefined.
bool loosely_equal(const Value& a, const Value& b);

}  // namespace attnviz::jinja
