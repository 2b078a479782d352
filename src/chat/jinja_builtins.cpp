#include "chat/jinja_builtins.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "chat/jinja_integers.hpp"
#include "chat/jinja_limits.hpp"
#include "chat/jinja_parser.hpp"
#include "core/utf8.hpp"

namespace attnviz::jinja {
namespace {

using std::invalid_argument;

const std::set<std::string>& known_filters() {
  static const std::set<std::string> kFilters = {
      "abs",   "bool",   "capitalize", "default", "dictsort", "first",     "float",      "indent",
      "int",   "items",  "join",       "last",    "length",   "list",      "lower",      "map",
      "reject", "rejectattr", "replace", "select", "reverse", "safe", "selectattr", "sort", "string", "title",
      "tojson", "trim",  "unique",     "upper"};
  return kFilters;
}

const std::set<std::string>& known_tests() {
  static const std::set<std::string> kTests = {"boolean", "callable", "odd",      "even",    "false",
                                               "true",    "none",     "string",   "number",  "integer",
                                               "iterable", "mapping", "sequence", "lower",   "upper",
                                               "defined", "undefined", "equalto", "eq"};
  return kTests;
}

const std::set<std::string>& known_methods() {
  static const std::set<std::string> kMethods = {
      "upper", "lower", "strip", "title", "capitalize", "rstrip", "lstrip", "startswith", "endswith",
      "split", "replace", "get", "items", "keys", "values", "dictsort"};
  return kMethods;
}

bool js_space(char32_t c) {
  if (c <= 32) return c == 32 || (c >= 9 && c <= 13);
  return c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
         c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}

// Case mapping of ASCII letters only; other letters are left as they are.
std::string ascii_case(const std::string& text, bool upper) {
  std::string out = text;
  for (char& c : out) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// HF's title: the first word character after a non-word character is upper-cased; the rest stay.
std::string title_case(const std::string& text) {
  std::string out = text;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (is_word(out[i]) && (i == 0 || !is_word(out[i - 1])) && out[i] >= 'a' && out[i] <= 'z') {
      out[i] = static_cast<char>(out[i] - 'a' + 'A');
    }
  }
  return out;
}

std::string capitalize(const std::string& text) {
  if (text.empty()) return text;
  return ascii_case(text.substr(0, 1), true) + text.substr(1);
}

const std::string& need_string(const Value& value, const char* what) {
  if (!value.is_string()) throw invalid_argument(std::string(what) + " must be a string, got " + value.type_name());
  return value.as_string();
}

bool need_bool(const Value* value, bool fallback, const char* what) {
  if (value == nullptr) return fallback;
  if (!value->is_bool()) throw invalid_argument(std::string(what) + " must be a boolean, got " + value->type_name());
  return value->as_bool();
}

std::vector<std::string> split_on(const std::string& text, const std::string& sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at = text.find(sep); at != std::string::npos; at = text.find(sep, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + sep.size();
  }
  parts.push_back(text.substr(start));
  return parts;
}

Value split(const std::string& text, const CallArgs& args) {
  const Value* sep = args.get(0, "sep");
  const Value* max_value = args.get(1, "maxsplit");
  const std::int64_t maxsplit = max_value && max_value->is_int() ? max_value->as_int() : -1;
  List out;
  if (sep == nullptr || sep->is_none()) {
    const std::string rest = trim_js(text, true, false);
    std::size_t i = 0;
    while (i < rest.size()) {
      std::size_t j = i;
      while (j < rest.size() && !std::isspace(static_cast<unsigned char>(rest[j]))) ++j;
      if (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) >= maxsplit) {
        out.emplace_back(rest.substr(i));
        return Value(std::move(out));
      }
      out.emplace_back(rest.substr(i, j - i));
      i = j;
      while (i < rest.size() && std::isspace(static_cast<unsigned char>(rest[i]))) ++i;
    }
    return Value(std::move(out));
  }
  const std::string& separator = need_string(*sep, "split()'s separator");
  if (separator.empty()) throw invalid_argument("split() with an empty separator");
  std::vector<std::string> parts = split_on(text, separator);
  if (maxsplit >= 0 && static_cast<std::uint64_t>(parts.size()) - 1 > static_cast<std::uint64_t>(maxsplit)) {
    std::string tail = parts[static_cast<std::size_t>(maxsplit)];
    for (std::size_t k = static_cast<std::size_t>(maxsplit) + 1; k < parts.size(); ++k) tail += separator + parts[k];
    parts.resize(static_cast<std::size_t>(maxsplit));
    parts.push_back(tail);
  }
  for (auto& part : parts) out.emplace_back(std::move(part));
  return Value(std::move(out));
}

Value replace(const std::string& text, const CallArgs& args) {
  if (args.positional.size() < 2) throw invalid_argument("replace() needs two arguments");
  const std::string& from = need_string(args.positional[0], "replace()'s first argument");
  const std::string& to = need_string(args.positional[1], "replace()'s second argument");
  const Value* count_value = args.get(2, "count");
  std::int64_t count = -1;
  if (count_value && !count_value->is_none()) {
    if (!count_value->is_int()) throw invalid_argument("replace()'s count must be an integer");
    count = count_value->as_int();
  }
  if (from.empty()) {
    // Python inserts `to` before each character and at the end.
    const std::u32string cps = decode_utf8(text);
    std::string out;
    std::int64_t done = 0;
    for (char32_t c : cps) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      out += encode_utf8(std::u32string(1, c));
    }
    if (count < 0 || done < count) out += to;
    return Value(out);
  }
  std::string out;
  std::size_t start = 0;
  std::int64_t done = 0;
  for (std::size_t at = text.find(from); at != std::string::npos && (count < 0 || done < count);
       at = text.find(from, start)) {
    out += text.substr(start, at - start) + to;
    start = at + from.size();
    ++done;
  }
  return Value(out + text.substr(start));
}

