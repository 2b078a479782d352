// GPT-2 (Radford et al. 2019; GPT2LMHeadModel; llama.cpp's gpt2): learned absolute positions
// added to the embeddings, LayerNorm with biases, Q, K, V fused with biases, the attention
// output and both feed-forward matrices with biases, GELU (tanh; llama.cpp: its float16 table),
// the output tied to the embedding when output.weight is absent. No RoPE.
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/families/family.hpp"
#include "model/families/family_settings.hpp"

namespace attnviz {

namespace {

// A count of transformers' GPT2Config: its value (1 … 2^31 − 1), or the class default when absent.
long gpt2_count(const JsonSettings& config, const std::string& pointer, long fallback) {
  const nlohmann::json* value = config.find(pointer, JsonNull::Absent);
  return value ? static_cast<long>(read_integer(*value, config.file(), pointer, 1, (1LL << 31) - 1)) : fallback;
}

// config.json as GPT2Config reads it (its own keys: n_layer, n_embd, n_head, n_positions,
// n_inner), refusing what would change the maths attnviz computes.
DecoderConfig gpt2_hf(const JsonSettings& config) {
  const std::string& file = config.file();
  const GeluKind gelu = hf_gelu(config, "/activation_function", "gelu_new");
  if (config.flag("/scale_attn_by_inverse_layer_idx", false))
    throw InputError::bad_value(file, "/scale_attn_by_inverse_layer_idx", "false (attnviz scales scores by 1/sqrt(d_k) only)", "true");
  if (!config.flag("/scale_attn_weights", true))
    throw InputError::bad_value(file, "/scale_attn_weights", "true (attnviz scales scores by 1/sqrt(d_k))", "false");
  // n_ctx: GPT2Config's old name of n_positions, no longer read; summary_* and
  // task_specific_params: GPT2DoubleHeadsModel's head and pipeline defaults; the upcast of
  // reorder_and_upcast_attn changes nothing in float32.
  for (const char* member : {"/n_ctx", "/summary_activation", "/summary_first_dropout", "/summary_proj_to_labels", "/summary_type",
                             "/summary_use_proj", "/task_specific_params", "/reorder_and_upcast_attn"})
    config.consider(member);
  DecoderConfig c;
  c.architecture = "gpt2";
  c.block = gpt2_family().block;
  c.qkv_bias = true;
  c.num_layers = static_cast<int>(gpt2_count(config, "/n_layer", 12));
  c.d_model = gpt2_count(config, "/n_embd", 768);
  c.num_heads = static_cast<int>(gpt2_count(config, "/n_head", 12));
  c.num_kv_heads = c.num_heads;
  if (c.d_model % c.num_heads != 0)
    throw InputError::inconsistent(file, "/n_head " + std::to_string(c.num_heads) + " does not divide /n_embd " + std::to_string(c.d_model));
  c.d_k = c.d_model / c.num_heads;
  c.d_ff = gpt2_count(config, "/n_inner", 4 * c.d_model);
  c.n_vocab = gpt2_count(config, "/vocab_size", 50257);
  c.context_length = gpt2_count(config, "/n_positions", 1024);
  c.rms_epsilon = require_rms_epsilon(config.number("/layer_norm_epsilon", 1e-5), file, "/layer_norm_epsilon");
  c.tied_output = config.flag("/tie_word_embeddings", true);
  c.gelu = gelu;
  return c;
}

}  // namespace

const DecoderFamily& gpt2_family() {
  static const DecoderFamily family = [] {
    DecoderFamily f;
    f.gguf_architecture = "gpt2";
    f.hf_architecture = "GPT2LMHeadModel";
    f.block.norm = NormKind::Layer;
    f.block.norm_bias = true;
    f.block.ffn = FeedForwardKind::Gelu;
    f.block.ffn_bias = true;
    f.block.fused_qkv = true;
    f.block.output_bias = true;
    f.block.positions = PositionKind::Learned;
    f.qkv_bias = true;
    f.gguf_epsilon_key = "attention.layer_norm_epsilon";
    f.hf_config = gpt2_hf;
    f.hf_layer_prefix = "h.";
    f.hf_optional_prefix = "transformer.";
    f.hf_transposed = {"attn_qkv.weight", "attn_output.weight", "ffn_up.weight", "ffn_down.weight"};
    f.hf_names = {{"token_embd.weight", "wte.weight"},          {"position_embd.weight", "wpe.weight"},
                  {"output_norm.weight", "ln_f.weight"},        {"output_norm.bias", "ln_f.bias"},
                  {"attn_norm.weight", "ln_1.weight"},          {"attn_norm.bias", "ln_1.bias"},
                  {"attn_qkv.weight", "attn.c_attn.weight"},    {"attn_qkv.bias", "attn.c_attn.bias"},
                  {"attn_output.weight", "attn.c_proj.weight"}, {"attn_output.bias", "attn.c_proj.bias"},
                  {"ffn_norm.weight", "ln_2.weight"},           {"ffn_norm.bias", "ln_2.bias"},
                  {"ffn_up.weight", "mlp.c_fc.weight"},         {"ffn_up.bias", "mlp.c_fc.bias"},
                  {"ffn_down.weight", "mlp.c_proj.weight"},     {"ffn_down.bias", "mlp.c_proj.bias"}};
    return f;
  }();
  return family;
}

}  // namespace attnviz
