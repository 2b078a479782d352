#include "cli/chat_prompt.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"
#include "core/error.hpp"
#include "io/file_text.hpp"
#include "io/json_file.hpp"
#include "model/chat_template_source.hpp"

namespace attnviz {
namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return !prefix.empty() && text.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return !suffix.empty() && text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Does `span` hold the message's content (each text part of a list), white space around it aside?
bool renders_content(const nlohmann::json& message, const std::string& span) {
  const auto holds = [&](const nlohmann::json& text) {
    if (!text.is_string()) return true;
    const std::string& t = text.get_ref<const std::string&>();
    const std::size_t begin = t.find_first_not_of(" \t\r\n"), last = t.find_last_not_of(" \t\r\n");
    return begin == std::string::npos || span.find(t.substr(begin, last - begin + 1)) != std::string::npos;
  };
  if (!message.is_object() || !message.contains("content")) return true;
  const nlohmann::json& content = message["content"];
  if (!content.is_array()) return holds(content);
  return std::all_of(content.begin(), content.end(),
                     [&](const nlohmann::json& part) { return !part.is_object() || !part.contains("text") || holds(part["text"]); });
}

// Where each turn of the conversation ends in `whole` (the template's rendering of all of it):
// the first k messages rendered without the generation prompt share with `whole` the text up to
// the end of turn k, then differ or end; their common prefix is taken, and must hold the message's
// content. `dropped` bytes (a BOS the tokenizer adds again) were cut off the front of the prompt.
// Sets options.chat_turns_note instead when a prefix raises, or a turn's text is not where the
// ends put it (a template that moves the system message, say).
void place_turns(const ChatTemplate& chat, ChatRequest request, const std::string& whole, std::size_t dropped, Options& options) {
  const nlohmann::json messages = nlohmann::json::parse(request.messages_json);
  request.add_generation_prompt = false;
  std::size_t previous = 0;
  for (std::size_t k = 0; k < messages.size(); ++k) {
    request.messages_json = nlohmann::json(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(k + 1)).dump();
    std::string part;
    try {
      part = chat.render(request);
    } catch (const InputError& e) {
      options.chat_turn_ends.clear();
      options.chat_turns_note = "the turns are not marked: the template refuses the first " + std::to_string(k + 1) +
                                " message" + (k == 0 ? "" : "s") + " alone (" + e.what() + ")";
      return;
    }
    const std::size_t shared = static_cast<std::size_t>(
        std::mismatch(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(std::min(part.size(), whole.size())), whole.begin())
            .first - part.begin());
    const std::size_t end = shared > dropped ? shared - dropped : 0;
    if (end < previous || !renders_content(messages[k], whole.substr(previous + dropped, shared - std::min(shared, previous + dropped)))) {
      options.chat_turn_ends.clear();
      options.chat_turns_note = "the turns are not marked: the template does not render the messages in order (message " +
                                std::to_string(k) + ", " + (messages[k].is_object() && messages[k].value("role", nlohmann::json()).is_string()
                                                                ? messages[k]["role"].get<std::string>()
                                                                : std::string("?")) + ")";
      return;
    }
    const nlohmann::json& role = messages[k].is_object() && messages[k].contains("role") ? messages[k]["role"] : nlohmann::json();
    options.chat_turn_ends.emplace_back(role.is_string() ? role.get<std::string>() : "?", end);
    previous = end;
  }
}

}  // namespace

Options with_chat_prompt(const Options& options) {
  const bool conversation = !options.chat_turns.empty() || !options.messages_file.empty();
  if (!conversation) {
    if (!options.add_generation_prompt) {
      throw UsageError::bad_option("--no-add-generation-prompt", "applies to a conversation: give --chat or --messages");
    }
    return options;
  }
  if (options.text) throw UsageError::bad_option("--chat", "give the prompt as --text or as a conversation (--chat/--messages), not both");
  if (options.token_ids) throw UsageError::bad_option("--chat", "give --token-ids or a conversation (--chat/--messages), not both");
  if (!options.chat_turns.empty() && !options.messages_file.empty()) {
    throw UsageError::bad_option("--messages", "give the conversation as --messages FILE.json or as --chat/--chat-role, not both");
  }
  if (options.model.empty()) throw UsageError::bad_option("--chat", "needs --model, whose chat template renders the conversation");
  if (options.no_parse_special) {
    throw UsageError::bad_option("--no-parse-special", "applies to --text: a chat template's turn markers are special tokens, "
                                                       "read as such (render the text yourself and pass --text to read them as text)");
  }
  const ModelChatTemplate source = read_model_chat_template(options.model);
  const ChatTemplate chat(source.source, source.origin);
  ChatRequest request;
  request.messages_json = options.messages_file.empty()
                               ? chat_messages_json(options.chat_turns)
                               : std::string(read_input_text(options.messages_file, 0, JsonRoot::Any).view());
  request.bos_token = source.bos_token;
  request.eos_token = source.eos_token;
  request.add_generation_prompt = options.add_generation_prompt;
  std::string prompt;
  try {
    prompt = chat.render(request);
  } catch (const InputError& e) {
    const std::string what = e.what();
    // A fault in the messages names them by their file.
    if (!options.messages_file.empty() && what.rfind("chat messages", 0) == 0) {
      throw InputError(options.messages_file + what.substr(std::string("chat messages").size()));
    }
    throw;
  }
  Options resolved = options;
  resolved.chat_prompt = prompt;
  const std::string whole = prompt;
  std::size_t dropped = 0;
  if (source.add_special_tokens) {
    if (!options.no_bos && source.vocabulary_adds_bos && starts_with(prompt, source.bos_token)) {
      prompt.erase(0, source.bos_token.size());
      dropped = source.bos_token.size();
    }
    if (!options.no_bos && source.vocabulary_adds_eos && ends_with(prompt, source.eos_token)) {
      prompt.erase(prompt.size() - source.eos_token.size());
    }
  } else {
    resolved.no_bos = true;  // transformers: apply_chat_template(tokenize=True) adds no special tokens
  }
  resolved.text = prompt;
  place_turns(chat, request, whole, dropped, resolved);
  // An EOS cut off the end may leave the last turn's end past the text.
  for (auto& turn : resolved.chat_turn_ends) turn.second = std::min(turn.second, prompt.size());
  return resolved;
}

}  // namespace attnviz
