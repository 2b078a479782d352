// The syntax tree of a chat template: one Node type whose kind says which fields it uses.
// Built by jinja_parser, walked by jinja_interpreter; holds no behaviour.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "chat/jinja_value.hpp"

namespace attnviz::jinja {

enum class NodeKind {
  // statements
  Text,         ///< name: the text
  Output,       ///< {{ a }}
  If,           ///< if a: body, else: orelse (an elif is an If alone in orelse)
  For,          ///< for target(a) in iterable(b) [if c]: body, else: orelse
  Set,          ///< set target(a) = b, or set target(a) + body (block set)
  Macro,        ///< macro name(params: items, each Name or Keyword): body
  CallBlock,    ///< call(params: items) a(...): body becomes caller()
  FilterBlock,  ///< filter a (a Filter node without operand): body
  Break,
  Continue,
  // expressions
  Literal,      ///< value
  Name,         ///< name
  ListLiteral,  ///< items
  TupleLiteral, ///< items
  DictLiteral,  ///< items: key, value, key, value, ...
  Attribute,    ///< a.name
  Index,        ///< a[b]
  Slice,        ///< a[b:c:d] (b, c, d may be null)
  Call,         ///< a(items); keyword arguments are Keyword nodes
  Keyword,      ///< name=a (in calls and macro parameters)
  Filter,       ///< a | name(items)
  Test,         ///< a is [not] name
  Unary,        ///< op a (not, -, +)
  Binary,       ///< a op b
  Ternary,      ///< b if a else c
  Select,       ///< b if a (no else: undefined when a is false)
};

struct Node;
using NodePtr = std::shared_ptr<Node>;

struct Node {
  NodeKind kind;
  int line = 0;
  int column = 0;
  std::string name;  ///< identifier, attribute, filter, test, macro name or text
  std::string op;    ///< operator of Unary and Binary ("not in" is one operator)
  bool negate = false;
  Value value;       ///< Literal's value
  NodePtr a, b, c, d;
  std::vector<NodePtr> items;
  std::vector<NodePtr> body;
  std::vector<NodePtr> orelse;
};

}  // namespace attnviz::jinja
