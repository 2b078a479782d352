#include "cli/chat_prompt.hpp"

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
  if (source.add_special_tokens) {
    if (!options.no_bos && source.vocabulary_adds_bos && starts_with(prompt, source.bos_token)) {
      prompt.erase(0, source.bos_token.size());
    }
    if (!options.no_bos && source.vocabulary_adds_eos && ends_with(prompt, source.eos_token)) {
      prompt.erase(prompt.size() - source.eos_token.size());
    }
  } else {
    resolved.no_bos = true;  // transformers: apply_chat_template(tokenize=True) adds no special tokens
  }
  resolved.text = prompt;
  return resolved;
}

}  // namespace attnviz
