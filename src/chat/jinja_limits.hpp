// The bounds a chat template is parsed and rendered within. A template is input (a GGUF's
// metadata, a folder's tokenizer_config.json): one that nests without end, or asks for a
// billion numbers, must end in a TemplateError naming its line, not in a stack overflow or
// an exhausted machine. Real templates stay far inside: the deepest in tests/data/chat-templates
// nests 9 levels.
#pragma once

#include <cstdint>

namespace attnviz::jinja {

/// Parentheses, brackets, braces and statement blocks open at once while parsing. CPython's
/// own parser stops at 200 nested parentheses (Parser/tokenizer.h MAXLEVEL), and jinja2's
/// compiled templates are Python.
inline constexpr int kMaxParseNesting = 200;

/// Expressions and statements being evaluated at once (a macro calling itself counts each
/// call): Python's default recursion limit is 1000 frames, and jinja2 raises RecursionError
/// around there.
inline constexpr int kMaxRenderNesting = 1000;

/// Items one range() may make, and spaces one indent width or tojson indent may be.
inline constexpr std::int64_t kMaxRangeItems = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxIndentWidth = std::int64_t{1} << 16;

/// One more level in `depth` for its lifetime. The parser and the interpreter check the depth
/// against their limit before making one (and throw at their own place).
class NestingLevel {
 public:
  explicit NestingLevel(int& depth) : depth_(depth) { ++depth_; }
  ~NestingLevel() { --depth_; }
  NestingLevel(const NestingLevel&) = delete;
  NestingLevel& operator=(const NestingLevel&) = delete;

 private:
  int& depth_;
};

}  // namespace attnviz::jinja
