// JSON text that is safe inside an HTML <script> element: a tiny writer for the report's data
// (render/ does not use nlohmann/json). Strings escape '<', '>', '&', U+2028 and U+2029 as
// \uXXXX besides what JSON requires, so "</script>" or "<!--" in a token cannot end or change
// the element; invalid UTF-8 becomes U+FFFD. Numbers are the shortest text that reads back as
// the same double (std::to_chars), so JavaScript gets the exact values C++ used.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attnviz {

/// `text` as a JSON string literal, quotes included, escaped as above.
std::string script_json_string(std::string_view text);

/// `value` as a JSON number (shortest round-trip form); null when not finite.
std::string script_json_number(double value);

/// A JSON array of string literals.
std::string script_json_strings(const std::vector<std::string>& texts);

}  // namespace attnviz
