// From a Hugging Face BERT folder (BertModel or BertForMaskedLM: config.json + safetensors) to a
// runnable EncoderModel: BertConfig's settings, and its tensors (embeddings.word_embeddings,
// encoder.layer.L.attention.self.query, …; "bert."-prefixed in BertForMaskedLM) served under
// llama.cpp's names, as convert_hf_to_gguf.py maps them.
#pragma once

#include <string>

#include "model/encoder_model.hpp"

namespace attnviz {

/// True when `folder` is a Hugging Face model folder whose config.json names BertModel or
/// BertForMaskedLM (the first of "architectures", else model_type "bert").
bool is_hf_encoder_folder(const std::string& folder);

/// Reads config.json (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size,
/// vocab_size, max_position_embeddings, type_vocab_size, layer_norm_eps; hidden_act "gelu" is
/// the exact erf GELU, "gelu_new" and "gelu_pytorch_tanh" the tanh one) and maps the tensors.
/// Throws InputError naming config.json and the member for a missing or mistyped setting, another
/// activation, a position_embedding_type other than "absolute", is_decoder or
/// add_cross_attention; from EncoderModel, a missing tensor named with the family.
EncoderModel encoder_from_hf_folder(const std::string& folder);

}  // namespace attnviz
