#include "model/llama_metadata.hpp"

#include <optional>
#include <set>
#include <sstream>
#include <variant>

#include "core/error.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {

// Keys (after "llama.") that gguf_decoder reads and applies.
const std::set<std::string, std::less<>> kApplied = {
    "block_count",          "embedding_length",          "feed_forward_length",  "context_length",
    "attention.head_count", "attention.head_count_kv",   "attention.key_length", "attention.layer_norm_rms_epsilon",
    "rope.freq_base",       "rope.dimension_count",      "rope.scaling.type",    "rope.scaling.factor",
    "rope.scale_linear"};

// Keys llama.cpp's converter writes for llama models that leave the forward pass unchanged for
// the settings attnviz applies: the vocabulary's size (token_embd.weight's rows are used), and
// what only YaRN reads (YaRN itself is refused).
const std::set<std::string, std::less<>> kHarmless = {"vocab_size", "rope.scaling.original_context_length",
                                                      "rope.scaling.finetuned"};

// llama.cpp's graph for architecture llama has no sliding window (Mistral's GGUFs are llama):
// a window key is not applied there, so attnviz, following llama.cpp for GGUF files, computes
// full causal attention too and says so instead of refusing a file llama.cpp runs.
const std::set<std::string, std::less<>> kWindowKeys = {"attention.sliding_window", "attention.sliding_window_pattern"};

// Keys that would change the maths, with the value that changes nothing.
struct MathsKey {
  const char* key;
  double neutral;
  const char* effect;
};
const MathsKey kMathsKeys[] = {
    {"attn_logit_softcapping", 0, "attention scores would be soft-capped (c·tanh(s/c))"},
    {"final_logit_softcapping", 0, "the output logits would be soft-capped"},
    {"attention.scale", 0, "attention scores would use this scale instead of 1/√d_k"},
    {"attention.clamp_kqv", 0, "Q, K and V would be clamped"},
    {"attention.max_alibi_bias", 0, "ALiBi biases would be added to the scores"},
    {"attention.causal", 1, "the attention mask would not be causal"},
    {"attention.layer_norm_epsilon", -1, "the norms would be LayerNorm, not RMSNorm"},
    {"attention.temperature_length", 0, "attention would be temperature-scaled by position"},
    {"embedding_scale", 1, "the embeddings would be scaled"},
    {"residual_scale", 1, "the residual branches would be scaled"},
    {"logit_scale", 1, "the output logits would be scaled"},
    {"rope.scaling.attn_factor", 1, "RoPE's cos and sin would be scaled"},
    {"expert_count", 0, "the feed-forward would be a mixture of experts"},
    {"expert_used_count", 0, "the feed-forward would be a mixture of experts"},
    {"interleave_moe_layer_step", 0, "some layers would be a mixture of experts"},
    {"use_parallel_residual", 0, "attention and feed-forward would run in parallel"},
    {"swin_norm", 0, "the norms would follow each block (Swin norm)"},
};

// The value as a number for the neutral check (a bool as 0/1), or nullopt for another kind.
std::optional<double> scalar_of(const GgufValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value.value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value.value)) return *d;
  if (const auto* b = std::get_if<bool>(&value.value)) return *b ? 1.0 : 0.0;
  return std::nullopt;
}

std::string value_text(const GgufValue& value) {
  if (const auto* b = std::get_if<bool>(&value.value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&value.value)) return "\"" + *s + "\"";
  if (std::holds_alternative<GgufValue::Array>(value.value)) return "(an array)";
  std::ostringstream text;
  text << *scalar_of(value);
  return text.str();
}

}  // namespace

std::vector<std::string> check_llama_metadata(const GgufFile& file, long d_k) {
  const std::string prefix = "llama.";
  std::vector<std::string> unknown, window;
  for (const auto& [full_key, value] : file.metadata()) {
    if (full_key.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string key = full_key.substr(prefix.size());
    if (kApplied.count(key) || kHarmless.count(key)) continue;
    if (kWindowKeys.count(key)) {
      if (scalar_of(value) != 0.0) {
        window.push_back(file.path() + ": metadata " + full_key + " = " + value_text(value) +
                         ": llama.cpp applies no sliding window for architecture llama, and neither does attnviz: every "
                         "query sees all earlier keys");
      }
      continue;
    }
    if (key == "rope.freq_base_swa") {  // llama.cpp's rope_freq_base_train_swa, read by no layer of a llama graph
      window.push_back(file.path() + ": metadata " + full_key + " = " + value_text(value) +
                       ": the RoPE base of sliding-window layers, which architecture llama has none of in llama.cpp: no layer "
                       "turns by it, in attnviz either");
      continue;
    }
    if (key == "attention.value_length") {  // the converter writes it beside key_length when head_dim is set
      if (scalar_of(value) == static_cast<double>(d_k)) continue;
      throw InputError::inconsistent(file.path(), "metadata " + full_key + " = " + value_text(value) +
                                                      ": value heads would have another width than the key heads' " +
                                                      std::to_string(d_k) + ", which attnviz does not apply for architecture llama");
    }
    const MathsKey* maths = nullptr;
    for (const MathsKey& candidate : kMathsKeys)
      if (key == candidate.key) maths = &candidate;
    if (!maths) {
      unknown.push_back(full_key);
      continue;
    }
    if (scalar_of(value) == maths->neutral) continue;
    throw InputError::inconsistent(file.path(), "metadata " + full_key + " = " + value_text(value) + ": " + maths->effect +
                                                    ", which attnviz does not apply for architecture llama");
  }
  if (unknown.empty()) return window;
  std::string list;
  for (const std::string& key : unknown) list += (list.empty() ? "" : ", ") + key;
  window.push_back(file.path() + ": metadata attnviz does not know for architecture llama, ignored: " + list);
  return window;
}

}  // namespace attnviz
