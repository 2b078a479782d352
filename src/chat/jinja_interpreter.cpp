#include "chat/jinja_interpreter.hpp"

#include <cmath>
#include <ctime>
#include <optional>
#include <stdexcept>

#include "chat/jinja_builtins.hpp"
#include "chat/jinja_error.hpp"
#include "chat/jinja_integers.hpp"
#include "chat/jinja_limits.hpp"
#include "core/utf8.hpp"

namespace attnviz::jinja {
namespace {

struct Scope {
  Mapping vars;
  std::shared_ptr<Scope> parent;
};
using ScopePtr = std::shared_ptr<Scope>;

struct BreakLoop {};
struct ContinueLoop {};

// Every scope one rendering makes. A macro holds the scope it was defined in, and that scope
// holds the macro (a namespace can hold one too): reference cycles that would outlive the
// rendering. At its end the arena empties every scope still alive, which breaks them.
class ScopeArena {
 public:
  ScopeArena() = default;
  ScopeArena(const ScopeArena&) = delete;
  ScopeArena& operator=(const ScopeArena&) = delete;
  ~ScopeArena() {
    for (const std::weak_ptr<Scope>& weak : made_) {
      if (ScopePtr scope = weak.lock()) {
        Mapping vars = std::move(scope->vars);  // destroyed after the scope lets go of them
        scope->vars.entries.clear();
        scope->parent.reset();
      }
    }
  }
  ScopePtr child_of(const ScopePtr& parent) {
    auto scope = std::make_shared<Scope>();
    scope->parent = parent;
    made_.push_back(scope);
    return scope;
  }

 private:
  std::vector<std::weak_ptr<Scope>> made_;
};

// What JavaScript's toString gives for `a + b` and `a ~ b` in HF's renderer: a float 1.0 is "1",
// a list joins its items' printed forms with ",", a mapping is "[object Map]".
std::string js_string(const Value& value) {
  if (value.is_float()) return to_json(value, JsonStyle{});
  if (value.is_list()) {
    std::string out;
    for (std::size_t i = 0; i < value.as_list().size(); ++i) {
      if (i > 0) out += ',';
      const Value& item = value.as_list()[i];
      if (!item.is_none() && !item.is_undefined()) out += to_output(item);
    }
    return out;
  }
  if (value.is_mapping() || value.is_namespace()) return "[object Map]";
  return to_output(value);
}

class Interpreter {
 public:
  explicit Interpreter(ScopeArena& scopes) : scopes_(scopes) {}

  std::string block(const std::vector<NodePtr>& body, const ScopePtr& scope) {
    std::string out;
    for (const NodePtr& node : body) statement(*node, scope, out);
    return out;
  }

 private:
  [[noreturn]] void fail(const Node& at, const std::string& detail) const { throw TemplateError(at.line, at.column, detail); }

  // One more expression or statement under evaluation for the level's lifetime; past
  // kMaxRenderNesting a TemplateError at `at`, before the machine's stack runs out.
  NestingLevel nested(const Node& at) {
    if (depth_ >= kMaxRenderNesting)
      fail(at, "expressions and statements nested more than " + std::to_string(kMaxRenderNesting) +
                   " deep (a macro that calls itself without end?)");
    return NestingLevel(depth_);
  }

  void statement(const Node& node, const ScopePtr& scope, std::string& out) {
    const NestingLevel level = nested(node);
    switch (node.kind) {
      case NodeKind::Text: out += node.name; return;
      case NodeKind::Output: {
        const Value value = eval(*node.a, scope);
        if (!value.is_none() && !value.is_undefined()) out += to_output(value);
        return;
      }
      case NodeKind::If:
        out += block(eval(*node.a, scope).truthy() ? node.body : node.orelse, scope);
        return;
      case NodeKind::For: out += for_loop(node, scope); return;
      case NodeKind::Set: set(node, scope); return;
      case NodeKind::Macro: scope->vars.set(node.name, macro(node, scope)); return;
      case NodeKind::CallBlock: {
        const Value result = call_block(node, scope);
        if (!result.is_none() && !result.is_undefined()) out += to_output(result);
        return;
      }
      case NodeKind::FilterBlock: {
        const Value text(block(node.body, scope));
        out += to_output(filter(*node.a, text, scope));
        return;
      }
      case NodeKind::Break: throw BreakLoop{};
      case NodeKind::Continue: throw ContinueLoop{};
      default: {
        const Value value = eval(node, scope);
        if (!value.is_none() && !value.is_undefined()) out += to_output(value);
      }
    }
  }

