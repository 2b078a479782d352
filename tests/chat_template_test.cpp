// Chat templates (issue 34): the real templates of tests/data/chat-templates rendered by attnviz's
// Jinja subset equal, byte for byte, what Hugging Face's own renderer (npm @huggingface/jinja)
// gave for every conversation there, add_generation_prompt on and off; where that renderer
// raised, attnviz refuses too. Constructs outside the subset are refused naming them and their line.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>
#include <vector>

#include "chat/chat_template.hpp"
#include "core/error.hpp"
#include "model/chat_template_source.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::test_data_file;
using attnviz::test::TempDir;
using Catch::Matchers::Contains;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fixed time templates.json names (2025-07-26 09:30), as strftime_now formats it.
std::string fixed_clock(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'Y': out += "2025"; break;
      case 'm': out += "07"; break;
      case 'd': out += "26"; break;
      case 'b': out += "Jul"; break;
      case 'B': out += "July"; break;
      case 'H': out += "09"; break;
      case 'M': out += "30"; break;
      case '%': out += "%"; break;
      default: out += '%'; out += pattern[i];
    }
  }
  return out;
}

std::string render(const std::string& source, const std::string& messages_json, bool add_generation_prompt = true) {
  const ChatTemplate chat(source, "test.jinja");
  ChatRequest request;
  request.messages_json = messages_json;
  request.bos_token = "<s>";
  request.eos_token = "</s>";
  request.add_generation_prompt = add_generation_prompt;
  return chat.render(request, fixed_clock);
}

const char* const kOneUser = R"([{"role": "user", "content": "Hi"}])";

}  // namespace

TEST_CASE("every real chat template renders as @huggingface/jinja does, byte for byte", "[chat]") {
  const auto manifest = nlohmann::ordered_json::parse(read_text(test_data_file("chat-templates/templates.json")));
  int compared = 0, refused = 0;
  for (const auto& entry : manifest["templates"]) {
    const std::string file = entry["file"];
    const std::string stem = file.substr(0, file.size() - std::string(".jinja").size());
    const auto expected = nlohmann::ordered_json::parse(read_text(test_data_file("chat-templates/" + stem + ".expected.json")));
    const ChatTemplate chat(read_text(test_data_file("chat-templates/" + file)), file);
    for (const auto& rendering : expected["cases"]) {
      const std::string conversation = rendering["conversation"];
      ChatRequest request;
      request.messages_json = manifest["conversations"][conversation].dump();
      request.bos_token = entry["bos_token"];
      request.eos_token = entry["eos_token"];
      request.add_generation_prompt = rendering["add_generation_prompt"];
      INFO(file << ", conversation " << conversation << ", add_generation_prompt " << request.add_generation_prompt);
      if (rendering.contains("error")) {
        CHECK_THROWS_AS(chat.render(request, fixed_clock), InputError);
        ++refused;
      } else {
        CHECK(chat.render(request, fixed_clock) == rendering["text"].get<std::string>());
        ++compared;
      }
    }
  }
  CHECK(manifest["templates"].size() == 14);
  CHECK(compared == 146);
  CHECK(refused == 22);
}

TEST_CASE("a template raising names the file, the line and its message", "[chat]") {
  const std::string gemma2 = read_text(test_data_file("chat-templates/gemma-2-it.jinja"));
  CHECK_THROWS_WITH(render(gemma2, R"([{"role": "system", "content": "x"}, {"role": "user", "content": "y"}])"),
                    Contains("test.jinja: line 1, column") && Contains("System role not supported"));
  const std::string source = "line one\n{% for m in messages %}\n{{ raise_exception('no ' + m.role) }}\n{% endfor %}";
  CHECK_THROWS_WITH(render(source, kOneUser), Contains("test.jinja: line 3, column") && Contains("no user"));
}

TEST_CASE("constructs outside the subset are refused naming the construct and its line", "[chat]") {
  CHECK_THROWS_WITH(ChatTemplate("a\nb\n  {% include 'other.jinja' %}", "t.jinja"),
                    Contains("t.jinja: line 3, column 6") && Contains("the statement `{% include %}` is not supported"));
  CHECK_THROWS_WITH(ChatTemplate("{{ messages | wordwrap }}", "t.jinja"),
                    Contains("line 1, column 15") && Contains("the filter `wordwrap`"));
  CHECK_THROWS_WITH(ChatTemplate("\n{% if x is divisibleby 3 %}{% endif %}", "t.jinja"),
                    Contains("line 2") && Contains("the test `is divisibleby`"));
  CHECK_THROWS_WITH(ChatTemplate("{{ 'a{}'.format(1) }}", "t.jinja"), Contains("line 1") && Contains("the method `.format()`"));
  CHECK_THROWS_WITH(ChatTemplate("{% raw %}x{% endraw %}", "t.jinja"), Contains("the statement `{% raw %}`"));
  CHECK_THROWS_WITH(ChatTemplate("{% for m in messages %}", "t.jinja"),
                    Contains("line 1, column 4") && Contains("`{% for %}` is never closed"));
  CHECK_THROWS_WITH(ChatTemplate("{{ 'abc }}", "t.jinja"), Contains("no closing quote"));
}