bool starts_or_ends(const std::string& text, const Value& pattern, bool start, const char* name) {
  auto one = [&](const Value& p) {
    const std::string& s = need_string(p, name);
    if (s.size() > text.size()) return false;
    return start ? text.compare(0, s.size(), s) == 0 : text.compare(text.size() - s.size(), s.size(), s) == 0;
  };
  if (pattern.is_list()) {
    for (const Value& p : pattern.as_list()) {
      if (one(p)) return true;
    }
    return false;
  }
  return one(pattern);
}

// HF's ordering for sort and dictsort: numbers (and booleans) with numbers, strings with strings
// (case-insensitive unless asked), none with none; anything else cannot be compared.
int compare(const Value& a, const Value& b, bool case_sensitive) {
  if (a.is_none() && b.is_none()) return 0;
  if (a.is_undefined() && b.is_undefined()) return 0;
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    const double x = a.as_number(), y = b.as_number();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    const std::string x = case_sensitive ? a.as_string() : ascii_case(a.as_string(), false);
    const std::string y = case_sensitive ? b.as_string() : ascii_case(b.as_string(), false);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  throw invalid_argument("cannot compare " + a.type_name() + " with " + b.type_name());
}

// `item.a.b` or `item.0` for sort(attribute=...), map(attribute=...).
Value attribute_path(const Value& item, const std::string& path) {
  Value value = item;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (value.is_mapping() || value.is_namespace()) {
      const Value* found = (value.is_mapping() ? value.as_mapping() : value.as_namespace()).find(part);
      if (!found) return Value();
      value = *found;
    } else if (value.is_list()) {
      char* end = nullptr;
      const long index = std::strtol(part.c_str(), &end, 10);
      if (end == part.c_str() || index < 0 || static_cast<std::size_t>(index) >= value.as_list().size()) return Value();
      value = value.as_list()[static_cast<std::size_t>(index)];
    } else {
      return Value();
    }
    if (dot == std::string::npos) return value;
    start = dot + 1;
  }
}

Value dictsort(const Mapping& map, const CallArgs& args) {
  const bool case_sensitive = need_bool(args.get(0, "case_sensitive"), false, "case_sensitive");
  const Value* by_value = args.get(1, "by");
  const std::string by = by_value ? need_string(*by_value, "by") : "key";
  if (by != "key" && by != "value") throw invalid_argument("dictsort's by must be 'key' or 'value'");
  const bool reverse = need_bool(args.get(2, "reverse"), false, "reverse");
  List pairs;
  for (const auto& [key, value] : map.entries) pairs.emplace_back(List{Value(key), value});
  const std::size_t index = by == "key" ? 0 : 1;
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    const int c = compare(a.as_list()[index], b.as_list()[index], case_sensitive);
    return reverse ? c > 0 : c < 0;
  });
  return Value(std::move(pairs));
}

