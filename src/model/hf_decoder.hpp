// From a Hugging Face model folder (config.json + model.safetensors, or the sharded
// model.safetensors.index.json) to a runnable decoder: the settings of a family's class
// (LlamaForCausalLM, MistralForCausalLM, Qwen2/3, Gemma2/3, Phi3, GPT2LMHeadModel; see
// model/families/) read from config.json, and its tensors (model.layers.L.self_attn.q_proj.weight…)
// served to DecoderModel under llama.cpp's names, converted as convert_hf_to_gguf.py does
// (Gemma's norms 1 + w, GPT-2's Conv1D transposed), with tie_word_embeddings and the files'
// __metadata__ aliases followed (safetensors_weights). Hugging Face keeps W_Q and W_K rows in
// rotate-half order, so RoPE is applied in the "half" style here.
#pragma once

#include <memory>
#include <string>

#include "model/decoder_model.hpp"

namespace attnviz {

/// True when `folder` holds config.json and model.safetensors or model.safetensors.index.json.
bool is_hf_model_folder(const std::string& folder);

/// Reads config.json and maps the safetensors files. Throws InputError naming the file: as
/// read_json_file for a config.json or model.safetensors.index.json that cannot be read or is
/// not JSON (with line and column); with the key or tensor for an architecture no family
/// reads (listing those that are), a missing setting, a rope_scaling type other than linear or llama3, a
/// config that disagrees with the tensors' shapes; naming both tensors for a tie or an alias
/// whose shapes disagree, an alias to a tensor the folder lacks, and an alias cycle. config.json members no reader looked at
/// (hf_config_keys), and the classes of "architectures" past the first, become warnings.
DecoderModel decoder_from_hf_folder(const std::string& folder);

}  // namespace attnviz