TEST_CASE("whitespace control, trim_blocks and lstrip_blocks as transformers sets them", "[chat]") {
  // lstrip_blocks removes the indentation before a tag; trim_blocks the newline after it.
  CHECK(render("<\n  {% if true %}\n  x\n  {% endif %}\n>", kOneUser) == "<\n  x\n>");
  CHECK(render("a  {%- if true -%}  b  {%- endif -%}  c", kOneUser) == "abc");
  CHECK(render("a \n{{- 'b' -}}\n c", kOneUser) == "abc");
  CHECK(render("a {#- note -#} b", kOneUser) == "ab");
  CHECK(render("x\n", kOneUser) == "x");  // one final newline is dropped
  // `{{ }}` keeps its newline (trim_blocks applies to blocks only).
  CHECK(render("{{ 'a' }}\nb", kOneUser) == "a\nb");
}

TEST_CASE("loops, namespaces, slices and filters the real templates use", "[chat]") {
  const char* three = R"([{"role": "user", "content": " a "}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}])";
  CHECK(render("{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}|{% endfor %}", three) ==
        "10truefalse|21falsefalse|32falsetrue|");
  CHECK(render("{% set ns = namespace(n=0) %}{% for m in messages if m.role == 'user' %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}",
               three) == "2");
  CHECK(render("{% set x = 1 %}{% for m in messages %}{% set x = 2 %}{% endfor %}{{ x }}", three) == "1");
  CHECK(render("{{ messages[1:] | length }}{{ messages[-1].content }}{{ 'hello'[1:3] }}{{ 'hello'[::-1] }}", three) ==
        "2celolleh");  // "hello"[1:3] is "el"
  CHECK(render("{{ messages[0].content | trim }}|{{ messages[0]['content'].strip() }}|", three) == "a|a|");
  CHECK(render("{{ {'b': [1, 2.5, none, true], 'a': 'é\"'} | tojson }}", three) ==
        R"({"b": [1, 2.5, null, true], "a": "é\""})");
  CHECK(render("{{ {'a': [1]} | tojson(indent=2) }}", three) == "{\n  \"a\": [\n    1\n  ]\n}");
  CHECK(render("{{ messages | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') }}", three) == " a ,c");
  CHECK(render("{{ 'a,b,,c'.split(',') | length }}{{ 'x'.upper() }}{{ 'ab' ~ 3 }}{{ 1.0 }}{{ 7 // 2 }}{{ 7 / 2 }}", three) ==
        "4Xab31.033.5");
  CHECK(render("{% macro turn(role, text='?') %}[{{ role }}:{{ text }}]{% endmacro %}{{ turn('u') }}{{ turn('a', text='x') }}",
               three) == "[u:?][a:x]");
  CHECK(render("{{ strftime_now('%d %b %Y') }}", three) == "26 Jul 2025");
  CHECK(render("{% for i in range(3) %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% endfor %}", three) == "02");
  CHECK(render("{{ x is defined }}{{ none is none }}{{ messages is iterable }}{{ 'a' if false }}|", three) ==
        "falsetruetrue|");
}

std::string repeated(const std::string& text, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += text;
  return out;
}