Value items_of(const Mapping& map) {
  List pairs;
  for (const auto& [key, value] : map.entries) pairs.emplace_back(List{Value(key), value});
  return Value(std::move(pairs));
}

Value tojson(const Value& operand, const CallArgs& args) {
  JsonStyle style;
  if (const Value* indent = args.keywords.find("indent"); indent && !indent->is_none()) {
    if (!indent->is_int()) throw invalid_argument("tojson's indent must be an integer");
    if (indent->as_int() > kMaxIndentWidth)
      throw invalid_argument("tojson's indent " + std::to_string(indent->as_int()) + " is more than attnviz writes (" +
                             std::to_string(kMaxIndentWidth) + ")");
    style.indent = static_cast<int>(std::max<std::int64_t>(indent->as_int(), -1));
  }
  style.ensure_ascii = need_bool(args.keywords.find("ensure_ascii"), false, "ensure_ascii");
  style.sort_keys = need_bool(args.keywords.find("sort_keys"), false, "sort_keys");
  if (const Value* separators = args.keywords.find("separators"); separators && !separators->is_none()) {
    if (!separators->is_list() || separators->as_list().size() != 2) {
      throw invalid_argument("tojson's separators must be two strings");
    }
    style.item_separator = need_string(separators->as_list()[0], "a separator");
    style.key_separator = need_string(separators->as_list()[1], "a separator");
    if (style.item_separator.empty()) style.item_separator = std::string();  // "" is allowed: no separator
  }
  if (style.indent == 0) style.indent = -1;
  return Value(to_json(operand, style));
}

Value indent(const std::string& text, const CallArgs& args) {
  const Value* width = args.get(0, "width");
  std::string pad = "    ";
  if (width) {
    if (width->is_string()) pad = width->as_string();
    else if (width->is_int() && width->as_int() > kMaxIndentWidth)
      throw invalid_argument("indent's width " + std::to_string(width->as_int()) + " is more than attnviz writes (" +
                             std::to_string(kMaxIndentWidth) + ")");
    else if (width->is_int()) pad = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, width->as_int())), ' ');
    else throw invalid_argument("indent's width must be an integer or a string");
  }
  const Value* first_value = args.get(1, "first");
  const Value* blank_value = args.get(2, "blank");
  const bool first = first_value && first_value->truthy();
  const bool blank = blank_value && blank_value->truthy();
  std::vector<std::string> lines = split_on(text, "\n");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    if ((!first && i == 0) || (!blank && lines[i].empty())) out += lines[i];
    else out += pad + lines[i];
  }
  return Value(out);
}

Value number_filter(const std::string& name, const Value& operand, const CallArgs& args) {
  const bool to_int = name == "int";
  const Value* fallback = args.get(0, "default");
  if (operand.is_string()) {
    const char* s = operand.as_string().c_str();
    while (*s && std::isspace(static_cast<unsigned char>(*s))) ++s;
    char* end = nullptr;
    if (to_int) {
      errno = 0;
      const long long v = std::strtoll(s, &end, 10);
      if (end == s) return fallback ? *fallback : Value(0);
      if (errno == ERANGE) throw invalid_argument("the filter `int`: \"" + operand.as_string() + "\" is beyond 64-bit integers");
      return Value(static_cast<std::int64_t>(v));
    }
    const double v = std::strtod(s, &end);
    if (end == s) return fallback ? *fallback : Value(0.0);
    return Value(v);
  }
  if (operand.is_number() || operand.is_bool()) {
    return to_int ? Value(integer_from_double(operand.as_number())) : Value(operand.as_number());
  }
  throw invalid_argument("cannot apply the filter `" + name + "` to a " + operand.type_name());
}

