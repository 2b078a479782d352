#include "model/chat_template_source.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {
namespace {

namespace fs = std::filesystem;

ModelChatTemplate from_gguf(const std::string& path) {
  const GgufFile file(path);
  const std::optional<std::string> source = file.string("tokenizer.chat_template");
  if (!source) {
    throw InputError::inconsistent(path, "has no chat template (no tokenizer.chat_template key: a base model?); "
                                         "give the prompt as --text instead of --chat/--messages");
  }
  ModelChatTemplate chat{*source, path + ": tokenizer.chat_template", "", ""};
  const std::vector<std::string>* tokens = file.string_array("tokenizer.ggml.tokens");
  auto token_text = [&](const char* key) -> std::string {
    const std::optional<std::int64_t> id = file.integer(key);
    if (!id || tokens == nullptr || *id < 0 || static_cast<std::size_t>(*id) >= tokens->size()) return "";
    return (*tokens)[static_cast<std::size_t>(*id)];
  };
  chat.bos_token = token_text("tokenizer.ggml.bos_token_id");
  chat.eos_token = token_text("tokenizer.ggml.eos_token_id");
  const Vocabulary vocab = vocabulary_from_gguf(file);
  chat.vocabulary_adds_bos = vocab.add_bos;
  chat.vocabulary_adds_eos = vocab.add_eos;
  chat.add_special_tokens = true;
  return chat;
}

// tokenizer_config.json's bos_token / eos_token: a string, {"content": "..."} (an AddedToken) or null.
std::string token_text(const nlohmann::json& config, const std::string& file, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) return (*it)["content"].get<std::string>();
  throw InputError::bad_value(file, std::string("/") + key, "a string or {\"content\": \"...\"}", it->type_name());
}

ModelChatTemplate from_folder(const std::string& folder) {
  const fs::path config_path = fs::path(folder) / "tokenizer_config.json";
  const fs::path jinja_path = fs::path(folder) / "chat_template.jinja";
  std::error_code ec;
  nlohmann::json config = nlohmann::json::object();
  if (fs::is_regular_file(config_path, ec)) config = read_json_file(config_path.string(), 0, JsonRoot::Object, "");
  ModelChatTemplate chat;
  chat.bos_token = token_text(config, config_path.string(), "bos_token");
  chat.eos_token = token_text(config, config_path.string(), "eos_token");
  if (fs::is_regular_file(jinja_path, ec)) {
    std::ifstream in(jinja_path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw InputError::unreadable(jinja_path.string(), "cannot read the chat template");
    chat.source = text.str();
    chat.origin = jinja_path.string();
    return chat;
  }
  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) {
    throw InputError::inconsistent(folder, "has no chat template (neither chat_template.jinja nor a chat_template in "
                                           "tokenizer_config.json: a base model?); give the prompt as --text instead "
                                           "of --chat/--messages");
  }
  chat.origin = config_path.string() + ": chat_template";
  if (it->is_string()) {
    chat.source = it->get<std::string>();
    return chat;
  }
  // Several named templates ([{"name": "default", "template": "..."}, {"name": "tool_use", ...}]): the default one.
  if (it->is_array()) {
    for (std::size_t i = 0; i < it->size(); ++i) {
      const nlohmann::json& named = (*it)[i];
      if (named.is_object() && named.value("name", "") == "default" && named.contains("template") &&
          named["template"].is_string()) {
        chat.source = named["template"].get<std::string>();
        chat.origin = config_path.string() + ": chat_template/" + std::to_string(i) + " (default)";
        return chat;
      }
    }
  }
  throw InputError::bad_value(config_path.string(), "/chat_template",
                              "a string or a list of {\"name\", \"template\"} with one named \"default\"", it->type_name());
}

}  // namespace

ModelChatTemplate read_model_chat_template(const std::string& model_path) {
  std::error_code ec;
  if (fs::is_directory(model_path, ec)) {
    if (fs::is_regular_file(fs::path(model_path) / "model.bin", ec)) {
      throw InputError::inconsistent(model_path, "is a CTranslate2 model, which carries no chat template; give --text");
    }
    return from_folder(model_path);
  }
  return from_gguf(model_path);
}

}  // namespace attnviz
