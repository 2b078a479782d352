#include "model/hf_decoder.hpp"

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "model/safetensors_file.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// llama.cpp's tensor names (what DecoderModel asks for) to Hugging Face's.
std::string hf_name(const std::string& name) {
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
  if (const auto it = whole.find(name); it != whole.end()) return it->second;
  if (name.rfind("blk.", 0) == 0) {
    const std::size_t dot = name.find('.', 4);
    if (const auto it = per_layer.find(name.substr(dot + 1)); it != per_layer.end())
      return "model.layers." + name.substr(4, dot - 4) + "." + it->second;
  }
  return name;
}

class SafetensorsWeights : public WeightSource {
 public:
  explicit SafetensorsWeights(const fs::path& folder) {
    if (fs::exists(folder / "model.safetensors")) {
      files_.push_back(std::make_unique<SafetensorsFile>((folder / "model.safetensors").string()));
    } else {
      const fs::path index_path = folder / "model.safetensors.index.json";
      const json index = read_json_file(index_path.string());
      if (!index.contains("weight_map") || !index["weight_map"].is_object())
        throw InputError::missing_field(index_path.string(), "/weight_map", "tensor name -> shard file");
      std::map<std::string, std::size_t> shard_of_file;
      for (const auto& [name, shard] : index["weight_map"].items()) {
        if (!shard.is_string()) throw InputError::bad_value(index_path.string(), "/weight_map/" + name, "a file name", shard.dump());
        const std::string file = shard.get<std::string>();
        if (file.find('/') != std::string::npos) throw InputError::bad_value(index_path.string(), "/weight_map/" + name, "a file in the folder", file);
        if (!shard_of_file.count(file)) {
          shard_of_file[file] = files_.size();
          files_.push_back(std::make_unique<SafetensorsFile>((folder / file).string()));
        }
      }
    }
  }

  Matrix matrix(const std::string& name, long rows, long cols) const override {
    const auto [file, tensor] = lookup(name);
    const std::vector<std::int64_t> expected{rows, cols};
    if (tensor->shape != expected)
      throw InputError::inconsistent(file->path(), "tensor " + tensor->name + ": expected shape " + shape_string(rows, cols) +
                                                       " (config.json), got " + shape_text(tensor->shape));
    return file->matrix(*tensor);
  }
  Vector vector(const std::string& name, long n) const override {
    const auto [file, tensor] = lookup(name);
    if (tensor->shape != std::vector<std::int64_t>{n})
      throw InputError::inconsistent(file->path(), "tensor " + tensor->name + ": expected shape [" + std::to_string(n) +
                                                       "] (config.json), got " + shape_text(tensor->shape));
    const Matrix values = file->matrix(*tensor);
    return Eigen::Map<const Vector>(values.data(), values.size());
  }
  bool has(const std::string& name) const override { return find(hf_name(name)).second != nullptr; }
  std::vector<std::int64_t> shape(const std::string& name) const override {
    const auto found = find(hf_name(name));
    return found.second ? found.second->shape : std::vector<std::int64_t>{};
  }
  std::string describe(const std::string& name) const override {
    const auto found = find(hf_name(name));
    return (found.first ? found.first->path() : files_.front()->path()) + ": tensor " + hf_name(name);
  }

 private:
  static std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
  }
  std::pair<const SafetensorsFile*, const SafetensorsTensor*> find(const std::string& name) const {
    for (const auto& file : files_)
      if (const SafetensorsTensor* tensor = file->find(name)) return {file.get(), tensor};
    return {nullptr, nullptr};
  }
  std::pair<const SafetensorsFile*, const SafetensorsTensor*> lookup(const std::string& name) const {
    const auto found = find(hf_name(name));
    if (!found.second) throw InputError::inconsistent(files_.front()->path(), "missing tensor " + hf_name(name));
    return found;
  }

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
};