  static Value lookup(const std::string& name, const Scope* scope) {
    for (; scope != nullptr; scope = scope->parent.get()) {
      if (const Value* found = scope->vars.find(name)) return *found;
    }
    return Value();
  }

  void assign(const Node& target, const Value& value, const ScopePtr& scope) {
    if (target.kind == NodeKind::Name) {
      scope->vars.set(target.name, value);
    } else if (target.kind == NodeKind::TupleLiteral) {
      if (!value.is_list()) fail(target, "cannot unpack a " + value.type_name());
      const List& items = value.as_list();
      if (items.size() != target.items.size()) {
        fail(target, "cannot unpack " + std::to_string(items.size()) + " values into " +
                         std::to_string(target.items.size()) + " names");
      }
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (target.items[i]->kind != NodeKind::Name) fail(*target.items[i], "can only unpack into names");
        scope->vars.set(target.items[i]->name, items[i]);
      }
    } else if (target.kind == NodeKind::Attribute) {
      const Value object = eval(*target.a, scope);
      if (!object.is_namespace()) fail(target, "can only set an attribute of a namespace(), not of a " + object.type_name());
      object.as_namespace().set(target.name, value);
    } else {
      fail(target, "cannot assign to this expression");
    }
  }

  void set(const Node& node, const ScopePtr& scope) {
    const Value value = node.b ? eval(*node.b, scope) : Value(block(node.body, scope));
    assign(*node.a, value, scope);
  }

  std::string for_loop(const Node& node, const ScopePtr& outer) {
    ScopePtr scope = scopes_.child_of(outer);
    Value iterable = eval(*node.b, scope);
    List candidates;
    if (iterable.is_list()) {
      candidates = iterable.as_list();
    } else if (iterable.is_mapping()) {
      for (const auto& entry : iterable.as_mapping().entries) candidates.emplace_back(entry.first);
    } else {
      fail(*node.b, "a for loop needs a list or a mapping, got " + iterable.type_name());
    }
    List items;
    for (const Value& item : candidates) {
      if (node.c) {
        ScopePtr test_scope = scopes_.child_of(scope);
        assign(*node.a, item, test_scope);
        if (!eval(*node.c, test_scope).truthy()) continue;
      }
      items.push_back(item);
    }
    std::string out;
    const auto n = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < n; ++i) {
      Mapping loop;
      loop.set("index", Value(i + 1));
      loop.set("index0", Value(i));
      loop.set("revindex", Value(n - i));
      loop.set("revindex0", Value(n - i - 1));
      loop.set("first", Value(i == 0));
      loop.set("last", Value(i == n - 1));
      loop.set("length", Value(n));
      loop.set("previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)] : Value());
      loop.set("nextitem", i < n - 1 ? items[static_cast<std::size_t>(i + 1)] : Value());
      scope->vars.set("loop", Value(std::move(loop)));
      assign(*node.a, items[static_cast<std::size_t>(i)], scope);
      try {
        out += block(node.body, scope);
      } catch (const ContinueLoop&) {
        continue;
      } catch (const BreakLoop&) {
        break;
      }
    }
    if (items.empty()) out += block(node.orelse, scope);
    return out;
  }

  // Binds a macro's (or call block's) parameters in `scope` from `args`.
  void bind(const Node& at, const std::string& name, const std::vector<NodePtr>& params, CallArgs& args,
            const ScopePtr& scope) {
    std::vector<const Node*> pending_defaults;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Node& param = *params[i];
      const std::string& pname = param.name;
      Value value;
      bool given = false;
      if (i < args.positional.size()) {
        value = args.positional[i];
        given = true;
      } else {
        auto& kw = args.keywords.entries;
        for (auto it = kw.begin(); it != kw.end(); ++it) {
          if (it->first == pname) {
            value = it->second;
            given = true;
            kw.erase(it);
            break;
          }
        }
      }
      if (!given && param.kind == NodeKind::Keyword) pending_defaults.push_back(&param);
      scope->vars.set(pname, value);
    }
    if (args.positional.size() > params.size()) {
      fail(at, "macro " + name + " takes at most " + std::to_string(params.size()) + " argument(s)");
    }
    if (!args.keywords.entries.empty()) {
      fail(at, "macro " + name + " takes no keyword argument '" + args.keywords.entries.front().first + "'");
    }
    for (const Node* param : pending_defaults) scope->vars.set(param->name, eval(*param->a, scope));
  }