Value list_filter(const std::string& name, const List& list, const CallArgs& args) {
  if (name == "list") return Value(list);
  if (name == "first") return list.empty() ? Value() : list.front();
  if (name == "last") return list.empty() ? Value() : list.back();
  if (name == "length") return Value(static_cast<std::int64_t>(list.size()));
  if (name == "reverse") return Value(List(list.rbegin(), list.rend()));
  if (name == "string") return Value(to_output(Value(list)));
  if (name == "join") {
    const Value* sep = args.get(0, "separator");
    const std::string separator = sep ? need_string(*sep, "join's separator") : "";
    std::string out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i > 0) out += separator;
      out += list[i].is_string() ? list[i].as_string() : to_output(list[i]);
    }
    return Value(out);
  }
  if (name == "unique") {
    List out;
    for (const Value& item : list) {
      if (std::none_of(out.begin(), out.end(), [&](const Value& seen) { return strictly_equal(seen, item); })) {
        out.push_back(item);
      }
    }
    return Value(std::move(out));
  }
  if (name == "sort") {
    const bool reverse = need_bool(args.get(0, "reverse"), false, "reverse");
    const bool case_sensitive = need_bool(args.get(1, "case_sensitive"), false, "case_sensitive");
    const Value* attribute = args.get(2, "attribute");
    List out = list;
    std::stable_sort(out.begin(), out.end(), [&](const Value& a, const Value& b) {
      Value x = a, y = b;
      if (attribute && !attribute->is_none()) {
        const std::string path = attribute->is_int() ? std::to_string(attribute->as_int()) : need_string(*attribute, "attribute");
        x = attribute_path(a, path);
        y = attribute_path(b, path);
      }
      const int c = compare(x, y, case_sensitive);
      return reverse ? c > 0 : c < 0;
    });
    return Value(std::move(out));
  }
  if (name == "select" || name == "reject") {
    // Jinja's select/reject (HF's renderer has none): keep the items passing the test (or truthy).
    const std::string test = args.positional.empty() ? "" : need_string(args.positional[0], "the test");
    const Value* operand = args.positional.size() > 1 ? &args.positional[1] : nullptr;
    List out;
    for (const Value& item : list) {
      const bool passed = test.empty() ? item.truthy() : apply_test(test, item, operand);
      if (passed == (name == "select")) out.push_back(item);
    }
    return Value(std::move(out));
  }
  if (name == "selectattr" || name == "rejectattr") {
    const bool select = name == "selectattr";
    if (args.positional.empty()) throw invalid_argument(name + " needs an attribute name");
    const std::string& attribute = need_string(args.positional[0], "the attribute");
    const std::string test = args.positional.size() > 1 ? need_string(args.positional[1], "the test") : "";
    const Value* operand = args.positional.size() > 2 ? &args.positional[2] : nullptr;
    List out;
    for (const Value& item : list) {
      if (!item.is_mapping() && !item.is_namespace()) throw invalid_argument(name + " applies to a list of mappings");
      const Value* found = (item.is_mapping() ? item.as_mapping() : item.as_namespace()).find(attribute);
      const bool passed = found && (test.empty() ? found->truthy() : apply_test(test, *found, operand));
      if (passed == select) out.push_back(item);
    }
    return Value(std::move(out));
  }
  if (name == "map") {
    const Value* attribute = args.keywords.find("attribute");
    if (!attribute) throw invalid_argument("map without attribute= is not supported");
    const std::string& path = need_string(*attribute, "map's attribute");
    const Value* fallback = args.keywords.find("default");
    List out;
    for (const Value& item : list) {
      if (!item.is_mapping() && !item.is_namespace()) throw invalid_argument("map applies to a list of mappings");
      Value v = attribute_path(item, path);
      out.push_back(v.is_undefined() && fallback ? *fallback : v);
    }
    return Value(std::move(out));
  }
  throw invalid_argument("the filter `" + name + "` does not apply to a list");
}

Value string_filter(const std::string& name, const std::string& text, const CallArgs& args) {
  if (name == "length") return Value(static_cast<std::int64_t>(decode_utf8(text).size()));
  if (name == "upper" || name == "lower") return Value(ascii_case(text, name == "upper"));
  if (name == "title") return Value(title_case(text));
  if (name == "capitalize") return Value(capitalize(text));
  if (name == "trim") return Value(trim_js(text, true, true));
  if (name == "indent") return indent(text, args);
  if (name == "string") return Value(text);
  if (name == "replace") return replace(text, args);
  if (name == "join") {
    const Value* sep = args.get(0, "separator");
    const std::string separator = sep ? need_string(*sep, "join's separator") : "";
    std::string out;
    const std::u32string cps = decode_utf8(text);
    for (std::size_t i = 0; i < cps.size(); ++i) {
      if (i > 0) out += separator;
      out += encode_utf8(cps.substr(i, 1));
    }
    return Value(out);
  }
  throw invalid_argument("the filter `" + name + "` does not apply to a string");
}

}  // namespace

