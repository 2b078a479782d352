// Splits a chat template into tokens the way Hugging Face's renderer does: trim_blocks and
// lstrip_blocks on (as transformers sets them), one final newline dropped, `{%-`/`-%}`,
// `{{-`/`-}}` and `{#-`/`-#}` strip the whitespace beside them, `{% generation %}` tags vanish.
// Each token keeps the line and column of the template it came from, for error messages.
// Does not build the syntax tree (jinja_parser).
#pragma once

#include <string>
#include <vector>

namespace attnviz::jinja {

enum class TokenKind {
  Text,            ///< literal text between tags
  Comment,         ///< {# ... #}
  OpenStatement,   ///< {%
  CloseStatement,  ///< %}
  OpenExpression,  ///< {{
  CloseExpression, ///< }}
  Name,            ///< identifiers and keywords (if, in, not, ...)
  Integer,
  Float,
  String,          ///< a string literal, escapes resolved
  Operator,        ///< punctuation and operators: ( ) [ ] { } , . : | = + - ~ * / // % ** == != < > <= >=
};

struct Token {
  TokenKind kind;
  std::string text;  ///< the text, the name, the literal's value or the operator
  int line = 1;      ///< 1-based, in the template as written
  int column = 1;    ///< 1-based, in bytes
};

/// The tokens of `source`. Throws TemplateSyntax (jinja_error.hpp) for an unterminated string,
/// comment or tag, and for a character no token starts with.
std::vector<Token> tokenize(const std::string& source);

}  // namespace attnviz::jinja
