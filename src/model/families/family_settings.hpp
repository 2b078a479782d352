// Settings several families read the same way: a sliding window, a soft-cap, a local:global
// layer pattern. Each check names the file and key of a bad value (InputError, exit 1).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/decoder_model.hpp"

namespace attnviz {

class GgufFile;
class JsonSettings;

/// A GGUF integer setting that must be ≥ 1 (a window), or `fallback` when absent.
/// Throws InputError::bad_value naming the file and key for a value ≤ 0.
std::optional<long> gguf_window(const GgufFile& file, const std::string& key, std::optional<long> fallback);

/// A GGUF soft-cap c > 0, or `fallback` when absent. Throws for c ≤ 0 or not finite.
double gguf_cap(const GgufFile& file, const std::string& key, double fallback);

/// Each layer's window from a GGUF's `key` (<arch>.attention.sliding_window_pattern), as
/// llama.cpp's set_swa_pattern reads an integer n: layer l is local when n == 0 or
/// l % n < n − 1; absent: `default_period`. Throws InputError naming the file and key for an
/// array (per-layer flags, which the llama.cpp attnviz follows does not apply) or a negative n.
std::vector<long> gguf_window_pattern(const GgufFile& file, const std::string& key, int num_layers, long window, int default_period);

/// config.json's window at `pointer` (≥ 1), or nullopt when absent or null.
std::optional<long> hf_window(const JsonSettings& config, const std::string& pointer);

/// config.json's soft-cap at `pointer` (> 0), or 0 when absent or null (no cap).
double hf_cap(const JsonSettings& config, const std::string& pointer);

/// The windows of num_layers layers where every `period`-th layer is global and the others
/// local: layer l has `window` when l % period < period − 1, else 0 (llama.cpp's
/// set_swa_pattern, transformers' sliding_window_pattern). period 1: none local.
std::vector<long> periodic_windows(int num_layers, long window, int period);

/// config.json's /layer_types ("sliding_attention" / "full_attention" per layer) as windows,
/// or nullopt when absent. Throws naming the file and key when its length is not num_layers
/// or an entry is another word.
std::optional<std::vector<long>> hf_layer_types(const JsonSettings& config, int num_layers, long window);

/// The GELU transformers' ACT2FN gives config.json's activation at `pointer` (default
/// `fallback`): "gelu_new", "gelu_pytorch_tanh", "gelu_fast" the tanh approximation, "gelu" the
/// exact erf one. Throws InputError naming the file and key for another name.
GeluKind hf_gelu(const JsonSettings& config, const std::string& pointer, const std::string& fallback);

/// Qwen 2/3's config.json: use_sliding_window true (windows in layers ≥ max_window_layers), or
/// a /layer_types entry "sliding_attention", is refused by name, as attnviz does not apply it;
/// false or absent passes (and sliding_window, max_window_layers are then of no effect).
void refuse_qwen_sliding_window(const JsonSettings& config, DecoderConfig& c);

}  // namespace attnviz
