// Parses a chat template into its syntax tree, with the grammar and precedence of Hugging Face's
// renderer (@huggingface/jinja). Refuses what the subset does not implement (include, extends,
// raw, unknown filters and tests, unknown methods) naming the construct and its line, so a
// template is refused before it renders anything. Does not evaluate (jinja_interpreter).
#pragma once

#include <string>
#include <vector>

#include "chat/jinja_ast.hpp"

namespace attnviz::jinja {

/// The statements of the template `source`. Throws TemplateError (jinja_error.hpp) with the
/// line and column of a syntax error or of an unsupported construct.
std::vector<NodePtr> parse_template(const std::string& source);

/// The filters, tests and methods the subset implements (jinja_builtins.cpp), for the parser's
/// refusals and the documentation.
bool is_known_filter(const std::string& name);
bool is_known_test(const std::string& name);
bool is_known_method(const std::string& name);

}  // namespace attnviz::jinja
