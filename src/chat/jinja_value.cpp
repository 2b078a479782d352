#include "chat/jinja_value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/utf8.hpp"

namespace attnviz::jinja {

const Value* Mapping::find(const std::string& key) const {
  for (const auto& [k, value] : entries) {
    if (k == key) return &value;
  }
  return nullptr;
}

Value* Mapping::find(const std::string& key) {
  for (auto& [k, value] : entries) {
    if (k == key) return &value;
  }
  return nullptr;
}

void Mapping::set(const std::string& key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
  } else {
    entries.emplace_back(key, std::move(value));
  }
}

Value Value::namespace_of(Mapping members) {
  Value value;
  value.v = std::make_shared<Namespace>(Namespace{std::move(members)});
  return value;
}

double Value::as_number() const {
  if (is_int()) return static_cast<double>(as_int());
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  return std::get<double>(v);
}

bool Value::truthy() const {
  if (is_undefined() || is_none()) return false;
  if (is_bool()) return as_bool();
  if (is_int()) return as_int() != 0;
  if (is_float()) return std::get<double>(v) != 0.0 && !std::isnan(std::get<double>(v));
  if (is_string()) return !as_string().empty();
  if (is_list()) return !as_list().empty();
  if (is_mapping()) return !as_mapping().entries.empty();
  return true;  // namespaces and callables
}

std::string Value::type_name() const {
  if (is_undefined()) return "undefined";
  if (is_none()) return "none";
  if (is_bool()) return "boolean";
  if (is_int()) return "integer";
  if (is_float()) return "float";
  if (is_string()) return "string";
  if (is_list()) return "list";
  if (is_mapping()) return "mapping";
  if (is_namespace()) return "namespace";
  return "callable";
}

const Value* CallArgs::get(std::size_t index, const std::string& name) const {
  if (index < positional.size()) return &positional[index];
  return keywords.find(name);
}

namespace {

// JavaScript's Number.prototype.toString: the shortest digits that read back the same double,
// in positional notation for 1e-7 < |x| < 1e21 and exponent notation ("1e+21") outside.
std::string js_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x < 0 ? "-Infinity" : "Infinity";
  if (x == 0) return "0";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::scientific);
  std::string sci(buffer, end);  // d.ddde[+-]XX
  const auto e_at = sci.find('e');
  const int exponent = std::stoi(sci.substr(e_at + 1));
  std::string mantissa = sci.substr(0, e_at);
  const bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out;
  const int n = static_cast<int>(digits.size());
  if (exponent >= 21 || exponent < -6) {
    out = digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    out += exponent < 0 ? "e-" : "e+";
    out += std::to_string(std::abs(exponent));
  } else if (exponent >= n - 1) {
    out = digits + std::string(static_cast<std::size_t>(exponent - (n - 1)), '0');
  } else if (exponent >= 0) {
    out = digits.substr(0, static_cast<std::size_t>(exponent + 1)) + "." +
          digits.substr(static_cast<std::size_t>(exponent + 1));
  } else {
    out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
  }
  return negative ? "-" + out : out;
}

std::string float_output(double x) {
  if (x == 0 && std::signbit(x)) return "-0.0";
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e21) {
    return js_number(x) + ".0";
  }
  return js_number(x);
}

// JSON.stringify of a string, optionally escaping every code unit from U+007F as \uXXXX.
std::string json_string(const std::string& text, bool ensure_ascii) {
  std::string out = "\"";
  char hex[16];  // "\\uXXXX" and its NUL; wider so that the compiler sees no truncation
  for (char32_t c : decode_utf8(text)) {
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      default: break;
    }
    if (c < 0x20) {
      std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(c));
      out += hex;
    } else if (ensure_ascii && c >= 0x7f) {
      auto unit = [&](unsigned u) {
        std::snprintf(hex, sizeof hex, "\\u%04x", u);
        out += hex;
      };
      if (c >= 0x10000) {
        const unsigned v = static_cast<unsigned>(c) - 0x10000;
        unit(0xD800 + (v >> 10));
        unit(0xDC00 + (v & 0x3FF));
      } else {
        unit(static_cast<unsigned>(c));
      }
    } else {
      out += encode_utf8(std::u32string(1, c));
    }
  }
  return out + "\"";
}

void write_json(const Value& value, const JsonStyle& style, int depth, std::string& out);

