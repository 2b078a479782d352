#include "model/hf_decoder.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "model/families/family.hpp"
#include "model/hf_config_keys.hpp"
#include "model/safetensors_weights.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// llama.cpp's tensor names (what DecoderModel asks for) to Hugging Face's: the family's own
// names first, then LLaMA's.
std::string hf_name(const std::string& name, const DecoderFamily& family) {
  static const std::map<std::string, std::string> whole = {{"token_embd.weight", "model.embed_tokens.weight"},
                                                           {"output_norm.weight", "model.norm.weight"},
                                                           {"output.weight", "lm_head.weight"}};
  static const std::map<std::string, std::string> per_layer = {
      {"attn_norm.weight", "input_layernorm.weight"},   {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_k.weight", "self_attn.k_proj.weight"},     {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_output.weight", "self_attn.o_proj.weight"}, {"attn_q.bias", "self_attn.q_proj.bias"},
      {"attn_k.bias", "self_attn.k_proj.bias"},         {"attn_v.bias", "self_attn.v_proj.bias"},
      {"ffn_norm.weight", "post_attention_layernorm.weight"}, {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},           {"ffn_down.weight", "mlp.down_proj.weight"}};
  if (const auto it = family.hf_names.find(name); it != family.hf_names.end()) return it->second;
  if (const auto it = whole.find(name); it != whole.end()) return it->second;
  if (name.rfind("blk.", 0) == 0) {
    const std::size_t dot = name.find('.', 4);
    const std::string tensor = name.substr(dot + 1);
    const std::string layer = family.hf_layer_prefix + name.substr(4, dot - 4) + ".";
    if (const auto it = family.hf_names.find(tensor); it != family.hf_names.end()) return layer + it->second;
    if (const auto it = per_layer.find(tensor); it != per_layer.end()) return layer + it->second;
  }
  return name;
}

// How the family's tensors are named in its folders, and the tie config.json asks for.
SafetensorsNaming family_naming(const DecoderFamily& family, bool tied) {
  SafetensorsNaming naming;
  naming.rename = [&family](const std::string& name) { return hf_name(name, family); };
  naming.optional_prefix = family.hf_optional_prefix;
  naming.transposed = family.hf_transposed;
  naming.norm_plus_one = family.hf_norm_plus_one;
  naming.tie = {hf_name("token_embd.weight", family), hf_name("output.weight", family), tied};
  return naming;
}

// config.json is read as transformers' LlamaConfig reads it: a member that is absent takes
// LlamaConfig's default, and a member present must have the type LlamaConfig gives it. A null
// means "absent" only where LlamaConfig's default is None (num_key_value_heads, head_dim,
// rope_scaling); elsewhere transformers would pass None on and fail later, so attnviz refuses it.
constexpr long long kMaxCount = (1LL << 31) - 1;

// A count (an integer from 1 to 2^31 − 1), or nullopt when absent (or null, with JsonNull::Absent).
std::optional<long> optional_count(const JsonSettings& config, const std::string& pointer, JsonNull null = JsonNull::Refused) {
  const json* value = config.find(pointer, null);
  if (!value) return std::nullopt;
  return static_cast<long>(read_integer(*value, config.file(), pointer, 1, kMaxCount));
}

// A count that must be present.
long count(const JsonSettings& config, const std::string& pointer) {
  const std::optional<long> value = optional_count(config, pointer);
  if (!value) throw InputError::missing_field(config.file(), pointer, "needed for a LlamaForCausalLM");
  return *value;
}

// The rope_scaling type: "rope_type", or "type" as older files write it (transformers copies
// "type" over "rope_type"; attnviz refuses the two when they disagree rather than pick one).
// "default" when the block (rope_scaling, or transformers 5's rope_parameters) is absent or null.
std::string rope_scaling_type(const JsonSettings& config, const std::string& block) {
  const json* scaling = config.find(block, JsonNull::Absent);
  if (!scaling) return "default";
  if (!scaling->is_object()) throw InputError::bad_value(config.file(), block, "an object or null", describe_json(*scaling));
  const std::optional<std::string> type = config.optional_text(block + "/rope_type");
  const std::optional<std::string> legacy = config.optional_text(block + "/type");
  // transformers 5's standardize_rope_params gives rope_parameters "default" when it names no type.
  if (!type && !legacy && block == "/rope_parameters") return "default";
  if (!type && !legacy)
    throw InputError::missing_field(config.file(), block + "/rope_type", "the scaling type, \"linear\" or \"llama3\"");
  if (type && legacy && *type != *legacy)
    throw InputError::inconsistent(config.file(), block + "/rope_type \"" + *type + "\" and " + block + "/type \"" + *legacy + "\" disagree");
  return type ? *type : *legacy;
}

