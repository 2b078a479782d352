#include "render/script_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/utf8.hpp"

namespace attnviz {

std::string script_json_string(std::string_view text) {
  std::string out = "\"";
  for (char32_t c : decode_utf8(text)) {
    const bool escape = c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029 || c == 0x7f;
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (escape) {
      char code[8];
      std::snprintf(code, sizeof code, "\\u%04x", static_cast<unsigned>(c));
      out += code;
    } else {
      out += encode_utf8(std::u32string_view(&c, 1));
    }
  }
  return out + "\"";
}

std::string script_json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

std::string script_json_strings(const std::vector<std::string>& texts) {
  std::string out = "[";
  for (std::size_t i = 0; i < texts.size(); ++i) out += (i == 0 ? "" : ",") + script_json_string(texts[i]);
  return out + "]";
}

}  // namespace attnviz