  Value macro(const Node& node, const ScopePtr& defining) {
    const Node* def = &node;
    return Value(Function([this, def, defining](CallArgs& args) {
      ScopePtr scope = scopes_.child_of(defining);
      if (args.caller) scope->vars.set("caller", *args.caller);
      bind(*def, "'" + def->name + "'", def->items, args, scope);
      return Value(block(def->body, scope));
    }));
  }

  Value call_block(const Node& node, const ScopePtr& scope) {
    const Node* def = &node;
    Value caller(Function([this, def, scope](CallArgs& args) {
      ScopePtr inner = scopes_.child_of(scope);
      bind(*def, "caller", def->items, args, inner);
      return Value(block(def->body, inner));
    }));
    const Node& call = *node.a;
    CallArgs args = arguments(call, scope);
    args.caller = std::make_shared<Value>(caller);
    const Value callee = eval(*call.a, scope);
    if (!callee.is_function()) fail(call, "`{% call %}` needs a macro, got a " + callee.type_name());
    return invoke(call, callee, args);
  }

  Value invoke(const Node& at, const Value& callee, CallArgs& args) {
    try {
      return callee.as_function()(args);
    } catch (const std::invalid_argument& e) {
      fail(at, e.what());
    }
  }

  CallArgs arguments(const Node& call, const ScopePtr& scope) {
    CallArgs args;
    for (const NodePtr& arg : call.items) {
      if (arg->kind != NodeKind::Keyword) args.positional.push_back(eval(*arg, scope));
    }
    for (const NodePtr& arg : call.items) {
      if (arg->kind == NodeKind::Keyword) {
        if (args.keywords.find(arg->name)) fail(*arg, "keyword argument '" + arg->name + "' given twice");
        args.keywords.set(arg->name, eval(*arg->a, scope));
      }
    }
    return args;
  }

  Value filter(const Node& node, const Value& operand, const ScopePtr& scope) {
    const CallArgs args = arguments(node, scope);
    try {
      return apply_filter(node.name, operand, args);
    } catch (const std::invalid_argument& e) {
      fail(node, e.what());
    }
  }

  Value attribute(const Node& at, const Value& object, const std::string& name) {
    (void)at;
    if (object.is_mapping()) {
      if (const Value* found = object.as_mapping().find(name)) return *found;
    } else if (object.is_namespace()) {
      if (const Value* found = object.as_namespace().find(name)) return *found;
      return Value();
    }
    return builtin_attribute(object, name);
  }

  Value index(const Node& at, const Value& object, const Value& key) {
    if (object.is_mapping() || object.is_namespace()) {
      if (!key.is_string()) fail(at, "a mapping's key must be a string, got " + key.type_name());
      return attribute(at, object, key.as_string());
    }
    if (object.is_list() || object.is_string()) {
      if (key.is_string()) return builtin_attribute(object, key.as_string());
      if (!key.is_int()) fail(at, "an index must be an integer, got " + key.type_name());
      if (object.is_list()) {
        const List& list = object.as_list();
        std::int64_t i = key.as_int();
        if (i < 0) i += static_cast<std::int64_t>(list.size());
        if (i < 0 || i >= static_cast<std::int64_t>(list.size())) return Value();
        return list[static_cast<std::size_t>(i)];
      }
      const std::u32string cps = decode_utf8(object.as_string());
      std::int64_t i = key.as_int();
      if (i < 0) i += static_cast<std::int64_t>(cps.size());
      if (i < 0 || i >= static_cast<std::int64_t>(cps.size())) return Value();
      return Value(encode_utf8(cps.substr(static_cast<std::size_t>(i), 1)));
    }
    if (key.is_string()) return builtin_attribute(object, key.as_string());
    return Value();
  }