// A template's integers are 64-bit (Python's are unbounded, HF's renderer's are doubles): a result
// beyond them, a range of billions and nesting without end are refused at their line, not left to
// C++'s undefined behaviour or a stack overflow. Found auditing std::stoll after the fuzzer's
// std::stol finding in the census journal.
TEST_CASE("integers beyond 64 bits, huge ranges and runaway nesting are refused at their line", "[chat][errors]") {
  // Exact up to the edges.
  CHECK(render("{{ 9223372036854775807 }}|{{ -9223372036854775807 - 1 }}|{{ (-9223372036854775807 - 1) % -1 }}|{{ 2 ** 62 }}|"
               "{{ -7 % 3 }}|{{ 7 // -2 }}",
               kOneUser) == "9223372036854775807|-9223372036854775808|0|4611686018427387904|-1|-4");
  CHECK(render("{{ range(0, 9223372036854775807, 4611686018427387904) | join(',') }}|"
               "{{ range(9223372036854775807, -9223372036854775807 - 1, -9223372036854775807 - 1) | join(',') }}|"
               "{{ range(5, 0, -2) | join(',') }}",
               kOneUser) == "0,4611686018427387904|9223372036854775807,-1|5,3,1");
  CHECK(render("{{ [1, 2, 3][1::9223372036854775807] | join(',') }}|{{ [1, 2, 3][::-9223372036854775807 - 1] | join(',') }}|"
               "{{ 'a b c'.split(' ', 9223372036854775807) | join(',') }}",
               kOneUser) == "2|3|a,b,c");
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"{{ 99999999999999999999 }}", "line 1, column 4: the integer 99999999999999999999 is beyond 64-bit integers"},
      {"{{ 9223372036854775807 + 1 }}", "line 1, column 24: 9223372036854775807 + 1 is beyond 64-bit integers"},
      {"{{ -9223372036854775807 - 2 }}", "-9223372036854775807 - 2 is beyond 64-bit integers"},
      {"{{ 4294967296 * 4294967296 }}", "4294967296 * 4294967296 is beyond 64-bit integers"},
      {"{{ -(-9223372036854775807 - 1) }}", "-(-9223372036854775808) is beyond 64-bit integers"},
      {"{{ (-9223372036854775807 - 1) | abs }}", "-(-9223372036854775808) is beyond 64-bit integers"},
      {"{{ (-9223372036854775807 - 1) // -1 }}", "9.22337e+18 is beyond 64-bit integers"},
      {"{{ 2 ** 63 }}", "'**': 9.22337e+18 is beyond 64-bit integers"},
      {"{{ (10.0 ** 300) | int }}", "1e+300 is beyond 64-bit integers"},
      {"{{ '99999999999999999999' | int }}", "the filter `int`: \"99999999999999999999\" is beyond 64-bit integers"},
      {"{{ range(100000000000) | length }}", "range() of 100000000000 numbers is more than attnviz makes (16777216)"},
      {"{{ range(-9223372036854775807 - 1, 9223372036854775807) | length }}",
       "range() of 18446744073709551615 numbers is more than attnviz makes"},
      {"{{ 'x' | indent(100000000000) }}", "indent's width 100000000000 is more than attnviz writes (65536)"},
      {"{{ {} | tojson(indent=100000000000) }}", "tojson's indent 100000000000 is more than attnviz writes (65536)"},
      {"{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
       "nested more than 1000 deep (a macro that calls itself without end?)"},
      {"{{ 1" + repeated(" + 1", 5000) + " }}", "expressions and statements nested more than 1000 deep"},
      {"{{ " + repeated("(", 300) + "1" + repeated(")", 300) + " }}",
       "line 1, column 204: brackets, operators and blocks nested more than 200 deep"},
      {"{{ " + repeated("[", 300) + repeated("]", 300) + " }}", "nested more than 200 deep"},
      {"{{ " + repeated("not ", 300) + "x }}", "nested more than 200 deep"},
      {"{{ " + repeated("- ", 300) + "1 }}", "nested more than 200 deep"},
      {repeated("{% if true %}", 300) + repeated("{% endif %}", 300), "nested more than 200 deep"},
  };
  for (const auto& [source, fault] : refused) {
    INFO(source.substr(0, 80));
    CHECK_THROWS_WITH(render(source, kOneUser), Contains("test.jinja: ") && Contains(fault));
  }
  // 150 levels of every kind stay inside both limits.
  CHECK(render("{{ " + repeated("(", 150) + "7" + repeated(")", 150) + " }}" + repeated("{% if true %}", 150) + "y" +
                   repeated("{% endif %}", 150),
               kOneUser) == "7y");
}

TEST_CASE("bad chat messages are refused naming the message and the field", "[chat]") {
  CHECK_THROWS_WITH(render("{{ messages }}", R"({"role": "user"})"), Contains("expected a list"));
  CHECK_THROWS_WITH(render("{{ messages }}", R"([{"content": "x"}])"), Contains("/0/role: missing field"));
  CHECK_THROWS_WITH(render("{{ messages }}", R"([{"role": 3, "content": "x"}])"), Contains("/0/role: expected a string"));
}

namespace {
void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
}  // namespace

TEST_CASE("a Hugging Face folder's template: chat_template.jinja first, else tokenizer_config.json's", "[chat]") {
  TempDir folder;
  write(folder.file("tokenizer_config.json"),
        R"({"bos_token": {"content": "<|begin_of_text|>", "lstrip": false}, "eos_token": "<|eot_id|>",
            "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "{{ bos_token }}D"}]})");
  ModelChatTemplate chat = read_model_chat_template(folder.path().string());
  CHECK(chat.source == "{{ bos_token }}D");
  CHECK(chat.bos_token == "<|begin_of_text|>");
  CHECK(chat.eos_token == "<|eot_id|>");
  CHECK_FALSE(chat.add_special_tokens);  // transformers' apply_chat_template adds none
  CHECK_THAT(chat.origin, Contains("tokenizer_config.json: chat_template/1 (default)"));
  write(folder.file("chat_template.jinja"), "{{ eos_token }}J");
  chat = read_model_chat_template(folder.path().string());
  CHECK(chat.source == "{{ eos_token }}J");
  CHECK_THAT(chat.origin, Contains("chat_template.jinja"));

  TempDir base;
  write(base.file("tokenizer_config.json"), R"({"bos_token": "<s>"})");
  CHECK_THROWS_WITH(read_model_chat_template(base.path().string()), Contains(base.path().string() + ": has no chat template"));
  write(base.file("tokenizer_config.json"), R"({"chat_template": 3})");
  CHECK_THROWS_WITH(read_model_chat_template(base.path().string()),
                    Contains("tokenizer_config.json: /chat_template: expected a string or a list"));
}

TEST_CASE("a GGUF without tokenizer.chat_template is refused naming the file", "[chat]") {
  const std::string stories = std::string(ATTNVIZ_DATA_DIR) + "/stories260k/stories260K.gguf";
  CHECK_THROWS_WITH(read_model_chat_template(stories), Contains(stories + ": has no chat template"));
}
