// The filters, tests, string and mapping methods of the subset, each as Hugging Face's renderer
// (@huggingface/jinja) computes it: `trim` strips JavaScript whitespace, `tojson` writes Python's
// json.dumps separators, `sort` compares strings case-insensitively, and so on. Throws
// std::invalid_argument for a wrong operand or argument; the interpreter adds the line.
#pragma once

#include <string>

#include "chat/jinja_value.hpp"

namespace attnviz::jinja {

/// `operand | name(args)`.
Value apply_filter(const std::string& name, const Value& operand, const CallArgs& args);

/// `operand is name`; `argument` is the second operand of equalto/eq (selectattr's third
/// argument), or nullptr.
bool apply_test(const std::string& name, const Value& operand, const Value* argument = nullptr);

/// `object.name(args)` for the methods of strings (upper, strip, split, replace, startswith,
/// ...) and mappings (get, items, keys, values, dictsort).
Value call_method(const Value& object, const std::string& name, const CallArgs& args);

/// `object.name` when `object` is not a mapping holding `name`: a string's or list's `length`,
/// a method as a callable; undefined otherwise.
Value builtin_attribute(const Value& object, const std::string& name);

/// Python's list slice `items[start:stop:step]` (each may be absent), as HF computes it.
List slice_list(const List& items, const Value& start, const Value& stop, const Value& step);

/// Strict equality (`in`, `unique`, `equalto`): numbers by value, strings by content,
/// containers by identity.
bool strictly_equal(const Value& a, const Value& b);

/// JavaScript's String.prototype.trim / trimStart / trimEnd on UTF-8 text.
std::string trim_js(const std::string& text, bool start, bool end);

}  // namespace attnviz::jinja
