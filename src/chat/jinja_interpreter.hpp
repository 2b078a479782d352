// Renders a parsed chat template with Hugging Face's semantics (@huggingface/jinja): scopes
// (a for loop's body and a macro's body get their own; `if` does not), `loop.index` and friends,
// namespace(), macros and call blocks, break/continue, and the globals raise_exception, range,
// strftime_now, namespace, true/false/none (and True/False/None).
// Does not know what chat messages are (chat_template).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "chat/jinja_ast.hpp"
#include "chat/jinja_value.hpp"

namespace attnviz::jinja {

/// The strftime_now clock: formats the current local time with a strftime-like pattern (%Y %m
/// %d %b %B %H %M %%, as HF implements it). Tests pass a fixed clock.
using Clock = std::function<std::string(const std::string& pattern)>;

/// The system clock's local time, with English month names.
Clock system_clock();

/// The text `program` renders with the variables `context` (a mapping) in its global scope.
/// Throws TemplateError (jinja_error.hpp) with the line of the failing node: raise_exception's
/// message, a wrong operand type, an undefined callable, a loop over a non-list.
std::string render(const std::vector<NodePtr>& program, const Mapping& context, const Clock& clock);

}  // namespace attnviz::jinja
