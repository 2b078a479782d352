// How a family turns RoPE in its sliding-window ("local") layers, per format: llama.cpp gives
// each architecture its own rope_freq_base_train_swa / rope_freq_scale_train_swa, transformers
// its own rotary embedding per layer type. The family files state their rule with these; the
// forward pass only picks DecoderConfig::local_rope for a window layer.
#pragma once

#include <optional>
#include <string>

#include "model/decoder_model.hpp"

namespace attnviz {

class GgufFile;
class JsonSettings;

/// The linear RoPE factor f of a GGUF as llama.cpp's load_hparams reads it into
/// rope_freq_scale_train = 1/f: {arch}.rope.scaling.factor, else the older
/// {arch}.rope.scale_linear; absent or 0 gives 1. It does not look at rope.scaling.type (whose
/// "none" makes llama.cpp's context unscale the global layers only). Throws InputError naming
/// the file and key for a value that is not finite and > 0.
double gguf_rope_factor(const GgufFile& file, const std::string& arch);

/// An architecture's rule for its sliding-window layers in llama.cpp (load_hparams), which its
/// graph applies to every layer is_swa marks (get_rope_freq_base / get_rope_freq_scale).
struct GgufLocalRope {
  /// θ when {arch}.rope.freq_base_swa is absent: nullopt = the file's rope.freq_base (Gemma 2),
  /// else this value (Gemma 3: 10 000).
  std::optional<double> default_theta;
  /// true: the file's linear factor, as rope_freq_scale_train, even under rope.scaling.type
  /// "none" (Gemma 2: rope_freq_scale_train_swa = rope_freq_scale_train); false: unscaled
  /// (Gemma 3: rope_freq_scale_train_swa = 1).
  bool file_scale = false;
};

/// c.local_rope from a GGUF under `rule`, from c.rope (already read: style, θ, width, the
/// global scaling as llama.cpp's context applies it): θ from {arch}.rope.freq_base_swa or the
/// rule's default, the linear factor as the rule says, no per-frequency factors (llama.cpp's
/// sliding-window graphs pass none). Left empty when the local layers turn as the global ones.
/// Adds a warning to c when the local layers are scaled while rope.scaling.type "none" leaves
/// the global ones unscaled. Throws InputError naming the file and key for a θ not > 0.
void gguf_local_rope(const GgufFile& file, const std::string& arch, const GgufLocalRope& rule, DecoderConfig& c);

/// c.local_rope as transformers' Gemma3TextModel builds rotary_emb_local: c.rope's style and
/// width, θ = /rope_local_base_freq (default 10 000), rope_type "default" (no scaling,
/// whatever rope_scaling gives the global layers). Throws InputError naming the key for a θ
/// not > 0.
void hf_gemma3_local_rope(const JsonSettings& config, DecoderConfig& c);

/// "none", "linear x4.000000": how RoPE settings scale positions, for the dump.
std::string rope_scaling_text(const RopeSettings& rope);

}  // namespace attnviz
