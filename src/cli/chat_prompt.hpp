// --chat, --chat-role, --messages (issue 34): the conversation rendered through the model's own
// chat template becomes the text the command runs, tokenized the way the model's runtime does it
// (GGUF: llama.cpp's common_chat_templates_apply; a Hugging Face folder: transformers'
// apply_chat_template). Does not tokenize (the jobs do, with special tokens parsed).
#pragma once

#include "cli/options.hpp"

namespace attnviz {

/// `options` with a conversation rendered into `text` (and kept in `chat_prompt`), or unchanged
/// when none is given. Throws UsageError for a conversation beside --text or --token-ids, --chat
/// beside --messages, --no-parse-special, or no --model; InputError naming the model when it has no chat template,
/// naming the template's line when it raises, naming FILE.json and the message for bad messages.
Options with_chat_prompt(const Options& options);

}  // namespace attnviz
