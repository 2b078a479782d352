// What Gemma 2 and Gemma 3 read alike: the attention scale as each format defines it, the
// windows and caps of config.json, and Hugging Face's names for the four norms of a block.
#pragma once

#include <map>
#include <string>

#include "model/decoder_model.hpp"

namespace attnviz {

class JsonSettings;

/// llama.cpp's f_attention_scale for gemma2/gemma3 GGUF files: 1/√(d_model / heads) for the
/// 27B models (46 layers for Gemma 2, 62 for Gemma 3), else 1/√head_dim; in float32 as
/// llama.cpp computes it.
double gemma_gguf_scale(const DecoderConfig& c);

/// config.json of Gemma2Config / Gemma3TextConfig into c: scale query_pre_attn_scalar^-½
/// (default 256), /attn_logit_softcapping and /final_logit_softcapping (null = none; absent =
/// the defaults given, 0 = none), windows from /layer_types, else every `period`-th layer global
/// (Gemma 3's /sliding_window_pattern may change the period), window /sliding_window (default
/// `window`), the GeGLU's GELU from /hidden_activation (hf_gelu). Throws InputError naming key and file.
void gemma_hf_settings(const JsonSettings& config, DecoderConfig& c, int period, long window, double attn_cap, double final_cap);

/// llama.cpp's tensor names -> Gemma's Hugging Face names for the block's norms.
std::map<std::string, std::string> gemma_hf_names();

}  // namespace attnviz
