#include "model/families/local_rope.hpp"

#include <algorithm>

#include "io/json_reader.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

namespace {
// c.local_rope = local, unless the local layers turn as the global ones.
void keep_if_different(const RopeSettings& local, DecoderConfig& c) {
  if (local.theta == c.rope.theta && local.linear_factor == c.rope.linear_factor && local.frequency_factors == c.rope.frequency_factors)
    return;
  c.local_rope = local;
}
}  // namespace

double gguf_rope_factor(const GgufFile& file, const std::string& arch) {
  const std::string key = file.has(arch + ".rope.scaling.factor") ? arch + ".rope.scaling.factor" : arch + ".rope.scale_linear";
  const std::optional<double> factor = file.number(key);
  if (!factor || *factor == 0) return 1.0;
  return require_positive_setting(*factor, file.path(), key);
}

void gguf_local_rope(const GgufFile& file, const std::string& arch, const GgufLocalRope& rule, DecoderConfig& c) {
  if (std::none_of(c.sliding_window.begin(), c.sliding_window.end(), [](long w) { return w > 0; })) return;
  const std::string base_key = arch + ".rope.freq_base_swa";
  RopeSettings local = c.rope;
  local.frequency_factors.clear();
  if (const std::optional<double> base = file.number(base_key)) local.theta = require_positive_setting(*base, file.path(), base_key);
  else if (rule.default_theta) local.theta = *rule.default_theta;
  local.linear_factor = rule.file_scale ? gguf_rope_factor(file, arch) : 1.0;
  if (rule.file_scale && local.linear_factor != c.rope.linear_factor)
    c.warnings.push_back(file.path() + ": metadata " + arch + ".rope.scaling.type is \"none\", but llama.cpp scales the positions of " +
                         arch + "'s sliding-window layers by its factor " + std::to_string(local.linear_factor) +
                         " all the same (rope_freq_scale_train_swa), and so does attnviz; the other layers are unscaled");
  keep_if_different(local, c);
}

void hf_gemma3_local_rope(const JsonSettings& config, DecoderConfig& c) {
  RopeSettings local = c.rope;
  local.theta = require_positive_setting(config.number("/rope_local_base_freq", 10000.0), config.file(), "/rope_local_base_freq");
  local.linear_factor = 1.0;
  local.frequency_factors.clear();
  keep_if_different(local, c);
}

std::string rope_scaling_text(const RopeSettings& rope) {
  std::string text = rope.linear_factor == 1.0 ? "" : "linear x" + std::to_string(rope.linear_factor);
  if (!rope.frequency_factors.empty()) text += text.empty() ? "llama3" : ", llama3";
  return text.empty() ? "none" : text;
}

}  // namespace attnviz
