#include "cli/serve_request.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "cli/text_input.hpp"
#include "io/json_file.hpp"

namespace attnviz {
namespace {

using Json = nlohmann::json;

// The most tokens one request may ask to generate (the CLI's --generate has no cap; a server
// answering strangers keeps one).
constexpr long kMaxServedGenerate = 4096;

[[noreturn]] void refuse(const std::string& member, const std::string& detail) {
  throw UsageError::bad_option(member, detail);
}

}  // namespace

Options serve_request(const Options& base, const std::string& body, bool tokenize_only) {
  const Json request = parse_json_text(body, "request", "numbers must fit in 64 bits");
  if (!request.is_object()) refuse("request", "expected a JSON object such as {\"text\": \"Once upon a time\"}");
  Options o = base;
  for (const auto& [name, value] : request.items()) {
    if (name == "text") {
      if (!value.is_string()) refuse("text", "expected a string");
      const std::string& text = value.get_ref<const std::string&>();
      if (const std::string problem = utf8_problem(text); !problem.empty()) refuse("--text", problem);
      if (text.empty()) refuse("--text", tokenize_only ? "is empty" : "is empty: nothing to run");
      o.text = text;
    } else if (name == "token_ids" && !tokenize_only) {
      if (!value.is_array() || value.empty()) refuse("--token-ids", "expected a non-empty list of token ids from 0");
      std::vector<int> ids;
      for (const Json& id : value) {
        if (!id.is_number_integer() || id.get<long long>() < 0 || id.get<long long>() > 1000000000)
          refuse("--token-ids", "expected token ids from 0, got " + id.dump());
        ids.push_back(id.get<int>());
      }
      o.token_ids = ids;
    } else if (name == "layers" && !tokenize_only) {
      if (!value.is_string()) refuse("--layers", "expected a string: all, 2, 0,3 or 1-4");
      o.layers = value.get<std::string>();
    } else if (name == "measure" && !tokenize_only) {
      if (!value.is_string() || (value != "weights" && value != "norms" && value != "alti"))
        refuse("--measure", "expected weights, norms or alti, got " + value.dump());
      o.measure = value.get<std::string>();
    } else if (name == "generate" && !tokenize_only) {
      if (!value.is_number_integer() || value.get<long long>() < 0 || value.get<long long>() > kMaxServedGenerate)
        refuse("--generate", "expected a whole number from 0 to " + std::to_string(kMaxServedGenerate) + ", got " + value.dump());
      o.generate = value.get<int>() > 0 ? value.get<int>() : -1;
    } else {
      refuse("request", "unknown member /" + name + (tokenize_only ? " (this endpoint takes text)"
                                                                   : " (known: text, token_ids, layers, measure, generate)"));
    }
  }
  if (o.text && o.token_ids) refuse("--text", "give text or token_ids, not both");
  if (!o.text && !o.token_ids) refuse("--text", tokenize_only ? "required" : "give text or token_ids");
  return o;
}

}  // namespace attnviz