void write_members(const Mapping& map, const JsonStyle& style, int depth, std::string& out) {
  const std::string item_sep =
      !style.item_separator.empty() ? style.item_separator : (style.indent > 0 ? "," : ", ");
  const std::string pad = style.indent > 0 ? std::string(static_cast<std::size_t>(style.indent), ' ') : "";
  std::string base = "\n";
  for (int i = 0; i < depth; ++i) base += pad;
  const std::string child = base + pad;
  std::vector<const std::pair<std::string, Value>*> order;
  for (const auto& entry : map.entries) order.push_back(&entry);
  if (style.sort_keys) {
    std::stable_sort(order.begin(), order.end(),
                     [](const auto* a, const auto* b) { return a->first < b->first; });
  }
  out += '{';
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0) out += item_sep;
    if (style.indent > 0) out += child;
    out += json_string(order[i]->first, style.ensure_ascii) + style.key_separator;
    write_json(order[i]->second, style, depth + 1, out);
  }
  if (style.indent > 0 && !order.empty()) out += base;
  out += '}';
}

void write_json(const Value& value, const JsonStyle& style, int depth, std::string& out) {
  if (value.is_undefined()) {
    out += style.undefined_as_null ? "null" : "undefined";
  } else if (value.is_none()) {
    out += "null";
  } else if (value.is_bool()) {
    out += value.as_bool() ? "true" : "false";
  } else if (value.is_int()) {
    out += std::to_string(value.as_int());
  } else if (value.is_float()) {
    const double x = value.as_number();
    out += std::isfinite(x) ? js_number(x) : "null";
  } else if (value.is_string()) {
    out += json_string(value.as_string(), style.ensure_ascii);
  } else if (value.is_list()) {
    const std::string item_sep =
        !style.item_separator.empty() ? style.item_separator : (style.indent > 0 ? "," : ", ");
    const std::string pad = style.indent > 0 ? std::string(static_cast<std::size_t>(style.indent), ' ') : "";
    std::string base = "\n";
    for (int i = 0; i < depth; ++i) base += pad;
    const List& list = value.as_list();
    out += '[';
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i > 0) out += item_sep;
      if (style.indent > 0) out += base + pad;
      write_json(list[i], style, depth + 1, out);
    }
    if (style.indent > 0 && !list.empty()) out += base;
    out += ']';
  } else if (value.is_mapping()) {
    write_members(value.as_mapping(), style, depth, out);
  } else if (value.is_namespace()) {
    write_members(value.as_namespace(), style, depth, out);
  } else {
    throw std::invalid_argument("a callable cannot be written as JSON");
  }
}

Value from_json(const nlohmann::ordered_json& json) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return Value(Value::None{});
    case nlohmann::ordered_json::value_t::boolean: return Value(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned: return Value(json.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_float: {
      // JavaScript has one number type: a whole number in the JSON is an integer to the reference.
      const double x = json.get<double>();
      if (x == std::floor(x) && std::fabs(x) < 9007199254740992.0) return Value(static_cast<std::int64_t>(x));
      return Value(x);
    }
    case nlohmann::ordered_json::value_t::string: return Value(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List list;
      for (const auto& item : json) list.push_back(from_json(item));
      return Value(std::move(list));
    }
    case nlohmann::ordered_json::value_t::object: {
      Mapping map;
      for (const auto& [key, item] : json.items()) map.set(key, from_json(item));
      return Value(std::move(map));
    }
    default: return Value();
  }
}

}  // namespace

std::string to_output(const Value& value) {
  if (value.is_string()) return value.as_string();
  if (value.is_float()) return float_output(value.as_number());
  if (value.is_undefined()) return "undefined";
  if (value.is_none()) return "null";
  if (value.is_function()) return "[callable]";
  JsonStyle style;
  style.undefined_as_null = false;
  std::string out;
  write_json(value, style, 0, out);
  return out;
}

std::string to_json(const Value& value, const JsonStyle& style) {
  std::string out;
  write_json(value, style, 0, out);
  return out;
}

Value from_json_text(const std::string& json_text) {
  return from_json(nlohmann::ordered_json::parse(json_text));
}

bool loosely_equal(const Value& a, const Value& b) {
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    return a.as_number() == b.as_number();
  }
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  if (a.is_string() && (b.is_number() || b.is_bool())) return false;
  if (a.is_none() || a.is_undefined()) return b.is_none() || b.is_undefined();
  if (a.v.index() != b.v.index()) return false;
  if (a.is_list()) return &a.as_list() == &b.as_list();
  if (a.is_mapping()) return &a.as_mapping() == &b.as_mapping();
  if (a.is_namespace()) return &a.as_namespace() == &b.as_namespace();
  if (a.is_function()) return &a.as_function() == &b.as_function();
  return false;
}

}  // namespace attnviz::jinja
