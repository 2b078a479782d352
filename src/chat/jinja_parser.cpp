#include "chat/jinja_parser.hpp"

#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "chat/jinja_error.hpp"
#include "chat/jinja_lexer.hpp"
#include "chat/jinja_limits.hpp"

namespace attnviz::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  std::vector<NodePtr> run() {
    std::vector<NodePtr> body;
    while (pos_ < t_.size()) {
      if (NodePtr node = any()) body.push_back(node);
    }
    return body;
  }

 private:
  // One more bracket, parenthesis, prefix operator or statement block open for the level's
  // lifetime: past kMaxParseNesting a TemplateError at the token, before the parser's recursion
  // runs the stack out.
  NestingLevel nested() {
    if (depth_ >= kMaxParseNesting)
      throw error_here("brackets, operators and blocks nested more than " + std::to_string(kMaxParseNesting) + " deep");
    return NestingLevel(depth_);
  }

  // ---- token helpers
  const Token& peek(std::size_t ahead = 0) const {
    if (pos_ + ahead >= t_.size()) {
      static const Token kEnd{TokenKind::Text, "", 0, 0};
      return t_.empty() ? kEnd : t_.back();
    }
    return t_[pos_ + ahead];
  }
  bool at_end() const { return pos_ >= t_.size(); }
  bool is_op(const char* text, std::size_t ahead = 0) const {
    return pos_ + ahead < t_.size() && peek(ahead).kind == TokenKind::Operator && peek(ahead).text == text;
  }
  bool is_name(const char* text, std::size_t ahead = 0) const {
    return pos_ + ahead < t_.size() && peek(ahead).kind == TokenKind::Name && peek(ahead).text == text;
  }
  bool is_kind(TokenKind kind) const { return !at_end() && peek().kind == kind; }
  TemplateError error_here(const std::string& detail) const {
    const Token& token = peek();
    return TemplateError(token.line, token.column, detail);
  }
  std::string describe(const Token& token) const {
    switch (token.kind) {
      case TokenKind::CloseStatement: return "'%}'";
      case TokenKind::CloseExpression: return "'}}'";
      case TokenKind::OpenStatement: return "'{%'";
      case TokenKind::OpenExpression: return "'{{'";
      case TokenKind::String: return "a string";
      case TokenKind::Text: return "text";
      default: return "'" + token.text + "'";
    }
  }
  const Token& take() {
    if (at_end()) throw error_here("the template ends inside a tag");
    return t_[pos_++];
  }
  void expect_op(const char* text) {
    if (!is_op(text)) throw error_here(std::string("expected '") + text + "', got " + describe(peek()));
    ++pos_;
  }
  void expect(TokenKind kind, const char* what) {
    if (!is_kind(kind)) throw error_here(std::string("expected ") + what + ", got " + describe(peek()));
    ++pos_;
  }
  std::string expect_name(const char* what) {
    if (!is_kind(TokenKind::Name)) throw error_here(std::string("expected ") + what + ", got " + describe(peek()));
    return take().text;
  }
  NodePtr node(NodeKind kind, const Token& at) const {
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->line = at.line;
    n->column = at.column;
    return n;
  }

  // ---- statements
  NodePtr any() {
    const Token& token = take();
    switch (token.kind) {
      case TokenKind::Text: {
        NodePtr text = node(NodeKind::Text, token);
        text->name = token.text;
        return text;
      }
      case TokenKind::Comment: return nullptr;
      case TokenKind::OpenStatement: return statement(token);
      case TokenKind::OpenExpression: {
        NodePtr out = node(NodeKind::Output, token);
        out->a = expression();
        expect(TokenKind::CloseExpression, "'}}'");
        return out;
      }
      default:
        throw TemplateError(token.line, token.column, "unexpected " + describe(token) + " outside a tag");
    }
  }

  // Does `{% NAME` follow (one of the names)?
  bool at_statement(std::initializer_list<const char*> names) const {
    if (!is_kind(TokenKind::OpenStatement) || pos_ + 1 >= t_.size() || peek(1).kind != TokenKind::Name) return false;
    for (const char* name : names) {
      if (peek(1).text == name) return true;
    }
    return false;
  }

  // Statements up to one of `ends` (`{% end... %}`), which is left unread.
  std::vector<NodePtr> block(std::initializer_list<const char*> ends, const Token& opener, const char* what) {
    std::vector<NodePtr> body;
    while (!at_statement(ends)) {
      if (at_end()) {
        throw TemplateError(opener.line, opener.column, std::string("`{% ") + what + " %}` is never closed");
      }
      if (NodePtr n = any()) body.push_back(n);
    }
    return body;
  }

  void end_statement(const char* name) {
    expect(TokenKind::OpenStatement, "'{%'");
    if (expect_name(name) != name) throw error_here(std::string("expected ") + name);
    expect(TokenKind::CloseStatement, "'%}'");
  }

  NodePtr statement(const Token& open) {
    const NestingLevel level = nested();
    const Token& keyword = peek();
    if (keyword.kind != TokenKind::Name) throw error_here("expected a statement name after '{%', got " + describe(keyword));
    const std::string name = take().text;
    if (name == "set") return set_statement(keyword);
    if (name == "if") return if_statement(keyword);
    if (name == "for") return for_statement(keyword);
    if (name == "macro") return macro_statement(keyword);
    if (name == "call") return call_statement(keyword);
    if (name == "filter") return filter_statement(keyword);
    if (name == "break" || name == "continue") {
      expect(TokenKind::CloseStatement, "'%}'");
      return node(name == "break" ? NodeKind::Break : NodeKind::Continue, keyword);
    }
    static const char* const kEnds[] = {"endif", "elif", "else", "endfor", "endset", "endmacro", "endcall",
                                        "endfilter"};
    for (const char* end : kEnds) {
      if (name == end) throw TemplateError(keyword.line, keyword.column, "`{% " + name + " %}` without its opening statement");
    }
    (void)open;
    throw unsupported(keyword.line, keyword.column, "the statement `{% " + name + " %}`");
  }

  NodePtr set_statement(const Token& keyword) {
    NodePtr set = node(NodeKind::Set, keyword);
    set->a = sequence(false);
    if (is_op("=")) {
      ++pos_;
      set->b = sequence(false);
      expect(TokenKind::CloseStatement, "'%}'");
    } else {
      expect(TokenKind::CloseStatement, "'%}' or '='");
      set->body = block({"endset"}, keyword, "set");
      end_statement("endset");
    }
    return set;
  }

  NodePtr if_statement(const Token& keyword) {
    NodePtr branch = node(NodeKind::If, keyword);
    branch->a = expression();
    expect(TokenKind::CloseStatement, "'%}'");
    branch->body = block({"elif", "else", "endif"}, keyword, "if");
    if (at_statement({"elif"})) {
      pos_ += 2;
      branch->orelse.push_back(if_statement(t_[pos_ - 1]));
      return branch;  // the innermost elif read the endif
    }
    if (at_statement({"else"})) {
      pos_ += 2;
      expect(TokenKind::CloseStatement, "'%}'");
      branch->orelse = block({"endif"}, keyword, "if");
    }
    end_statement("endif");
    return branch;
  }

  NodePtr for_statement(const Token& keyword) {
    NodePtr loop = node(NodeKind::For, keyword);
    loop->a = sequence(true);
    if (!is_name("in")) throw error_here("expected 'in' in the for loop, got " + describe(peek()));
    ++pos_;
    NodePtr iterable = expression();
    if (iterable->kind == NodeKind::Select) {  // for x in items if condition
      loop->b = iterable->b;
      loop->c = iterable->a;
    } else {
      loop->b = iterable;
    }
    expect(TokenKind::CloseStatement, "'%}'");
    loop->body = block({"endfor", "else"}, keyword, "for");
    if (at_statement({"else"})) {
      pos_ += 2;
      expect(TokenKind::CloseStatement, "'%}'");
      loop->orelse = block({"endfor"}, keyword, "for");
    }
    end_statement("endfor");
    return loop;
  }

  NodePtr macro_statement(const Token& keyword) {
    NodePtr macro = node(NodeKind::Macro, keyword);
    macro->name = expect_name("the macro's name");
    macro->items = arguments(true);
    expect(TokenKind::CloseStatement, "'%}'");
    macro->body = block({"endmacro"}, keyword, "macro");
    end_statement("endmacro");
    return macro;
  }

  NodePtr call_statement(const Token& keyword) {
    NodePtr call = node(NodeKind::CallBlock, keyword);
    if (is_op("(")) call->items = arguments(true);
    call->a = expression();
    if (call->a->kind != NodeKind::Call) throw TemplateError(keyword.line, keyword.column, "`{% call %}` needs a macro call");
    expect(TokenKind::CloseStatement, "'%}'");
    call->body = block({"endcall"}, keyword, "call");
    end_statement("endcall");
    return call;
  }

  NodePtr filter_statement(const Token& keyword) {
    NodePtr block_filter = node(NodeKind::FilterBlock, keyword);
    block_filter->a = filter_of(nullptr);
    expect(TokenKind::CloseStatement, "'%}'");
    block_filter->body = block({"endfilter"}, keyword, "filter");
    end_statement("endfilter");
    return block_filter;
  }

  // ---- expressions
  // a, b, c (a tuple when there is a comma); `primary` reads names only (for loop targets).
  NodePtr sequence(bool primary) {
    const Token& first_token = peek();
    NodePtr first = primary ? primary_expression() : expression();
    if (!is_op(",")) return first;
    NodePtr tuple = node(NodeKind::TupleLiteral, first_token);
    tuple->items.push_back(first);
    while (is_op(",")) {
      ++pos_;
      tuple->items.push_back(primary ? primary_expression() : expression());
    }
    return tuple;
  }

  NodePtr expression() {
    const NestingLevel level = nested();
    const Token& at = peek();
    NodePtr value = logical_or();
    if (!is_name("if")) return value;
    ++pos_;
    NodePtr condition = logical_or();
    if (is_name("else")) {
      ++pos_;
      NodePtr ternary = node(NodeKind::Ternary, at);
      ternary->a = condition;
      ternary->b = value;
      ternary->c = expression();
      return ternary;
    }
    NodePtr select = node(NodeKind::Select, at);
    select->a = condition;
    select->b = value;
    return select;
  }

  NodePtr binary(const Token& at, std::string op, NodePtr left, NodePtr right) {
    NodePtr n = node(NodeKind::Binary, at);
    n->op = std::move(op);
    n->a = std::move(left);
    n->b = std::move(right);
    return n;
  }

  NodePtr logical_or() {
    NodePtr left = logical_and();
    while (is_name("or")) {
      const Token& at = take();
      left = binary(at, "or", left, logical_and());
    }
    return left;
  }

  NodePtr logical_and() {
    NodePtr left = logical_not();
    while (is_name("and")) {
      const Token& at = take();
      left = binary(at, "and", left, logical_not());
    }
    return left;
  }

  NodePtr logical_not() {
    if (is_name("not")) {
      const NestingLevel level = nested();
      const Token& at = take();
      NodePtr n = node(NodeKind::Unary, at);
      n->op = "not";
      n->a = logical_not();
      return n;
    }
    return comparison();
  }

  NodePtr comparison() {
    NodePtr left = additive();
    while (true) {
      const Token& at = peek();
      std::string op;
      if (is_name("not") && is_name("in", 1)) {
        op = "not in";
        pos_ += 2;
      } else if (is_name("in")) {
        op = "in";
        ++pos_;
      } else if (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">=")) {
        op = take().text;
      } else {
        return left;
      }
      left = binary(at, op, left, additive());
    }
  }

  NodePtr additive() {
    NodePtr left = multiplicative();
    while (is_op("+") || is_op("-") || is_op("~")) {
      const Token& at = take();
      left = binary(at, at.text, left, multiplicative());
    }
    return left;
  }

  NodePtr multiplicative() {
    NodePtr left = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& at = take();
      left = binary(at, at.text, left, power());
    }
    return left;
  }

  NodePtr power() {
    NodePtr left = test();
    while (is_op("**")) {
      const Token& at = take();
      left = binary(at, "**", left, test());
    }
    return left;
  }

  NodePtr test() {
    NodePtr operand = filter();
    while (is_name("is")) {
      const Token& at = take();
      NodePtr t = node(NodeKind::Test, at);
      if (is_name("not")) {
        ++pos_;
        t->negate = true;
      }
      const Token& name = peek();
      t->name = expect_name("a test name after 'is'");
      if (!is_known_test(t->name)) throw unsupported(name.line, name.column, "the test `is " + t->name + "`");
      if (is_op("(")) throw unsupported(name.line, name.column, "a test with arguments (`is " + t->name + "(...)`)");
      t->a = operand;
      operand = t;
    }
    return operand;
  }

  NodePtr filter() {
    NodePtr operand = unary();
    while (is_op("|")) {
      ++pos_;
      operand = filter_of(operand);
    }
    return operand;
  }

  // `name` or `name(args)` after a pipe (or in `{% filter %}`), applied to `operand`.
  NodePtr filter_of(NodePtr operand) {
    const Token& at = peek();
    NodePtr f = node(NodeKind::Filter, at);
    f->name = expect_name("a filter name");
    if (!is_known_filter(f->name)) throw unsupported(at.line, at.column, "the filter `" + f->name + "`");
    if (is_op("(")) f->items = arguments(false);
    f->a = std::move(operand);
    return f;
  }

  NodePtr unary() {
    if (is_op("-") || is_op("+")) {
      const NestingLevel level = nested();
      const Token& at = take();
      NodePtr n = node(NodeKind::Unary, at);
      n->op = at.text;
      n->a = unary();
      return n;
    }
    return postfix(primary_expression());
  }

  NodePtr postfix(NodePtr object) {
    while (true) {
      if (is_op(".")) {
        const Token& dot = take();
        const Token& name = take();
        NodePtr attribute = node(NodeKind::Attribute, dot);
        attribute->a = object;
        if (name.kind == TokenKind::Name) {
          attribute->name = name.text;
        } else if (name.kind == TokenKind::Integer) {
          attribute->kind = NodeKind::Index;
          attribute->b = node(NodeKind::Literal, name);
          attribute->b->value = Value(integer_literal(name));
        } else {
          throw TemplateError(name.line, name.column, "expected a name after '.', got " + describe(name));
        }
        object = attribute;
      } else if (is_op("[")) {
        object = subscript(object, take());
      } else if (is_op("(")) {
        const Token& at = peek();
        if (object->kind == NodeKind::Attribute && !is_known_method(object->name)) {
          throw unsupported(object->line, object->column, "the method `." + object->name + "()`");
        }
        NodePtr call = node(NodeKind::Call, at);
        call->a = object;
        call->items = arguments(false);
        object = call;
      } else {
        return object;
      }
    }
  }

  NodePtr subscript(NodePtr object, const Token& open) {
    NodePtr parts[3];
    int colons = 0;
    while (!is_op("]")) {
      if (at_end()) throw TemplateError(open.line, open.column, "'[' is never closed");
      if (is_op(":")) {
        ++pos_;
        if (++colons > 2) throw error_here("a slice has at most two ':'");
        continue;
      }
      if (parts[colons]) throw error_here("expected ']' or ':', got " + describe(peek()));
      parts[colons] = expression();
    }
    ++pos_;
    if (colons == 0) {
      if (!parts[0]) throw TemplateError(open.line, open.column, "empty subscript '[]'");
      NodePtr index = node(NodeKind::Index, open);
      index->a = object;
      index->b = parts[0];
      return index;
    }
    NodePtr slice = node(NodeKind::Slice, open);
    slice->a = object;
    slice->b = parts[0];
    slice->c = parts[1];
    slice->d = parts[2];
    return slice;
  }

  // (a, b, name=c): positional then keyword arguments; `declaration` for macro parameters.
  std::vector<NodePtr> arguments(bool declaration) {
    const Token& open = peek();
    expect_op("(");
    std::vector<NodePtr> args;
    while (!is_op(")")) {
      if (at_end()) throw TemplateError(open.line, open.column, "'(' is never closed");
      if (is_op("*") || is_op("**")) throw unsupported(peek().line, peek().column, "argument unpacking (`*` / `**`)");
      const Token& at = peek();
      NodePtr arg = expression();
      if (is_op("=")) {
        ++pos_;
        if (arg->kind != NodeKind::Name) throw TemplateError(at.line, at.column, "expected a name before '='");
        NodePtr keyword = node(NodeKind::Keyword, at);
        keyword->name = arg->name;
        keyword->a = expression();
        arg = keyword;
      } else if (declaration && arg->kind != NodeKind::Name) {
        throw TemplateError(at.line, at.column, "expected a parameter name");
      }
      args.push_back(arg);
      if (is_op(",")) {
        ++pos_;
      } else if (!is_op(")")) {
        throw error_here("expected ',' or ')', got " + describe(peek()));
      }
    }
    ++pos_;
    return args;
  }

  // The value of an Integer token (digits only, as the lexer makes them).
  static std::int64_t integer_literal(const Token& token) {
    std::int64_t value = 0;
    const char* end = token.text.data() + token.text.size();
    if (const auto [stop, fault] = std::from_chars(token.text.data(), end, value); fault != std::errc() || stop != end)
      throw TemplateError(token.line, token.column, "the integer " + token.text + " is beyond 64-bit integers (at most 9223372036854775807)");
    return value;
  }

  NodePtr primary_expression() {
    const Token& token = take();
    switch (token.kind) {
      case TokenKind::Integer: {
        NodePtr n = node(NodeKind::Literal, token);
        n->value = Value(integer_literal(token));
        return n;
      }
      case TokenKind::Float: {
        NodePtr n = node(NodeKind::Literal, token);
        n->value = Value(std::strtod(token.text.c_str(), nullptr));  // beyond double: inf, as in Python and JavaScript
        return n;
      }
      case TokenKind::String: {
        std::string text = token.text;
        while (is_kind(TokenKind::String)) text += take().text;
        NodePtr n = node(NodeKind::Literal, token);
        n->value = Value(std::move(text));
        return n;
      }
      case TokenKind::Name: {
        NodePtr n = node(NodeKind::Name, token);
        n->name = token.text;
        return n;
      }
      case TokenKind::Operator:
        if (token.text == "(") {
          NodePtr inner = sequence(false);
          expect_op(")");
          return inner;
        }
        if (token.text == "[") {
          NodePtr list = node(NodeKind::ListLiteral, token);
          while (!is_op("]")) {
            if (at_end()) throw TemplateError(token.line, token.column, "'[' is never closed");
            list->items.push_back(expression());
            if (is_op(",")) ++pos_;
            else if (!is_op("]")) throw error_here("expected ',' or ']', got " + describe(peek()));
          }
          ++pos_;
          return list;
        }
        if (token.text == "{") {
          NodePtr dict = node(NodeKind::DictLiteral, token);
          while (!is_op("}")) {
            if (at_end()) throw TemplateError(token.line, token.column, "'{' is never closed");
            dict->items.push_back(expression());
            expect_op(":");
            dict->items.push_back(expression());
            if (is_op(",")) ++pos_;
            else if (!is_op("}")) throw error_here("expected ',' or '}', got " + describe(peek()));
          }
          ++pos_;
          return dict;
        }
        break;
      default: break;
    }
    throw TemplateError(token.line, token.column, "unexpected " + describe(token) + " in an expression");
  }

  std::vector<Token> t_;
  std::size_t pos_ = 0;
  int depth_ = 0;  // see nested()
};

}  // namespace

std::vector<NodePtr> parse_template(const std::string& source) { return Parser(tokenize(source)).run(); }

}  // namespace attnviz::jinja