// rope_scaling into c.rope, with the keys transformers' rope_config_validation requires for
// each type; every factor follows require_positive_setting, as GGUF's do.
void read_rope_scaling(const JsonSettings& config, const std::string& block, DecoderConfig& c) {
  const std::string type = rope_scaling_type(config, block);
  const std::string& file = config.file();
  const auto factor = [&](const std::string& key, const std::string& what) {
    const std::string pointer = block + "/" + key;
    if (!config.find(pointer)) throw InputError::missing_field(file, pointer, what);
    return require_positive_setting(config.number(pointer, 0), file, pointer);
  };
  if (type == "linear") {
    c.rope.linear_factor = factor("factor", "the linear scaling factor");
    c.rope_scaling = "linear x" + std::to_string(c.rope.linear_factor);
  } else if (type == "llama3") {
    const double scale = factor("factor", "LLaMA 3's scaling factor");
    const double low = factor("low_freq_factor", "LLaMA 3's low_freq_factor");
    const double high = factor("high_freq_factor", "LLaMA 3's high_freq_factor");
    const double original = factor("original_max_position_embeddings", "LLaMA 3's original context length");
    if (!(high > low))
      throw InputError::inconsistent(file, block + "/high_freq_factor " + config.find(block + "/high_freq_factor")->dump() +
                                               " must be above " + block + "/low_freq_factor " +
                                               config.find(block + "/low_freq_factor")->dump());
    c.rope.frequency_factors = llama3_frequency_factors(c.rope.theta, c.rope.dim, scale, low, high, original);
    c.rope_scaling = "llama3";
  } else if (type != "default") {
    const std::string pointer = config.find(block + "/rope_type") ? block + "/rope_type" : block + "/type";
    throw InputError::bad_value(file, pointer, "\"linear\" or \"llama3\"", "\"" + type + "\"");
  }
}

// Where the RoPE settings are: transformers 5 writes them all in one "rope_parameters" block
// (rope_type, rope_theta and the scaling factors), transformers 4 writes "rope_theta" at the
// top and the scaling in "rope_scaling". A config holding both blocks, or a member of
// rope_parameters attnviz does not read, is refused naming it: a θ or factor read past would be
// a different model computed without a word.
std::string rope_settings_block(const JsonSettings& config) {
  const json* parameters = config.find("/rope_parameters", JsonNull::Absent);
  if (!parameters) return "/rope_scaling";
  if (!parameters->is_object())
    throw InputError::bad_value(config.file(), "/rope_parameters", "an object or null", describe_json(*parameters));
  if (config.find("/rope_scaling", JsonNull::Absent))
    throw InputError::inconsistent(config.file(), "/rope_parameters and /rope_scaling are both given (transformers 5 writes "
                                                  "rope_parameters, transformers 4 rope_scaling); give one");
  static const std::set<std::string> kKnown = {"rope_type", "type", "rope_theta", "factor", "low_freq_factor",
                                               "high_freq_factor", "original_max_position_embeddings", "partial_rotary_factor"};
  for (const auto& [key, value] : parameters->items())
    if (!kKnown.count(key))
      throw InputError::inconsistent(config.file(), "/rope_parameters/" + key + " " + value.dump() +
                                                        ": a RoPE setting attnviz does not apply (it reads rope_type, rope_theta, "
                                                        "factor, low_freq_factor, high_freq_factor, "
                                                        "original_max_position_embeddings, partial_rotary_factor)");
  return "/rope_parameters";
}

// RoPE's base θ: rope_parameters' rope_theta (transformers 5), else the top-level rope_theta
// (transformers 4), else LlamaConfig's 10000. A top-level rope_theta beside rope_parameters
// must agree with it.
double rope_theta(const JsonSettings& config, const std::string& block) {
  const std::string& file = config.file();
  const double top = require_positive_setting(config.number("/rope_theta", 10000.0), file, "/rope_theta");
  if (block != "/rope_parameters" || !config.find("/rope_parameters/rope_theta")) return top;
  const double theta = require_positive_setting(config.number("/rope_parameters/rope_theta", 10000.0), file, "/rope_parameters/rope_theta");
  if (config.find("/rope_theta") && top != theta)
    throw InputError::inconsistent(file, "/rope_theta " + config.find("/rope_theta")->dump() + " and /rope_parameters/rope_theta " +
                                             config.find("/rope_parameters/rope_theta")->dump() + " disagree");
  return theta;
}

// The parts of LlamaForCausalLM that attnviz does not implement, named when a config asks for
// them: LlamaMLP applies ACT2FN[hidden_act] (attnviz: SiLU only) and biases when mlp_bias.
void refuse_unimplemented(const JsonSettings& config) {
  const std::string activation = config.text("/hidden_act", "silu");
  if (activation != "silu")
    throw InputError::bad_value(config.file(), "/hidden_act", "\"silu\" (SwiGLU, the only feed-forward attnviz implements)",
                                "\"" + activation + "\"");
  if (config.flag("/mlp_bias", false))
    throw InputError::bad_value(config.file(), "/mlp_bias", "false (attnviz's feed-forward layers have no biases)", "true");
}