template <typename T>
T setting(const json& config, const std::string& key, const std::string& file) {
  if (!config.contains(key) || config[key].is_null()) throw InputError::missing_field(file, "/" + key, "needed for a LlamaForCausalLM");
  try {
    return config[key].get<T>();
  } catch (const json::exception&) {
    throw InputError::bad_value(file, "/" + key, "a number", config[key].dump());
  }
}

DecoderConfig llama_config(const json& config, const std::string& file) {
  DecoderConfig c;
  c.architecture = "llama";
  c.num_layers = setting<int>(config, "num_hidden_layers", file);
  c.d_model = setting<long>(config, "hidden_size", file);
  c.num_heads = setting<int>(config, "num_attention_heads", file);
  c.num_kv_heads = config.contains("num_key_value_heads") ? setting<int>(config, "num_key_value_heads", file) : c.num_heads;
  c.d_ff = setting<long>(config, "intermediate_size", file);
  c.n_vocab = setting<long>(config, "vocab_size", file);
  if (c.num_layers <= 0 || c.d_model <= 0 || c.num_heads <= 0 || c.num_kv_heads <= 0 || c.d_ff <= 0 || c.n_vocab <= 0)
    throw InputError::inconsistent(file, "layer, width, head and vocabulary counts must be positive");
  if (c.num_heads % c.num_kv_heads != 0)
    throw InputError::inconsistent(file, "/num_key_value_heads " + std::to_string(c.num_kv_heads) + " does not divide /num_attention_heads " +
                                             std::to_string(c.num_heads));
  c.d_k = config.contains("head_dim") && !config["head_dim"].is_null() ? setting<long>(config, "head_dim", file) : c.d_model / c.num_heads;
  c.context_length = config.value("max_position_embeddings", 0L);
  c.rms_epsilon = config.value("rms_norm_eps", 1e-6);
  c.qkv_bias = config.value("attention_bias", false);
  c.rope.style = RopeStyle::Half;  // Hugging Face's rotate_half
  c.rope.theta = config.value("rope_theta", 10000.0);
  c.rope.dim = c.d_k;
  if (config.contains("rope_scaling") && config["rope_scaling"].is_object()) {
    const json& s = config["rope_scaling"];
    const std::string type = s.value("rope_type", s.value("type", std::string("default")));
    const double factor = s.value("factor", 1.0);
    if (type == "linear") {
      c.rope.linear_factor = factor;
      c.rope_scaling = "linear x" + std::to_string(factor);
    } else if (type == "llama3") {
      c.rope.frequency_factors = llama3_frequency_factors(c.rope.theta, c.rope.dim, factor, s.value("low_freq_factor", 1.0),
                                                          s.value("high_freq_factor", 4.0),
                                                          s.value("original_max_position_embeddings", 8192.0));
      c.rope_scaling = "llama3";
    } else if (type != "default") {
      throw InputError::bad_value(file, "/rope_scaling/rope_type", "\"linear\" or \"llama3\"", "\"" + type + "\"");
    }
  }
  c.tied_output = config.value("tie_word_embeddings", false);
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
  const json config = read_json_file(config_path.string());
  const std::string file = config_path.string();
  const json architectures = config.value("architectures", json::array());
  const std::string architecture = architectures.is_array() && !architectures.empty() && architectures[0].is_string()
                                       ? architectures[0].get<std::string>() : config.value("model_type", std::string("unknown"));
  if (architecture != "LlamaForCausalLM")
    throw InputError::inconsistent(file, "architecture \"" + architecture + "\" is not supported (supported: LlamaForCausalLM)");
  DecoderConfig c = llama_config(config, file);
  c.file = folder;
  c.name = fs::path(folder).filename().string();
  if (c.name.empty()) c.name = fs::path(folder).parent_path().filename().string();
  return DecoderModel(std::move(c), std::make_unique<SafetensorsWeights>(folder));
}

}  // namespace attnviz
