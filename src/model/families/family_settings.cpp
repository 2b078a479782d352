#include "model/families/family_settings.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_reader.hpp"
#include "model/formats/gguf_file.hpp"

namespace attnviz {

std::optional<long> gguf_window(const GgufFile& file, const std::string& key, std::optional<long> fallback) {
  const std::optional<std::int64_t> value = file.integer(key);
  if (!value) return fallback;
  if (*value <= 0 || *value > (1LL << 31))
    throw InputError::bad_value(file.path(), "metadata " + key, "a window of at least 1 token", std::to_string(*value));
  return static_cast<long>(*value);
}

double gguf_cap(const GgufFile& file, const std::string& key, double fallback) {
  const std::optional<double> value = file.number(key);
  if (!value) return fallback;
  if (!(std::isfinite(*value) && *value > 0))
    throw InputError::bad_value(file.path(), "metadata " + key, "a soft-cap > 0", std::to_string(*value));
  return *value;
}

std::vector<long> gguf_window_pattern(const GgufFile& file, const std::string& key, int num_layers, long window, int default_period) {
  if (!file.has(key)) return periodic_windows(num_layers, window, default_period);
  const GgufValue& value = file.metadata().find(key)->second;
  if (std::holds_alternative<GgufValue::Array>(value.value))
    throw InputError::inconsistent(file.path(), "metadata " + key + " is a list of per-layer flags, which llama.cpp does not apply to this "
                                                "architecture and attnviz does not either (an integer period is read)");
  const std::optional<std::int64_t> period = file.integer(key);
  if (*period < 0 || *period > (1LL << 31))
    throw InputError::bad_value(file.path(), "metadata " + key, "a period of at least 0 (0: every layer local)", std::to_string(*period));
  if (*period == 0) return std::vector<long>(static_cast<std::size_t>(num_layers), window);
  return periodic_windows(num_layers, window, static_cast<int>(*period));
}

std::optional<long> hf_window(const JsonSettings& config, const std::string& pointer) {
  const nlohmann::json* value = config.find(pointer, JsonNull::Absent);
  if (!value) return std::nullopt;
  if (!value->is_number_integer() || value->get<long long>() <= 0)
    throw InputError::bad_value(config.file(), pointer, "a window of at least 1 token, or null", value->dump());
  return static_cast<long>(read_integer(*value, config.file(), pointer, 1, (1LL << 31) - 1));
}

double hf_cap(const JsonSettings& config, const std::string& pointer) {
  const nlohmann::json* value = config.find(pointer, JsonNull::Absent);
  if (!value) return 0;
  const double cap = config.number(pointer, 0);
  if (!(std::isfinite(cap) && cap > 0)) throw InputError::bad_value(config.file(), pointer, "a soft-cap > 0, or null", value->dump());
  return cap;
}

std::vector<long> periodic_windows(int num_layers, long window, int period) {
  std::vector<long> windows(static_cast<std::size_t>(num_layers), 0);
  for (int l = 0; l < num_layers; ++l)
    if (period > 1 && l % period < period - 1) windows[static_cast<std::size_t>(l)] = window;
  return windows;
}

std::optional<std::vector<long>> hf_layer_types(const JsonSettings& config, int num_layers, long window) {
  const nlohmann::json* types = config.find("/layer_types", JsonNull::Absent);
  if (!types) return std::nullopt;
  if (!types->is_array())
    throw InputError::bad_value(config.file(), "/layer_types", "a list of \"sliding_attention\" / \"full_attention\"", describe_json(*types));
  if (static_cast<long>(types->size()) != num_layers)
    throw InputError::inconsistent(config.file(), "/layer_types has " + std::to_string(types->size()) + " entries but /num_hidden_layers is " +
                                                      std::to_string(num_layers));
  std::vector<long> windows;
  for (std::size_t l = 0; l < types->size(); ++l) {
    const std::string pointer = "/layer_types/" + std::to_string(l);
    const std::string kind = read_string((*types)[l], config.file(), pointer);
    if (kind != "sliding_attention" && kind != "full_attention")
      throw InputError::bad_value(config.file(), pointer, "\"sliding_attention\" or \"full_attention\"", "\"" + kind + "\"");
    windows.push_back(kind == "sliding_attention" ? window : 0);
  }
  return windows;
}

GeluKind hf_gelu(const JsonSettings& config, const std::string& pointer, const std::string& fallback) {
  const std::string name = config.text(pointer, fallback);
  // ACT2FN: NewGELUActivation, PytorchGELUTanh and FastGELUActivation all compute
  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))); GELUActivation is nn.functional.gelu (erf).
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return GeluKind::Tanh;
  if (name == "gelu") return GeluKind::Erf;
  throw InputError::bad_value(config.file(), pointer,
                              "a GELU attnviz implements: \"gelu_new\", \"gelu_pytorch_tanh\", \"gelu_fast\" (tanh) or \"gelu\" (erf)",
                              "\"" + name + "\"");
}

void refuse_qwen_sliding_window(const JsonSettings& config, DecoderConfig& c) {
  if (config.flag("/use_sliding_window", false))
    throw InputError::bad_value(config.file(), "/use_sliding_window",
                                "false (attnviz does not apply Qwen's windows in the layers from max_window_layers on)", "true");
  // The window and the layers it starts at act only with use_sliding_window (transformers'
  // Qwen2Config); newer configs also write the layer_types that follow from them.
  config.consider("/sliding_window");
  config.consider("/max_window_layers");
  if (const std::optional<std::vector<long>> types = hf_layer_types(config, c.num_layers, 1))
    for (std::size_t l = 0; l < types->size(); ++l)
      if ((*types)[l] != 0)
        throw InputError::bad_value(config.file(), "/layer_types/" + std::to_string(l),
                                    "\"full_attention\" (attnviz does not apply Qwen's sliding windows)", "\"sliding_attention\"");
}

}  // namespace attnviz