  Value slice(const Node& node, const ScopePtr& scope) {
    const Value object = eval(*node.a, scope);
    const Value start = node.b ? eval(*node.b, scope) : Value();
    const Value stop = node.c ? eval(*node.c, scope) : Value();
    const Value step = node.d ? eval(*node.d, scope) : Value();
    try {
      if (object.is_list()) return Value(slice_list(object.as_list(), start, stop, step));
      if (object.is_string()) {
        List chars;
        for (char32_t c : decode_utf8(object.as_string())) chars.emplace_back(encode_utf8(std::u32string(1, c)));
        std::string out;
        for (const Value& c : slice_list(chars, start, stop, step)) out += c.as_string();
        return Value(out);
      }
    } catch (const std::invalid_argument& e) {
      fail(node, e.what());
    }
    fail(node, "only lists and strings can be sliced, not a " + object.type_name());
  }

  Value call(const Node& node, const ScopePtr& scope) {
    CallArgs args = arguments(node, scope);
    const Node& callee_node = *node.a;
    if (callee_node.kind == NodeKind::Attribute) {
      const Value object = eval(*callee_node.a, scope);
      const Value* member = object.is_mapping() ? object.as_mapping().find(callee_node.name) : nullptr;
      if (member == nullptr || !member->is_function()) {
        try {
          return call_method(object, callee_node.name, args);
        } catch (const std::invalid_argument& e) {
          fail(node, e.what());
        }
      }
      return invoke(node, *member, args);
    }
    const Value callee = eval(callee_node, scope);
    if (!callee.is_function()) {
      const std::string what = callee_node.kind == NodeKind::Name ? "`" + callee_node.name + "`" : "this expression";
      fail(node, what + " is not callable (it is " + (callee.is_undefined() ? "undefined" : "a " + callee.type_name()) + ")");
    }
    return invoke(node, callee, args);
  }

  // a op b for two numbers (ints stay ints unless a float takes part, as in Python), or nothing
  // for an operator numbers do not take. Throws std::invalid_argument for an integer result
  // beyond 64 bits.
  std::optional<Value> arithmetic(const Node& node, const std::string& op, const Value& left, const Value& right) const {
    const bool floating = left.is_float() || right.is_float();
    const double a = left.as_number(), b = right.as_number();
    if (op == "+") return floating ? Value(a + b) : Value(checked_add(left.as_int(), right.as_int()));
    if (op == "-") return floating ? Value(a - b) : Value(checked_subtract(left.as_int(), right.as_int()));
    if (op == "*") return floating ? Value(a * b) : Value(checked_multiply(left.as_int(), right.as_int()));
    if (op == "/") return Value(a / b);
    if (op == "//") {
      if (b == 0) fail(node, "division by zero");
      return floating ? Value(std::floor(a / b)) : Value(integer_from_double(std::floor(a / b)));
    }
    if (op == "%") {
      if (b == 0) fail(node, "modulo by zero");
      return floating ? Value(std::fmod(a, b)) : Value(remainder_of(left.as_int(), right.as_int()));
    }
    if (op == "<") return Value(a < b);
    if (op == ">") return Value(a > b);
    if (op == "<=") return Value(a <= b);
    if (op == ">=") return Value(a >= b);
    return std::nullopt;
  }

