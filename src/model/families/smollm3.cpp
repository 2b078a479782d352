// SmolLM3 (SmolLM3ForCausalLM; llama.cpp's smollm3): LLaMA's block (RMSNorm, grouped-query
// attention, SwiGLU; the GGUF's W_Q, W_K rows in adjacent pairs) with NoPE layers, which turn
// no RoPE at all. Which layers: llama.cpp hard-codes every 4th (layer l when (l + 1) % 4 == 0,
// hparams.n_no_rope_layer_step = 4; no metadata key); transformers reads config.json's
// no_rope_layers (1 = RoPE, 0 = NoPE, per layer), else every no_rope_layer_interval-th layer.
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {

// Layers l with (l + 1) % period == 0: llama.cpp's use_rope test, transformers' default list.
std::vector<int> every_nth_layer(int num_layers, long period) {
  std::vector<int> layers;
  for (int l = 0; l < num_layers; ++l)
    if ((l + 1) % period == 0) layers.push_back(l);
  return layers;
}

// Bias tensors llama.cpp's smollm3 graph would add when a file holds them; attnviz's SmolLM3 has none.
void refuse_biases(const GgufFile& file) {
  for (const char* name : {"blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias", "blk.0.attn_output.bias",
                           "blk.0.ffn_up.bias", "blk.0.ffn_gate.bias", "blk.0.ffn_down.bias"})
    if (file.find_tensor(name))
      throw InputError::inconsistent(file.path(), std::string("tensor ") + name + ": a bias attnviz's smollm3 does not apply");
}

void smollm3_gguf(const GgufFile& file, DecoderConfig& c) {
  refuse_biases(file);
  c.no_rope_layers = every_nth_layer(c.num_layers, 4);
}

// config.json's no_rope_layers: one 0 or 1 per layer (transformers indexes it by layer, so a
// shorter list fails there; a longer one would name layers past the model: both refused).
std::vector<int> hf_no_rope_layers(const JsonSettings& config, int num_layers) {
  const nlohmann::json* list = config.find("/no_rope_layers", JsonNull::Absent);
  if (!list) {
    const nlohmann::json* interval = config.find("/no_rope_layer_interval", JsonNull::Refused);
    const long period = interval ? static_cast<long>(read_integer(*interval, config.file(), "/no_rope_layer_interval", 1, 1 << 20)) : 4;
    return every_nth_layer(num_layers, period);
  }
  config.consider("/no_rope_layer_interval");  // transformers reads it only when no_rope_layers is absent
  if (!list->is_array())
    throw InputError::bad_value(config.file(), "/no_rope_layers", "a list of 0 (NoPE) and 1 (RoPE), one per layer", describe_json(*list));
  if (static_cast<long>(list->size()) != num_layers)
    throw InputError::inconsistent(config.file(), "/no_rope_layers has " + std::to_string(list->size()) + " entries but /num_hidden_layers is " +
                                                      std::to_string(num_layers));
  std::vector<int> layers;
  for (std::size_t l = 0; l < list->size(); ++l)
    if (read_integer((*list)[l], config.file(), "/no_rope_layers/" + std::to_string(l), 0, 1) == 0) layers.push_back(static_cast<int>(l));
  return layers;
}

void smollm3_hf(const JsonSettings& config, DecoderConfig& c) {
  if (config.flag("/attention_bias", false))
    throw InputError::bad_value(config.file(), "/attention_bias", "false (attnviz's SmolLM3 has no biases)", "true");
  c.qkv_bias = false;
  c.no_rope_layers = hf_no_rope_layers(config, c.num_layers);
  // SmolLM3Config: use_sliding_window makes the NoPE layers sliding-window ones (layer_types);
  // attnviz does not apply that, as llama.cpp's smollm3 does not.
  if (config.flag("/use_sliding_window", false))
    throw InputError::bad_value(config.file(), "/use_sliding_window", "false (attnviz does not apply SmolLM3's sliding windows, as llama.cpp does not)",
                                "true");
  config.consider("/sliding_window");  // of effect only with use_sliding_window
  if (const std::optional<std::vector<long>> types = hf_layer_types(config, c.num_layers, 1))
    for (std::size_t l = 0; l < types->size(); ++l)
      if ((*types)[l] != 0)
        throw InputError::bad_value(config.file(), "/layer_types/" + std::to_string(l),
                                    "\"full_attention\" (attnviz does not apply SmolLM3's sliding windows)", "\"sliding_attention\"");
}

}  // namespace

const DecoderFamily& smollm3_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "smollm3";
    f.hf_architecture = "SmolLM3ForCausalLM";
    // The converter (SmolLM3Model, a LlamaModel) permutes W_Q, W_K into adjacent pairs, and
    // llama.cpp turns them as LLAMA_ROPE_TYPE_NORM.
    f.gguf_rope_style = RopeStyle::Interleaved;
    f.gguf_settings = smollm3_gguf;
    f.hf_settings = smollm3_hf;
    f.hf_tied_default = true;
    return f;
  }();
  return family;
}

}  // namespace attnviz
