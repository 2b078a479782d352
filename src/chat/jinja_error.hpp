// What goes wrong in a chat template: a syntax the subset does not read, a construct it does not
// implement, or an error while rendering (raise_exception, a wrong type). Each carries the line
// and column in the template; chat_template turns it into an InputError naming the file.
#pragma once

#include <stdexcept>
#include <string>

namespace attnviz::jinja {

/// A fault at a place in the template: "line L, column C: DETAIL" once a file is named.
class TemplateError : public std::runtime_error {
 public:
  TemplateError(int at_line, int at_column, const std::string& detail)
      : std::runtime_error(detail), line(at_line), column(at_column) {}
  int line;
  int column;
};

/// The subset does not implement a construct the template uses ("the filter `wordwrap`").
inline TemplateError unsupported(int line, int column, const std::string& construct) {
  return TemplateError(line, column, construct + " is not supported by attnviz's chat-template subset");
}

}  // namespace attnviz::jinja