  Value binary(const Node& node, const ScopePtr& scope) {
    const std::string& op = node.op;
    const Value left = eval(*node.a, scope);
    if (op == "and") return left.truthy() ? eval(*node.b, scope) : left;
    if (op == "or") return left.truthy() ? left : eval(*node.b, scope);
    const Value right = eval(*node.b, scope);
    if (op == "==") return Value(loosely_equal(left, right));
    if (op == "!=") return Value(!loosely_equal(left, right));
    if (left.is_number() && right.is_number() && op != "~" && op != "**") {
      try {
        if (std::optional<Value> result = arithmetic(node, op, left, right)) return *result;
      } catch (const std::invalid_argument& e) {
        fail(node, e.what());
      }
    }
    if (left.is_undefined() || right.is_undefined()) {
      if (right.is_undefined() && (op == "in" || op == "not in")) return Value(op == "not in");
      if (op == "~" && !left.is_none() && !right.is_none()) {
        return Value((left.is_undefined() ? "" : js_string(left)) + (right.is_undefined() ? "" : js_string(right)));
      }
      fail(node, "cannot apply '" + op + "' to an undefined value");
    }
    if (left.is_none() || right.is_none()) fail(node, "cannot apply '" + op + "' to none");
    if (op == "~") return Value(js_string(left) + js_string(right));
    if (op == "**" && (left.is_number() || left.is_bool()) && (right.is_number() || right.is_bool())) {
      const double result = std::pow(left.as_number(), right.as_number());
      if (!std::isfinite(result)) fail(node, "'**' gives no finite real number");
      if (left.is_float() || right.is_float() || right.as_number() < 0) return Value(result);
      try {
        return Value(integer_from_double(result));
      } catch (const std::invalid_argument& e) {
        fail(node, std::string("'**': ") + e.what());
      }
    }
    if (left.is_list() && right.is_list() && op == "+") {
      List joined = left.as_list();
      joined.insert(joined.end(), right.as_list().begin(), right.as_list().end());
      return Value(std::move(joined));
    }
    if (right.is_list() && (op == "in" || op == "not in")) {
      bool member = false;
      for (const Value& item : right.as_list()) member = member || strictly_equal(item, left);
      return Value(member == (op == "in"));
    }
    if ((left.is_string() || right.is_string()) && op == "+") return Value(js_string(left) + js_string(right));
    if (left.is_string() && right.is_string() && (op == "in" || op == "not in")) {
      return Value((right.as_string().find(left.as_string()) != std::string::npos) == (op == "in"));
    }
    if (left.is_string() && right.is_mapping() && (op == "in" || op == "not in")) {
      return Value((right.as_mapping().find(left.as_string()) != nullptr) == (op == "in"));
    }
    fail(node, "cannot apply '" + op + "' to a " + left.type_name() + " and a " + right.type_name());
  }

  Value eval(const Node& node, const ScopePtr& scope) {
    const NestingLevel level = nested(node);
    switch (node.kind) {
      case NodeKind::Literal: return node.value;
      case NodeKind::Name: return lookup(node.name, scope.get());
      case NodeKind::ListLiteral:
      case NodeKind::TupleLiteral: {
        List items;
        for (const NodePtr& item : node.items) items.push_back(eval(*item, scope));
        return Value(std::move(items));
      }
      case NodeKind::DictLiteral: {
        Mapping map;
        for (std::size_t i = 0; i + 1 < node.items.size(); i += 2) {
          const Value key = eval(*node.items[i], scope);
          if (!key.is_string()) fail(*node.items[i], "a mapping's key must be a string, got " + key.type_name());
          map.set(key.as_string(), eval(*node.items[i + 1], scope));
        }
        return Value(std::move(map));
      }
      case NodeKind::Attribute: return attribute(node, eval(*node.a, scope), node.name);
      case NodeKind::Index: return index(node, eval(*node.a, scope), eval(*node.b, scope));
      case NodeKind::Slice: return slice(node, scope);
      case NodeKind::Call: return call(node, scope);
      case NodeKind::Filter: return filter(node, eval(*node.a, scope), scope);
      case NodeKind::Test: {
        const Value operand = eval(*node.a, scope);
        try {
          return Value(apply_test(node.name, operand) != node.negate);
        } catch (const std::invalid_argument& e) {
          fail(node, e.what());
        }
      }
      case NodeKind::Unary: {
        const Value operand = eval(*node.a, scope);
        if (node.op == "not") return Value(!operand.truthy());
        const bool minus = node.op == "-";
        if (operand.is_float()) return Value(minus ? -operand.as_number() : operand.as_number());
        if (operand.is_int() || operand.is_bool()) {
          const std::int64_t value = operand.is_int() ? operand.as_int() : static_cast<std::int64_t>(operand.as_number());
          try {
            return Value(minus ? checked_negate(value) : value);
          } catch (const std::invalid_argument& e) {
            fail(node, e.what());
          }
        }
        fail(node, "cannot apply unary '" + node.op + "' to a " + operand.type_name());
      }
      case NodeKind::Binary: return binary(node, scope);
      case NodeKind::Ternary: return eval(*node.a, scope).truthy() ? eval(*node.b, scope) : eval(*node.c, scope);
      case NodeKind::Select: return eval(*node.a, scope).truthy() ? eval(*node.b, scope) : Value();
      case NodeKind::Keyword: fail(node, "a keyword argument outside a call");
      default: {
        std::string out;
        statement(node, scope, out);
        return Value(out);
      }
    }
  }

  ScopeArena& scopes_;
  int depth_ = 0;  // see nested()
};

}  // namespace

