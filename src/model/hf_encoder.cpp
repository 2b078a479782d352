#include "model/hf_encoder.hpp"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "model/hf_config_keys.hpp"
#include "model/hf_decoder.hpp"
#include "model/safetensors_weights.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr long long kMaxCount = (1LL << 31) - 1;

// llama.cpp's BERT tensor names to transformers' (convert_hf_to_gguf.py's map, reversed).
std::string bert_name(const std::string& prefix, const std::string& name) {
  static const std::map<std::string, std::string> whole = {{"token_embd", "embeddings.word_embeddings"},
                                                           {"position_embd", "embeddings.position_embeddings"},
                                                           {"token_types", "embeddings.token_type_embeddings"},
                                                           {"token_embd_norm", "embeddings.LayerNorm"}};
  static const std::map<std::string, std::string> per_layer = {
      {"attn_q", "attention.self.query"},          {"attn_k", "attention.self.key"},
      {"attn_v", "attention.self.value"},          {"attn_output", "attention.output.dense"},
      {"attn_output_norm", "attention.output.LayerNorm"}, {"ffn_up", "intermediate.dense"},
      {"ffn_down", "output.dense"},                {"layer_output_norm", "output.LayerNorm"}};
  const std::size_t dot = name.rfind('.');
  const std::string stem = name.substr(0, dot), kind = name.substr(dot + 1);
  if (const auto it = whole.find(stem); it != whole.end()) return prefix + it->second + "." + kind;
  if (stem.rfind("blk.", 0) == 0) {
    const std::size_t layer_end = stem.find('.', 4);
    if (const auto it = per_layer.find(stem.substr(layer_end + 1)); it != per_layer.end())
      return prefix + "encoder.layer." + stem.substr(4, layer_end - 4) + "." + it->second + "." + kind;
  }
  return prefix + name;
}

// Whether the encoder's tensors carry BertForMaskedLM's "bert." (its position table is never
// tied, so it tells even when the word embeddings are stored as the MLM decoder).
bool has_bert_prefix(const std::string& folder) {
  SafetensorsNaming naming;
  naming.rename = [](const std::string& name) { return name; };
  return safetensors_weights(folder, std::move(naming))->has("bert.embeddings.position_embeddings.weight");
}

long count(const JsonSettings& config, const std::string& pointer, long fallback) {
  const json* value = config.find(pointer);
  return value ? static_cast<long>(read_integer(*value, config.file(), pointer, 1, kMaxCount)) : fallback;
}

}  // namespace

bool is_hf_encoder_folder(const std::string& folder) {
  if (!is_hf_model_folder(folder)) return false;
  const std::string path = (fs::path(folder) / "config.json").string();
  const json root = read_json_file(path);
  if (!root.is_object()) return false;
  const std::string architecture = hf_architecture(JsonSettings(root, path)).name;
  return architecture == "BertModel" || architecture == "BertForMaskedLM" || architecture == "bert";
}

EncoderModel encoder_from_hf_folder(const std::string& folder) {
  const std::string path = (fs::path(folder) / "config.json").string();
  const json root = read_json_file(path);
  const JsonSettings config(root, path);
  const HfArchitecture taken = hf_architecture(config);
  EncoderConfig c;
  if (!taken.warning.empty()) c.warnings.push_back(taken.warning);
  c.file = folder;
  c.name = fs::path(folder).filename().string();
  if (c.name.empty()) c.name = fs::path(folder).parent_path().filename().string();
  // BertConfig's defaults (bert-base) for members a config leaves out.
  c.d_model = count(config, "/hidden_size", 768);
  c.num_layers = static_cast<int>(count(config, "/num_hidden_layers", 12));
  c.num_heads = static_cast<int>(count(config, "/num_attention_heads", 12));
  c.d_ff = count(config, "/intermediate_size", 3072);
  c.n_vocab = count(config, "/vocab_size", 30522);
  c.n_positions = count(config, "/max_position_embeddings", 512);
  c.n_token_types = count(config, "/type_vocab_size", 2);
  c.layer_norm_epsilon = require_rms_epsilon(config.number("/layer_norm_eps", 1e-12), path, "/layer_norm_eps");
  if (c.d_model % c.num_heads != 0)
    throw InputError::inconsistent(path, "/num_attention_heads " + std::to_string(c.num_heads) + " does not divide /hidden_size " +
                                             std::to_string(c.d_model));
  const std::string activation = config.text("/hidden_act", "gelu");
  if (activation == "gelu") c.gelu = GeluKind::Erf;  // transformers' ACT2FN["gelu"]: the exact erf GELU
  else if (activation == "gelu_new" || activation == "gelu_pytorch_tanh") c.gelu = GeluKind::Tanh;
  else throw InputError::bad_value(path, "/hidden_act", "\"gelu\", \"gelu_new\" or \"gelu_pytorch_tanh\"", "\"" + activation + "\"");
  const std::string positions = config.text("/position_embedding_type", "absolute");
  if (positions != "absolute")
    throw InputError::bad_value(path, "/position_embedding_type", "\"absolute\" (learned positions, the only kind attnviz implements)",
                                "\"" + positions + "\"");
  for (const char* flag : {"/is_decoder", "/add_cross_attention"})
    if (config.flag(flag, false)) throw InputError::bad_value(path, flag, "false (a BERT encoder)", "true");
  // BertForMaskedLM keeps the encoder under "bert."; BertModel saves it bare. Its MLM decoder
  // (cls.predictions.decoder.weight) is tied to the word embeddings unless tie_word_embeddings
  // is false (PretrainedConfig's default true): either stands in for the other.
  const bool tied = config.flag("/tie_word_embeddings", true);
  if (std::string unread = unread_config_warning(config, taken.name); !unread.empty()) c.warnings.push_back(std::move(unread));
  const std::string prefix = has_bert_prefix(folder) ? "bert." : "";
  SafetensorsNaming naming;
  naming.rename = [prefix](const std::string& name) { return bert_name(prefix, name); };
  naming.tie = {bert_name(prefix, "token_embd.weight"), "cls.predictions.decoder.weight", tied};
  return EncoderModel(std::move(c), safetensors_weights(folder, std::move(naming)));
}

}  // namespace attnviz