// The width RoPE turns in each head, as transformers' _compute_default_rope_parameters gives it:
// int(head_dim · partial_rotary_factor); the other components pass through unturned. The factor
// is a number in (0, 1] (absent: 1), and the width it gives must be even and at least 2.
long rope_dim(const JsonSettings& config, DecoderConfig& c) {
  const std::string pointer = config.find("/rope_parameters/partial_rotary_factor") ? "/rope_parameters/partial_rotary_factor"
                                                                                     : "/partial_rotary_factor";
  const json* value = config.find(pointer);
  if (!value) return c.d_k;
  const double factor = config.number(pointer, 1.0);
  if (!(std::isfinite(factor) && factor > 0 && factor <= 1))
    throw InputError::bad_value(config.file(), pointer, "a number in (0, 1] (the fraction of each head RoPE turns)", value->dump());
  const auto dim = static_cast<long>(static_cast<double>(c.d_k) * factor);  // Python's int() truncates
  if (dim < 2 || dim % 2 != 0)
    throw InputError::inconsistent(config.file(), pointer + " " + value->dump() + " turns int(head_dim " + std::to_string(c.d_k) +
                                                      " x " + value->dump() + ") = " + std::to_string(dim) +
                                                      " components of each head: RoPE needs an even count of at least 2");
  c.partial_rotary_factor = factor;
  return dim;
}

DecoderConfig family_config(const JsonSettings& config, const DecoderFamily& family) {
  const std::string& file = config.file();
  if (family.block.ffn == FeedForwardKind::SwiGlu) refuse_unimplemented(config);
  DecoderConfig c;
  c.architecture = family.gguf_architecture.empty() ? "mistral" : family.gguf_architecture;
  c.block = family.block;
  c.num_layers = static_cast<int>(count(config, "/num_hidden_layers"));
  c.d_model = count(config, "/hidden_size");
  c.num_heads = static_cast<int>(count(config, "/num_attention_heads"));
  c.num_kv_heads = static_cast<int>(optional_count(config, "/num_key_value_heads", JsonNull::Absent).value_or(c.num_heads));
  c.d_ff = count(config, "/intermediate_size");
  c.n_vocab = count(config, "/vocab_size");
  if (c.num_heads % c.num_kv_heads != 0)
    throw InputError::inconsistent(file, "/num_key_value_heads " + std::to_string(c.num_kv_heads) + " does not divide /num_attention_heads " +
                                             std::to_string(c.num_heads));
  c.d_k = optional_count(config, "/head_dim", JsonNull::Absent).value_or(c.d_model / c.num_heads);
  c.context_length = optional_count(config, "/max_position_embeddings").value_or(0);
  c.rms_epsilon = require_rms_epsilon(config.number("/rms_norm_eps", 1e-6), file, "/rms_norm_eps");
  c.qkv_bias = config.flag("/attention_bias", family.qkv_bias);
  c.rope.style = RopeStyle::Half;  // Hugging Face's rotate_half
  const std::string rope_block = rope_settings_block(config);
  c.rope.theta = rope_theta(config, rope_block);
  c.rope.dim = rope_dim(config, c);
  read_rope_scaling(config, rope_block, c);
  c.tied_output = config.flag("/tie_word_embeddings", family.hf_tied_default);
  if (family.hf_settings) family.hf_settings(config, c);
  return c;
}

}  // namespace

bool is_hf_model_folder(const std::string& folder) {
  std::error_code ec;
  const fs::path f(folder);
  return fs::is_directory(f, ec) && fs::exists(f / "config.json", ec) &&
         (fs::exists(f / "model.safetensors", ec) || fs::exists(f / "model.safetensors.index.json", ec));
}

DecoderModel decoder_from_hf_folder(const std::string& folder) {
  const fs::path config_path = fs::path(folder) / "config.json";
  const json root = read_json_file(config_path.string());
  const JsonSettings config(root, config_path.string());
  const HfArchitecture taken = hf_architecture(config);
  const std::string& architecture = taken.name;
  const DecoderFamily* family = family_for_hf(architecture);
  if (!family)
    throw InputError::inconsistent(config.file(), "architecture \"" + architecture + "\" is not supported (supported: " + hf_family_list() + ")");
  DecoderConfig c = family->hf_config ? family->hf_config(config) : family_config(config, *family);
  if (!taken.warning.empty()) c.warnings.push_back(taken.warning);
  if (std::string unread = unread_config_warning(config, architecture); !unread.empty()) c.warnings.push_back(std::move(unread));
  c.file = folder;
  c.name = fs::path(folder).filename().string();
  if (c.name.empty()) c.name = fs::path(folder).parent_path().filename().string();
  const bool tied = c.tied_output;
  return DecoderModel(std::move(c), safetensors_weights(folder, family_naming(*family, tied)));
}

}  // namespace attnviz