namespace {

Mapping globals(const Clock& clock) {
  Mapping g;
  g.set("true", Value(true));
  g.set("false", Value(false));
  g.set("none", Value(Value::None{}));
  g.set("True", Value(true));
  g.set("False", Value(false));
  g.set("None", Value(Value::None{}));
  g.set("raise_exception", Value(Function([](CallArgs& args) -> Value {
          const std::string message = args.positional.empty() ? "" : to_output(args.positional[0]);
          throw std::invalid_argument("the template raised an exception: " + message);
        })));
  g.set("range", Value(Function([](CallArgs& args) {
          std::vector<std::int64_t> n;
          for (const Value& v : args.positional) {
            if (!v.is_int()) throw std::invalid_argument("range() takes integers, got " + v.type_name());
            n.push_back(v.as_int());
          }
          if (n.empty() || n.size() > 3) throw std::invalid_argument("range() takes 1 to 3 integers");
          const std::int64_t start = n.size() == 1 ? 0 : n[0];
          const std::int64_t stop = n.size() == 1 ? n[0] : n[1];
          const std::int64_t step = n.size() == 3 ? n[2] : 1;
          if (step == 0) throw std::invalid_argument("range() step must not be zero");
          const std::uint64_t length = range_length(start, stop, step);
          if (length > static_cast<std::uint64_t>(kMaxRangeItems))
            throw std::invalid_argument("range() of " + std::to_string(length) + " numbers is more than attnviz makes (" +
                                        std::to_string(kMaxRangeItems) + ")");
          List out;
          out.reserve(length);
          for (std::uint64_t k = 0; k < length; ++k) out.emplace_back(range_item(start, step, k));
          return Value(std::move(out));
        })));
  g.set("strftime_now", Value(Function([clock](CallArgs& args) {
          if (args.positional.empty() || !args.positional[0].is_string()) {
            throw std::invalid_argument("strftime_now() takes a format string");
          }
          return Value(clock(args.positional[0].as_string()));
        })));
  g.set("namespace", Value(Function([](CallArgs& args) {
          Mapping members;
          if (args.positional.size() > 1) throw std::invalid_argument("namespace() takes at most one positional argument");
          if (!args.positional.empty()) {
            const Value& source = args.positional[0];
            if (!source.is_mapping()) throw std::invalid_argument("namespace() takes a mapping");
            for (const auto& [k, v] : source.as_mapping().entries) members.set(k, v);
          }
          for (const auto& [k, v] : args.keywords.entries) members.set(k, v);
          return Value::namespace_of(std::move(members));
        })));
  return g;
}

std::string format_time(const std::tm& tm, const std::string& pattern) {
  static const char* const kLong[] = {"January", "February", "March",     "April",   "May",      "June",
                                      "July",    "August",   "September", "October", "November", "December"};
  static const char* const kShort[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  auto pad2 = [](int n) { return (n < 10 ? "0" : "") + std::to_string(n); };
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    switch (c) {
      case 'Y': out += std::to_string(tm.tm_year + 1900); break;
      case 'm': out += pad2(tm.tm_mon + 1); break;
      case 'd': out += pad2(tm.tm_mday); break;
      case 'b': out += kShort[tm.tm_mon]; break;
      case 'B': out += kLong[tm.tm_mon]; break;
      case 'H': out += pad2(tm.tm_hour); break;
      case 'M': out += pad2(tm.tm_min); break;
      case '%': out += '%'; break;
      default: out += '%'; out += c;
    }
  }
  return out;
}

}  // namespace

Clock system_clock() {
  return [](const std::string& pattern) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    return format_time(tm, pattern);
  };
}

std::string render(const std::vector<NodePtr>& program, const Mapping& context, const Clock& clock) {
  ScopeArena scopes;
  auto global = scopes.child_of(nullptr);
  global->vars = globals(clock);
  for (const auto& [key, value] : context.entries) global->vars.set(key, value);
  auto top = scopes.child_of(global);
  Interpreter interpreter(scopes);
  try {
    return interpreter.block(program, top);
  } catch (const BreakLoop&) {
    throw TemplateError(0, 0, "`{% break %}` outside a for loop");
  } catch (const ContinueLoop&) {
    throw TemplateError(0, 0, "`{% continue %}` outside a for loop");
  }
}

}  // namespace attnviz::jinja
