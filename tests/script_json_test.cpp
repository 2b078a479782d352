// JSON text inside an HTML <script> element (issue 14): tokens cannot end the element or become
// markup, and numbers read back exactly.
#include <catch2/catch.hpp>

#include <limits>

#include "render/script_json.hpp"

using namespace attnviz;

TEST_CASE("script_json: strings escape what could end the script element", "[render]") {
  CHECK(script_json_string("</script>") == "\"\\u003c/script\\u003e\"");
  CHECK(script_json_string("<!-- & -->") == "\"\\u003c!-- \\u0026 --\\u003e\"");
  CHECK(script_json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(script_json_string("\n\x1b") == "\"\\u000a\\u001b\"");
  CHECK(script_json_string("\xe2\x80\xa8") == "\"\\u2028\"");
  CHECK(script_json_string("\xe2\x96\x81time") == "\"\xe2\x96\x81time\"");  // "▁time" kept as UTF-8
  CHECK(script_json_string("\xff") == "\"\xef\xbf\xbd\"");                  // invalid byte -> U+FFFD
}

TEST_CASE("script_json: numbers are the shortest text of the same double", "[render]") {
  CHECK(script_json_number(1) == "1");
  CHECK(script_json_number(0.25) == "0.25");
  CHECK(script_json_number(static_cast<double>(0.1f)) == "0.10000000149011612");
  CHECK(script_json_number(-1e-30) == "-1e-30");
  CHECK(script_json_number(std::numeric_limits<double>::infinity()) == "null");
  CHECK(script_json_strings({"a", "<"}) == "[\"a\",\"\\u003c\"]");
}
