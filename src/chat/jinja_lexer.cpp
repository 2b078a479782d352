#include "chat/jinja_lexer.hpp"

#include <algorithm>
#include <cstdint>

#include "chat/jinja_error.hpp"
#include "core/utf8.hpp"

namespace attnviz::jinja {
namespace {

// The template after Hugging Face's preprocessing, each byte with its offset in the source.
struct Mapped {
  std::string text;
  std::vector<std::size_t> origin;
  void push(char c, std::size_t at) {
    text += c;
    origin.push_back(at);
  }
};

bool is_word(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// JavaScript's \s: what String.prototype.trim removes.
bool is_js_space(char32_t c) {
  if (c <= 32) return c == 32 || (c >= 9 && c <= 13);
  return c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
         c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}

// The length in bytes of the whitespace code point starting at `at`, or 0.
std::size_t space_at(const std::string& s, std::size_t at) {
  if (at >= s.size()) return 0;
  const auto c = static_cast<unsigned char>(s[at]);
  if (c < 0x80) return is_js_space(c) ? 1 : 0;
  std::size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  if (at + n > s.size()) return 0;
  const std::u32string cp = decode_utf8(std::string_view(s).substr(at, n));
  return cp.size() == 1 && is_js_space(cp[0]) ? n : 0;
}

// The length of `s` without its trailing whitespace.
std::size_t trimmed_end(const std::string& s) {
  std::size_t end = s.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    if (space_at(s, start) != end - start) break;
    end = start;
  }
  return end;
}

Mapped preprocess(const std::string& source) {
  Mapped in;
  for (std::size_t i = 0; i < source.size(); ++i) in.push(source[i], i);
  if (!in.text.empty() && in.text.back() == '\n') {
    in.text.pop_back();
    in.origin.pop_back();
  }
  // lstrip_blocks: spaces and tabs at a line's start go when a tag `{%`, `{#` (or `{-`) follows.
  Mapped lstripped;
  for (std::size_t i = 0; i < in.text.size();) {
    const bool line_start = i == 0 || in.text[i - 1] == '\n' || in.text[i - 1] == '\r';
    if (line_start) {
      std::size_t j = i;
      while (j < in.text.size() && (in.text[j] == ' ' || in.text[j] == '\t')) ++j;
      if (j + 1 < in.text.size() && in.text[j] == '{' &&
          (in.text[j + 1] == '#' || in.text[j + 1] == '%' || in.text[j + 1] == '-')) {
        i = j;
      }
    }
    while (i < in.text.size()) {
      const char c = in.text[i];
      lstripped.push(c, in.origin[i]);
      ++i;
      if (c == '\n' || c == '\r') break;
    }
  }
  // trim_blocks: the newline right after `%}`, `#}` (or `-}`) goes.
  Mapped trimmed;
  const std::string& s = lstripped.text;
  for (std::size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && (s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' &&
        s[i + 2] == '\n') {
      trimmed.push(s[i], lstripped.origin[i]);
      trimmed.push(s[i + 1], lstripped.origin[i + 1]);
      i += 3;
    } else {
      trimmed.push(s[i], lstripped.origin[i]);
      ++i;
    }
  }
  // `{% generation %}` and `{% endgeneration %}` (transformers' assistant masks) render nothing.
  Mapped out;
  const std::string& t = trimmed.text;
  std::size_t last = 0;
  for (std::size_t at = t.find("{%"); at != std::string::npos; at = t.find("{%", at + 1)) {
    std::size_t p = at + 2;
    const bool lstrip = p < t.size() && t[p] == '-';
    if (lstrip) ++p;
    while (std::size_t n = space_at(t, p)) p += n;
    if (t.compare(p, 3, "end") == 0) p += 3;
    if (t.compare(p, 10, "generation") != 0) continue;
    p += 10;
    while (std::size_t n = space_at(t, p)) p += n;
    const bool rstrip = p < t.size() && t[p] == '-';
    if (rstrip) ++p;
    if (t.compare(p, 2, "%}") != 0) continue;
    p += 2;
    std::size_t after = p;
    while (std::size_t n = space_at(t, after)) after += n;
    std::size_t end = at;
    if (lstrip) {
      const std::size_t keep = trimmed_end(t.substr(last, at - last));
      end = last + keep;
    }
    for (std::size_t i = last; i < end; ++i) out.push(t[i], trimmed.origin[i]);
    if (!rstrip) {
      for (std::size_t i = p; i < after; ++i) out.push(t[i], trimmed.origin[i]);
    }
    last = after;
    at = after - 1;
  }
  for (std::size_t i = last; i < t.size(); ++i) out.push(t[i], trimmed.origin[i]);
  return out;
}

class Lexer {
 public:
  explicit Lexer(const std::string& source) : source_(source), mapped_(preprocess(source)), s_(mapped_.text) {
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> run() {
    while (pos_ < s_.size()) {
      const TokenKind* last = tokens_.empty() ? nullptr : &tokens_.back().kind;
      if (last == nullptr || *last == TokenKind::CloseStatement || *last == TokenKind::CloseExpression ||
          *last == TokenKind::Comment) {
        std::size_t end = pos_;
        while (true) {
          end = s_.find('{', end);
          if (end == std::string::npos) {
            end = s_.size();
            break;
          }
          if (end + 1 < s_.size() && (s_[end + 1] == '%' || s_[end + 1] == '{' || s_[end + 1] == '#')) break;
          ++end;
        }
        if (end > pos_) {
          push(TokenKind::Text, s_.substr(pos_, end - pos_), pos_);
          pos_ = end;
          continue;
        }
      }
      if (s_[pos_] == '{' && pos_ + 1 < s_.size()) {
        const char next = s_[pos_ + 1];
        if (next == '#') {
          comment();
          continue;
        }
        if (pos_ + 2 < s_.size() && s_[pos_ + 2] == '-' && (next == '%' || next == '{')) {
          strip_trailing_text();
          push(next == '%' ? TokenKind::OpenStatement : TokenKind::OpenExpression, next == '%' ? "{%" : "{{", pos_);
          if (next == '{') curly_depth_ = 0;
          pos_ += 3;
          continue;
        }
      }
      while (std::size_t n = space_at(s_, pos_)) pos_ += n;
      if (pos_ >= s_.size()) throw error(pos_, "the template ends inside a tag");
      const char c = s_[pos_];
      if (c == '-' && pos_ + 2 < s_.size() && s_[pos_ + 2] == '}' && (s_[pos_ + 1] == '%' || s_[pos_ + 1] == '}')) {
        push(s_[pos_ + 1] == '%' ? TokenKind::CloseStatement : TokenKind::CloseExpression,
             s_[pos_ + 1] == '%' ? "%}" : "}}", pos_);
        pos_ += 3;
        while (std::size_t n = space_at(s_, pos_)) pos_ += n;
        continue;
      }
      if ((c == '-' || c == '+') && unary_position()) {
        sign(c);
        continue;
      }
      if (symbol()) continue;
      if (c == '\'' || c == '"') {
        string_literal(c);
        continue;
      }
      if (is_digit(c)) {
        number(pos_, "");
        continue;
      }
      if (is_word(c)) {
        const std::size_t start = pos_;
        while (pos_ < s_.size() && is_word(s_[pos_])) ++pos_;
        push(TokenKind::Name, s_.substr(start, pos_ - start), start);
        continue;
      }
      throw error(pos_, std::string("unexpected character '") + c + "'");
    }
    return std::move(tokens_);
  }

 private:
  TemplateError error(std::size_t at, const std::string& detail) const {
    const auto [line, column] = place(at);
    return TemplateError(line, column, detail);
  }

  std::pair<int, int> place(std::size_t at) const {
    const std::size_t offset = at < mapped_.origin.size() ? mapped_.origin[at] : source_.size();
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const std::size_t line_start = it == line_starts_.begin() ? 0 : *(it - 1);
    return {static_cast<int>(it - line_starts_.begin()) + 1, static_cast<int>(offset - line_start) + 1};
  }

  void push(TokenKind kind, std::string text, std::size_t at) {
    const auto [line, column] = place(at);
    tokens_.push_back(Token{kind, std::move(text), line, column});
  }

  void strip_trailing_text() {
    if (tokens_.empty() || tokens_.back().kind != TokenKind::Text) return;
    std::string& text = tokens_.back().text;
    text.resize(trimmed_end(text));
    if (text.empty()) tokens_.pop_back();
  }

  void comment() {
    const std::size_t start = pos_;
    pos_ += 2;
    const bool strip_before = pos_ < s_.size() && s_[pos_] == '-';
    if (strip_before) ++pos_;
    const std::size_t end = s_.find("#}", pos_);
    if (end == std::string::npos) throw error(start, "a comment `{#` has no closing `#}`");
    const bool strip_after = end > pos_ && s_[end - 1] == '-';
    if (strip_before) strip_trailing_text();
    push(TokenKind::Comment, s_.substr(pos_, end - pos_), start);
    pos_ = end + 2;
    if (strip_after) {
      while (std::size_t n = space_at(s_, pos_)) pos_ += n;
    }
  }

  // A '-' or '+' after an operator or an opening bracket is a sign, not a binary operator.
  bool unary_position() const {
    if (tokens_.empty()) return true;
    const Token& last = tokens_.back();
    switch (last.kind) {
      case TokenKind::Name:
      case TokenKind::Integer:
      case TokenKind::Float:
      case TokenKind::String: return false;
      case TokenKind::Operator: return last.text != ")" && last.text != "]";
      default: return true;
    }
  }

  void sign(char c) {
    const std::size_t start = pos_;
    ++pos_;
    if (pos_ < s_.size() && is_digit(s_[pos_])) {
      number(start, std::string(1, c));
    } else {
      push(TokenKind::Operator, std::string(1, c), start);
    }
  }

  void number(std::size_t start, const std::string& prefix) {
    std::size_t p = pos_;
    while (p < s_.size() && is_digit(s_[p])) ++p;
    const bool after_dot = !tokens_.empty() && tokens_.back().kind == TokenKind::Operator && tokens_.back().text == ".";
    bool is_float = false;
    if (!after_dot && p + 1 < s_.size() && s_[p] == '.' && is_digit(s_[p + 1])) {
      is_float = true;
      ++p;
      while (p < s_.size() && is_digit(s_[p])) ++p;
    }
    push(is_float ? TokenKind::Float : TokenKind::Integer, prefix + s_.substr(pos_, p - pos_), start);
    pos_ = p;
  }

  bool symbol() {
    static const char* const kSymbols[] = {"{%", "%}", "{{", "}}", "(", ")", "{", "}", "[", "]", ",", ".",
                                           ":",  "|",  "<=", ">=", "==", "!=", "<", ">", "+", "-", "~", "**",
                                           "*",  "//", "/",  "%",  "="};
    for (const char* symbol : kSymbols) {
      const std::string_view seq(symbol);
      if (seq == "}}" && curly_depth_ > 0) continue;
      if (s_.compare(pos_, seq.size(), seq) != 0) continue;
      TokenKind kind = TokenKind::Operator;
      if (seq == "{%") kind = TokenKind::OpenStatement;
      if (seq == "%}") kind = TokenKind::CloseStatement;
      if (seq == "{{") kind = TokenKind::OpenExpression;
      if (seq == "}}") kind = TokenKind::CloseExpression;
      if (kind == TokenKind::OpenExpression) curly_depth_ = 0;
      if (seq == "{") ++curly_depth_;
      if (seq == "}") --curly_depth_;
      push(kind, std::string(seq), pos_);
      pos_ += seq.size();
      return true;
    }
    return false;
  }

  void string_literal(char quote) {
    const std::size_t start = pos_;
    ++pos_;
    std::string value;
    while (true) {
      if (pos_ >= s_.size()) throw error(start, "a string literal has no closing quote");
      const char c = s_[pos_];
      if (c == quote) break;
      ++pos_;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= s_.size()) throw error(start, "a string literal has no closing quote");
      const char e = s_[pos_++];
      switch (e) {
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'v': value += '\v'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case '\\': value += '\\'; break;
        case 'x':
        case 'u': {
          const std::size_t n = e == 'x' ? 2 : 4;
          const std::string hex = s_.substr(pos_, n);
          if (hex.size() != n || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
            throw error(pos_ - 2, "invalid escape \\" + std::string(1, e) + hex);
          }
          value += encode_utf8(std::u32string(1, static_cast<char32_t>(std::stoul(hex, nullptr, 16))));
          pos_ += n;
          break;
        }
        default: throw error(pos_ - 2, std::string("unknown escape \\") + e + " in a string literal");
      }
    }
    ++pos_;
    push(TokenKind::String, std::move(value), start);
  }

  const std::string& source_;
  Mapped mapped_;
  const std::string& s_;
  std::vector<std::size_t> line_starts_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int curly_depth_ = 0;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(source).run(); }

}  // namespace attnviz::jinja