bool is_known_filter(const std::string& name) { return known_filters().count(name) > 0; }
bool is_known_test(const std::string& name) { return known_tests().count(name) > 0; }
bool is_known_method(const std::string& name) { return known_methods().count(name) > 0; }

std::string trim_js(const std::string& text, bool start, bool end) {
  const std::u32string cps = decode_utf8(text);
  std::size_t first = 0, last = cps.size();
  if (start) {
    while (first < last && js_space(cps[first])) ++first;
  }
  if (end) {
    while (last > first && js_space(cps[last - 1])) --last;
  }
  if (first == 0 && last == cps.size()) return text;
  return encode_utf8(cps.substr(first, last - first));
}

bool strictly_equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_number() == b.as_number();
  if (a.is_bool() && b.is_bool()) return a.as_bool() == b.as_bool();
  if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
  if (a.is_none() && b.is_none()) return true;
  if (a.is_undefined() && b.is_undefined()) return true;
  if (a.v.index() != b.v.index()) return false;
  return loosely_equal(a, b);
}

Value apply_filter(const std::string& name, const Value& operand, const CallArgs& args) {
  if (name == "safe") return operand;
  if (name == "tojson") return tojson(operand, args);
  if (name == "default") {
    const Value* fallback = args.get(0, "default_value");
    const bool boolean = need_bool(args.get(1, "boolean"), false, "boolean");
    if (operand.is_undefined() || (boolean && !operand.truthy())) return fallback ? *fallback : Value("");
    return operand;
  }
  if (name == "int" || name == "float") return number_filter(name, operand, args);
  if (operand.is_list()) return list_filter(name, operand.as_list(), args);
  if (operand.is_string()) return string_filter(name, operand.as_string(), args);
  if (operand.is_number()) {
    if (name == "abs") return operand.is_int() ? Value(operand.as_int() < 0 ? checked_negate(operand.as_int()) : operand.as_int())
                                               : Value(std::fabs(operand.as_number()));
    if (name == "string") return Value(to_output(operand));
  }
  if (operand.is_mapping()) {
    if (name == "items") return items_of(operand.as_mapping());
    if (name == "length") return Value(static_cast<std::int64_t>(operand.as_mapping().entries.size()));
    if (name == "dictsort") return dictsort(operand.as_mapping(), args);
  }
  if (operand.is_bool()) {
    if (name == "bool") return operand;
    if (name == "string") return Value(operand.as_bool() ? "true" : "false");
  }
  throw invalid_argument("the filter `" + name + "` does not apply to a " + operand.type_name());
}

bool apply_test(const std::string& name, const Value& operand, const Value* argument) {
  if (name == "defined") return !operand.is_undefined();
  if (name == "undefined") return operand.is_undefined();
  if (name == "none") return operand.is_none();
  if (name == "boolean") return operand.is_bool();
  if (name == "true") return operand.is_bool() && operand.as_bool();
  if (name == "false") return operand.is_bool() && !operand.as_bool();
  if (name == "string") return operand.is_string();
  if (name == "number") return operand.is_number();
  if (name == "integer") return operand.is_int();
  if (name == "iterable") return operand.is_list() || operand.is_string();
  if (name == "mapping") return operand.is_mapping();
  if (name == "sequence") return operand.is_list() || operand.is_mapping() || operand.is_string();
  if (name == "callable") return operand.is_function();
  if (name == "lower") return operand.is_string() && ascii_case(operand.as_string(), false) == operand.as_string();
  if (name == "upper") return operand.is_string() && ascii_case(operand.as_string(), true) == operand.as_string();
  if (name == "odd" || name == "even") {
    if (!operand.is_int()) throw invalid_argument("the test `" + name + "` needs an integer, got " + operand.type_name());
    return (operand.as_int() % 2 != 0) == (name == "odd");
  }
  if (name == "equalto" || name == "eq") return argument != nullptr && strictly_equal(operand, *argument);
  throw invalid_argument("unknown test `" + name + "`");
}

