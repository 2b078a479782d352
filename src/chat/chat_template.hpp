// A model's chat template (GGUF tokenizer.chat_template, or a Hugging Face folder's
// chat_template) rendered for a conversation, as transformers' apply_chat_template does:
// `messages`, `bos_token`, `eos_token` and `add_generation_prompt` in the template's scope.
// The template is parsed once, when constructed, so a construct the subset lacks is refused
// before anything runs. Does not tokenize the text (the caller does, with special tokens parsed).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_ast.hpp"
#include "chat/jinja_interpreter.hpp"

namespace attnviz {

/// The conversation and the settings a template is rendered with.
struct ChatRequest {
  /// OpenAI-style messages as JSON text: `[{"role": "user", "content": "..."}, ...]`; other
  /// members (tool_calls, reasoning_content, content as a list of parts) reach the template too.
  std::string messages_json;
  std::string bos_token;  ///< the token text the model file names ("" when it names none)
  std::string eos_token;
  bool add_generation_prompt = true;
};

class ChatTemplate {
 public:
  /// Parses `source`. `origin` names where it came from in messages ("model.gguf:
  /// tokenizer.chat_template"). Throws InputError "ORIGIN: line L, column C: DETAIL" for a syntax
  /// error or a construct the subset lacks (the statement `{% include %}`, the filter `wordwrap`).
  ChatTemplate(std::string source, std::string origin);

  /// The rendered prompt. Throws InputError naming the origin and the template's line when the
  /// template raises (raise_exception: "Conversation roles must alternate ...") or fails, and
  /// naming the messages when they are not a JSON list of objects.
  std::string render(const ChatRequest& request,
                     const jinja::Clock& clock = jinja::system_clock()) const;

  const std::string& origin() const { return origin_; }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::string origin_;
  std::vector<jinja::NodePtr> program_;
};

/// The JSON text of a conversation given as (role, content) turns, for ChatRequest.
std::string chat_messages_json(const std::vector<std::pair<std::string, std::string>>& turns);

}  // namespace attnviz
