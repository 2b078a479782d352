// Where a model keeps its chat template and the bos/eos token texts the template is given:
// a GGUF file's tokenizer.chat_template with the texts of tokenizer.ggml.bos_token_id and
// eos_token_id (as llama.cpp passes them), or a Hugging Face folder's chat_template.jinja (which
// transformers prefers) or tokenizer_config.json's chat_template, with that file's bos_token and
// eos_token. Does not render the template (chat/chat_template).
#pragma once

#include <string>

namespace attnviz {

struct ModelChatTemplate {
  std::string source;     ///< the template text
  std::string origin;     ///< where it came from, for messages: "FILE: tokenizer.chat_template"
  std::string bos_token;  ///< "" when the model names none
  std::string eos_token;
  /// How the runtimes tokenize the rendered prompt. llama.cpp (common_chat_templates_apply) drops
  /// a leading bos text when its vocabulary adds BOS itself, and a trailing eos text when it adds
  /// EOS, then tokenizes with special tokens added; transformers' apply_chat_template tokenizes
  /// the text as rendered, adding none.
  bool vocabulary_adds_bos = false;
  bool vocabulary_adds_eos = false;
  bool add_special_tokens = false;
};

/// The chat template of the model at `model_path` (a .gguf file or a Hugging Face folder).
/// Throws InputError naming the file when the model carries no chat template (a base model, a
/// CTranslate2 folder) or when a field has the wrong type ("/chat_template: expected a string or
/// a list of {name, template}").
ModelChatTemplate read_model_chat_template(const std::string& model_path);

}  // namespace attnviz
