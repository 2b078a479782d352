#include "chat/chat_template.hpp"

#include <nlohmann/json.hpp>

#include "chat/jinja_error.hpp"
#include "chat/jinja_parser.hpp"
#include "core/error.hpp"

namespace attnviz {

ChatTemplate::ChatTemplate(std::string source, std::string origin)
    : source_(std::move(source)), origin_(std::move(origin)) {
  try {
    program_ = jinja::parse_template(source_);
  } catch (const jinja::TemplateError& e) {
    throw InputError::parse(origin_, static_cast<std::size_t>(e.line), static_cast<std::size_t>(e.column), e.what());
  }
}

std::string ChatTemplate::render(const ChatRequest& request, const jinja::Clock& clock) const {
  jinja::Value messages;
  try {
    messages = jinja::from_json_text(request.messages_json);
  } catch (const nlohmann::json::exception& e) {
    throw InputError::inconsistent("chat messages", std::string("not valid JSON: ") + e.what());
  }
  if (!messages.is_list()) {
    throw InputError::bad_value("chat messages", "", "a list of {\"role\", \"content\"} objects", messages.type_name());
  }
  for (std::size_t i = 0; i < messages.as_list().size(); ++i) {
    const jinja::Value& message = messages.as_list()[i];
    const std::string pointer = "/" + std::to_string(i);
    if (!message.is_mapping()) throw InputError::bad_value("chat messages", pointer, "an object", message.type_name());
    const jinja::Value* role = message.as_mapping().find("role");
    if (role == nullptr) throw InputError::missing_field("chat messages", pointer + "/role", "the speaker: system, user, assistant, ...");
    if (!role->is_string()) throw InputError::bad_value("chat messages", pointer + "/role", "a string", role->type_name());
  }
  jinja::Mapping context;
  context.set("messages", messages);
  context.set("bos_token", jinja::Value(request.bos_token));
  context.set("eos_token", jinja::Value(request.eos_token));
  context.set("add_generation_prompt", jinja::Value(request.add_generation_prompt));
  try {
    return jinja::render(program_, context, clock);
  } catch (const jinja::TemplateError& e) {
    if (e.line == 0) throw InputError::inconsistent(origin_, e.what());
    throw InputError::parse(origin_, static_cast<std::size_t>(e.line), static_cast<std::size_t>(e.column), e.what());
  }
}

std::string chat_messages_json(const std::vector<std::pair<std::string, std::string>>& turns) {
  nlohmann::json messages = nlohmann::json::array();
  for (const auto& [role, content] : turns) messages.push_back({{"role", role}, {"content", content}});
  return messages.dump();
}

}  // namespace attnviz