Value call_method(const Value& object, const std::string& name, const CallArgs& args) {
  if (object.is_string()) {
    const std::string& text = object.as_string();
    if (name == "upper" || name == "lower") return Value(ascii_case(text, name == "upper"));
    if (name == "strip") return Value(trim_js(text, true, true));
    if (name == "lstrip") return Value(trim_js(text, true, false));
    if (name == "rstrip") return Value(trim_js(text, false, true));
    if (name == "title") return Value(title_case(text));
    if (name == "capitalize") return Value(capitalize(text));
    if (name == "split") return split(text, args);
    if (name == "replace") return replace(text, args);
    if (name == "startswith" || name == "endswith") {
      if (args.positional.empty()) throw invalid_argument(name + "() needs an argument");
      return Value(starts_or_ends(text, args.positional[0], name == "startswith", name.c_str()));
    }
  }
  if (object.is_mapping()) {
    const Mapping& map = object.as_mapping();
    if (name == "get") {
      if (args.positional.empty()) throw invalid_argument("get() needs a key");
      const Value* found = map.find(need_string(args.positional[0], "a mapping's key"));
      if (found) return *found;
      return args.positional.size() > 1 ? args.positional[1] : Value(Value::None{});
    }
    if (name == "items") return items_of(map);
    if (name == "keys") {
      List keys;
      for (const auto& entry : map.entries) keys.emplace_back(entry.first);
      return Value(std::move(keys));
    }
    if (name == "values") {
      List values;
      for (const auto& entry : map.entries) values.push_back(entry.second);
      return Value(std::move(values));
    }
    if (name == "dictsort") return dictsort(map, args);
  }
  throw invalid_argument("a " + object.type_name() + " has no method `" + name + "()`");
}

Value builtin_attribute(const Value& object, const std::string& name) {
  if (name == "length" && object.is_string()) return Value(static_cast<std::int64_t>(decode_utf8(object.as_string()).size()));
  if (name == "length" && object.is_list()) return Value(static_cast<std::int64_t>(object.as_list().size()));
  if ((object.is_string() || object.is_mapping()) && is_known_method(name)) {
    Value self = object;
    return Value(Function([self, name](CallArgs& args) { return call_method(self, name, args); }));
  }
  return Value();
}

List slice_list(const List& items, const Value& start_value, const Value& stop_value, const Value& step_value) {
  auto need_int = [](const Value& v, const char* what) -> std::int64_t {
    if (!v.is_int()) throw invalid_argument(std::string("a slice's ") + what + " must be an integer, got " + v.type_name());
    return v.as_int();
  };
  const std::int64_t n = static_cast<std::int64_t>(items.size());
  const std::int64_t step = step_value.is_undefined() || step_value.is_none() ? 1 : need_int(step_value, "step");
  if (step == 0) throw invalid_argument("a slice's step cannot be zero");
  const bool has_start = !(start_value.is_undefined() || start_value.is_none());
  const bool has_stop = !(stop_value.is_undefined() || stop_value.is_none());
  std::int64_t start, stop;
  if (step > 0) {
    start = has_start ? need_int(start_value, "start") : 0;
    stop = has_stop ? need_int(stop_value, "stop") : n;
    start = start < 0 ? std::max<std::int64_t>(n + start, 0) : std::min(start, n);
    stop = stop < 0 ? std::max<std::int64_t>(n + stop, 0) : std::min(stop, n);
  } else {
    start = has_start ? need_int(start_value, "start") : n - 1;
    stop = has_stop ? need_int(stop_value, "stop") : -1;
    start = start < 0 ? std::max<std::int64_t>(n + start, -1) : std::min(start, n - 1);
    stop = stop < -1 ? std::max<std::int64_t>(n + stop, -1) : std::min(stop, n - 1);
  }
  List out;
  const std::uint64_t length = range_length(start, stop, step);  // i += step could overflow for a huge step
  for (std::uint64_t k = 0; k < length; ++k) out.push_back(items[static_cast<std::size_t>(range_item(start, step, k))]);
  return out;
}

}  // namespace attnviz::jinja
