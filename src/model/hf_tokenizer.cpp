#include "model/hf_tokenizer.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;

// The Split patterns of the pre-tokenizers attnviz matches exactly (the tokenizer.json text of
// Meta's LLaMA 3 and Alibaba's Qwen 2 releases), to tokenizer.ggml.pre names.
const std::vector<std::pair<std::string, std::string>>& known_split_patterns() {
  static const std::vector<std::pair<std::string, std::string>> patterns = {
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       "llama3"},
      {R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
       "qwen2"},
  };
  return patterns;
}

// The tokenizer.ggml.pre name for `pre` (the pre_tokenizer object), or "" when not matched.
std::string pre_tokenizer_name(const json& pre) {
  if (!pre.is_object()) return "";
  const std::string type = pre.value("type", "");
  if (type == "ByteLevel") return pre.value("use_regex", true) ? "gpt-2" : "";
  if (type != "Sequence" || !pre.contains("pretokenizers") || !pre["pretokenizers"].is_array()) return "";
  const json& steps = pre["pretokenizers"];
  if (steps.size() != 2 || !steps[0].is_object() || !steps[1].is_object()) return "";
  if (steps[0].value("type", "") != "Split" || steps[1].value("type", "") != "ByteLevel" || steps[1].value("use_regex", true))
    return "";
  const json& pattern = steps[0]["pattern"];
  const std::string regex = pattern.is_object() ? pattern.value("Regex", "") : "";
  for (const auto& [known, name] : known_split_patterns())
    if (regex == known) return name;
  return "";
}

// The id a template prepends to a single sequence ({"SpecialToken": {"id": "<s>"}} first), if any.
std::optional<std::string> template_bos(const json& processor) {
  if (!processor.is_object()) return std::nullopt;
  if (processor.value("type", "") == "Sequence" && processor.contains("processors"))
    for (const json& step : processor["processors"])
      if (auto bos = template_bos(step)) return bos;
  if (processor.value("type", "") != "TemplateProcessing" || !processor.contains("single") || !processor["single"].is_array() ||
      processor["single"].empty())
    return std::nullopt;
  const json& first = processor["single"][0];
  if (first.is_object() && first.contains("SpecialToken") && first["SpecialToken"].contains("id"))
    return first["SpecialToken"]["id"].get<std::string>();
  return std::nullopt;
}

}  // namespace

Vocabulary vocabulary_from_tokenizer_json(const std::string& path) {
  const json root = read_json_file(path);  // no memory budget: tokenizer.json files run to tens of MB
  const json& model = root.contains("model") ? root["model"] : json();
  const std::string type = model.is_object() ? model.value("type", "") : "";
  if (type != "BPE")
    throw InputError::bad_value(path, "/model/type", "\"BPE\" (byte-level BPE; pass --token-ids for other tokenizers)",
                                "\"" + type + "\"");
  Vocabulary vocab;
  vocab.source = path;
  vocab.model = "gpt2";
  vocab.pre = pre_tokenizer_name(root.contains("pre_tokenizer") ? root["pre_tokenizer"] : json());
  if (vocab.pre.empty())
    throw InputError::inconsistent(path, "/pre_tokenizer: only ByteLevel (GPT-2) and Split on LLaMA 3's or Qwen 2's pattern + "
                                         "ByteLevel are supported; pass --token-ids");
  if (!model.contains("vocab") || !model["vocab"].is_object()) throw InputError::missing_field(path, "/model/vocab", "piece -> id");
  std::size_t size = model["vocab"].size();
  const json added = root.value("added_tokens", json::array());
  for (const json& token : added)
    if (token.is_object() && token.contains("id") && token["id"].is_number_unsigned())
      size = std::max<std::size_t>(size, token["id"].get<std::size_t>() + 1);
  if (size > (1u << 24)) throw InputError::inconsistent(path, "/model/vocab: more than 16777216 pieces");
  vocab.pieces.assign(size, "");
  vocab.types.assign(size, TokenType::Undefined);
  for (const auto& [piece, id] : model["vocab"].items()) {
    if (!id.is_number_unsigned() || id.get<std::size_t>() >= size)
      throw InputError::bad_value(path, "/model/vocab/" + piece, "an id below " + std::to_string(size), id.dump());
    vocab.pieces[id.get<std::size_t>()] = piece;
    vocab.types[id.get<std::size_t>()] = TokenType::Normal;
  }
  for (const json& token : added) {
    if (!token.is_object() || !token.contains("id") || !token.contains("content")) continue;
    const auto id = token["id"].get<std::size_t>();
    vocab.pieces[id] = token["content"].get<std::string>();
    vocab.types[id] = token.value("special", false) ? TokenType::Control : TokenType::UserDefined;
  }
  if (!model.contains("merges") || !model["merges"].is_array()) throw InputError::missing_field(path, "/model/merges", "the BPE merges");
  for (const json& merge : model["merges"]) {
    if (merge.is_string()) vocab.merges.push_back(merge.get<std::string>());
    else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string())
      vocab.merges.push_back(merge[0].get<std::string>() + " " + merge[1].get<std::string>());
    else throw InputError::bad_value(path, "/model/merges", "\"a b\" or [\"a\", \"b\"] pairs", merge.dump());
  }
  vocab.add_bos = false;
  vocab.add_space_prefix = false;
  if (const auto bos = template_bos(root.contains("post_processor") ? root["post_processor"] : json())) {
    for (std::size_t id = 0; id < size; ++id)
      if (vocab.pieces[id] == *bos) vocab.bos = static_cast<std::int32_t>(id);
    vocab.add_bos = vocab.bos.has_value();
  }
  return vocab;
}

}  // namespace attnviz
