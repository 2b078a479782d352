#include "model/hf_config_keys.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.hpp"
#include "io/json_reader.hpp"

namespace attnviz {

namespace {

// The model_type transformers' config class writes for each class attnviz reads
// (LlamaConfig.model_type = "llama", Gemma3TextConfig's is "gemma3_text", …).
const std::map<std::string, std::string>& model_type_of_class() {
  static const std::map<std::string, std::string> types = {
      {"LlamaForCausalLM", "llama"},   {"MistralForCausalLM", "mistral"}, {"Qwen2ForCausalLM", "qwen2"},
      {"Qwen3ForCausalLM", "qwen3"},   {"Gemma2ForCausalLM", "gemma2"},   {"Gemma3ForCausalLM", "gemma3_text"},
      {"Phi3ForCausalLM", "phi3"},     {"GPT2LMHeadModel", "gpt2"},       {"Olmo2ForCausalLM", "olmo2"},
      {"SmolLM3ForCausalLM", "smollm3"}, {"GraniteForCausalLM", "granite"}, {"BertModel", "bert"},
      {"BertForMaskedLM", "bert"}};
  return types;
}

// ["LlamaForCausalLM"] for model_type "llama": what /architectures would hold, as a hint.
std::string class_hint(const std::optional<std::string>& model_type) {
  std::string classes;
  for (const auto& [name, type] : model_type_of_class())
    if (model_type && type == *model_type) classes += (classes.empty() ? "[\"" : " or [\"") + name + "\"]";
  return classes.empty() ? "[\"LlamaForCausalLM\"]" : classes;
}

}  // namespace

HfArchitecture hf_architecture(const JsonSettings& config) {
  const nlohmann::json* list = config.find("/architectures", JsonNull::Absent);
  const std::optional<std::string> model_type = config.optional_text("/model_type", JsonNull::Absent);
  // Without /architectures a BERT folder is known by its model_type; a decoder is read by its
  // class, which model_type alone does not name (LlamaForCausalLM or a classifier?).
  const auto& types = model_type_of_class();
  const bool known_type = model_type && std::any_of(types.begin(), types.end(), [&](const auto& t) { return t.second == *model_type; });
  if (!list && known_type && *model_type != "bert")
    throw InputError::missing_field(config.file(), "/architectures", "the model's class, e.g. " + class_hint(model_type) +
                                                                         " for /model_type \"" + *model_type + "\"");
  if (!list) return {model_type.value_or("unknown"), ""};
  if (!list->is_array()) throw InputError::bad_value(config.file(), "/architectures", "a list of class names", describe_json(*list));
  // An empty list names no class: reading /model_type instead would be a guess at the class.
  if (list->empty())
    throw InputError::bad_value(config.file(), "/architectures", "the model's class, e.g. " + class_hint(model_type),
                                "an empty list" + (model_type ? " (/model_type is \"" + *model_type + "\")" : std::string()));
  HfArchitecture taken{read_string(list->front(), config.file(), "/architectures/0"), ""};
  const auto known = model_type_of_class().find(taken.name);
  if (model_type && known != model_type_of_class().end() && known->second != *model_type)
    throw InputError::inconsistent(config.file(), "/model_type \"" + *model_type + "\" disagrees with /architectures/0 \"" +
                                                      taken.name + "\" (a \"" + known->second +
                                                      "\" model): one of them is wrong; attnviz will not guess which");
  std::string all = taken.name, others;
  for (std::size_t i = 1; i < list->size(); ++i) {
    const std::string name = read_string((*list)[i], config.file(), "/architectures/" + std::to_string(i));
    all += ", " + name;
    others += (others.empty() ? "" : ", ") + name;
  }
  if (!others.empty())
    taken.warning = config.file() + ": /architectures lists " + all + ": attnviz reads " + taken.name + " (the first), not " + others;
  return taken;
}

const std::set<std::string>& hf_harmless_config_members() {
  static const std::set<std::string> members = {
      // bookkeeping: where the config came from and how it was saved
      "_name_or_path", "architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "auto_map",
      "tokenizer_class", "_attn_implementation_autoset",
      // token ids: the tokenizer's and generation's business (hf_end_tokens reads eos_token_id)
      "bos_token_id", "eos_token_id", "pad_token_id", "unk_token_id", "sep_token_id", "cls_token_id", "mask_token_id",
      "decoder_start_token_id",
      // training only: dropouts are off at inference, initialisation is replaced by the weights
      "attention_dropout", "hidden_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob", "classifier_dropout",
      "attn_pdrop", "embd_pdrop", "resid_pdrop", "initializer_range", "gradient_checkpointing",
      // switches of the Python runtime: KV cache, returned outputs; pretraining_tp splits a matmul in slices of the same sum
      "use_cache", "cache_implementation", "output_attentions", "output_hidden_states", "return_dict", "pretraining_tp",
      // a classification head's labels (no head is run)
      "id2label", "label2id", "problem_type"};
  return members;
}

std::string unread_config_warning(const JsonSettings& config, const std::string& architecture) {
  std::string unread;
  for (const std::string& pointer : config.unread_members(hf_harmless_config_members()))
    unread += (unread.empty() ? "" : ", ") + pointer;
  if (unread.empty()) return "";
  return config.file() + ": config.json members attnviz does not read for " + architecture + ", ignored: " + unread;
}

}  // namespace attnviz
