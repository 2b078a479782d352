// A decoder family: what one architecture computes differently from LLaMA, as data (its
// BlockTraits) and two small readers of its own settings, one per file format. The one
// forward pass (DecoderModel) runs every family; gguf_decoder and hf_decoder read the common
// settings (layers, widths, heads, ε, θ) and then call the family's reader for the rest
// (windows, caps, scales). Adding a family is one file in model/families/ and a row in
// family.cpp's list.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attention/rope.hpp"
#include "model/decoder_model.hpp"
#include "model/families/block_traits.hpp"

namespace attnviz {

class GgufFile;
class JsonSettings;

struct DecoderFamily {
  std::string gguf_architecture;  ///< llama.cpp's name and metadata prefix: "qwen2"
  std::string hf_architecture;    ///< transformers' class in config.json's architectures: "Qwen2ForCausalLM"
  BlockTraits block;
  bool qkv_bias = false;          ///< Q, K, V carry biases (Qwen 2, GPT-2)
  /// RoPE pairing of the GGUF tensors: llama.cpp picks it by architecture (LLAMA_ROPE_TYPE_NORM
  /// for llama, NEOX for the others); Hugging Face folders are always rotate-half.
  RopeStyle gguf_rope_style = RopeStyle::Half;
  /// llama.cpp loads rope_freqs.weight (LLaMA 3.1's per-frequency factors) for the architecture
  /// (llama); elsewhere a file holding it is refused, as llama.cpp refuses it.
  bool gguf_rope_frequency_factors = false;
  /// The norm ε's GGUF key after the prefix: RMSNorm's, or LayerNorm's for GPT-2.
  std::string gguf_epsilon_key = "attention.layer_norm_rms_epsilon";
  /// GGUF keys after the prefix that gguf_settings reads (beyond the common ones), so that
  /// the others can be named as ignored.
  std::vector<std::string> gguf_keys;
  /// The family's own GGUF settings into c (common ones already read); nullptr: none.
  /// Throws InputError naming the file and key for a value out of range.
  void (*gguf_settings)(const GgufFile& file, DecoderConfig& c) = nullptr;
  /// gguf_settings checks every key under the prefix itself (llama: check_llama_metadata);
  /// otherwise the keys neither common nor in gguf_keys are named in one warning.
  bool gguf_checks_all_keys = false;
  /// The family's own config.json settings into c; nullptr: none.
  void (*hf_settings)(const JsonSettings& config, DecoderConfig& c) = nullptr;
  /// Hugging Face tensor names where they differ from LLaMA's: llama.cpp's name after
  /// "blk.L." (or a whole name) -> the name after "model.layers.L." (or whole).
  std::map<std::string, std::string> hf_names;
  /// Hugging Face stores the norms' w where the norm multiplies by 1 + w (Gemma's
  /// GemmaRMSNorm); llama.cpp's converter writes 1 + w into the GGUF.
  bool hf_norm_plus_one = false;
  /// config.json's tie_word_embeddings default in the family's config class (Gemma: true).
  bool hf_tied_default = false;
  /// Where a layer's tensors live in the folder ("model.layers.L."), and a prefix its names may
  /// carry or not ("transformer." for GPT-2: saved by GPT2LMHeadModel with it, by GPT2Model
  /// without).
  std::string hf_layer_prefix = "model.layers.";
  std::string hf_optional_prefix;
  /// Tensors stored as Conv1D's [in, out] rather than Linear's [out, in] (GPT-2), by llama.cpp's
  /// name after "blk.L.": transposed when read, as convert_hf_to_gguf.py does.
  std::vector<std::string> hf_transposed;
  /// A family whose config.json has keys of its own (GPT-2's n_layer, n_embd…) reads the whole
  /// DecoderConfig itself; nullptr: the LLaMA-style keys, then hf_settings.
  DecoderConfig (*hf_config)(const JsonSettings& config) = nullptr;
};

/// Every decoder family this build runs, in the order the docs list them.
const std::vector<const DecoderFamily*>& decoder_families();

/// The family of a GGUF general.architecture, or nullptr.
const DecoderFamily* family_for_gguf(std::string_view architecture);
/// The family of a config.json architecture class, or nullptr.
const DecoderFamily* family_for_hf(std::string_view architecture);

/// "gemma2, gemma3, gpt2, llama, …" / "Gemma2ForCausalLM, …": for messages.
std::string gguf_family_list();
std::string hf_family_list();

// The families, one file each.
const DecoderFamily& llama_family();
const DecoderFamily& mistral_family();
const DecoderFamily& qwen2_family();
const DecoderFamily& qwen3_family();
const DecoderFamily& gemma2_family();
const DecoderFamily& gemma3_family();
const DecoderFamily& phi3_family();
const DecoderFamily& gpt2_family();
const DecoderFamily& olmo2_family();
const DecoderFamily& smollm3_family();
const DecoderFamily& granite_family();

}  // namespace attnviz
