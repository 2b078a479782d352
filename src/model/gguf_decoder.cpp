#include "model/gguf_decoder.hpp"

#include <filesystem>
#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "core/error.hpp"
#include "model/families/family.hpp"
#include "model/families/local_rope.hpp"
#include "model/formats/ggml_types.hpp"

namespace attnviz {

namespace {

std::string dims_text(long rows, long cols) {
  return cols == 0 ? "[" + std::to_string(rows) + "]" : "[" + std::to_string(cols) + ", " + std::to_string(rows) + "]";
}

// GGUF tensors as DecoderModel asks for them: names are already llama.cpp's.
class GgufWeights : public WeightSource {
 public:
  explicit GgufWeights(std::shared_ptr<const GgufFile> file) : file_(std::move(file)) {}

  Matrix matrix(const std::string& name, long rows, long cols) const override {
    // GGUF lists dims fastest first: a [rows, cols] row-major matrix is dims [cols, rows].
    return file_->matrix(file_->tensor(name, {cols, rows}, "expected " + dims_text(rows, cols)));
  }
  Matrix gather_rows(const std::string& name, long rows, long cols, const std::vector<std::int32_t>& ids) const override {
    return file_->matrix_rows(file_->tensor(name, {cols, rows}, "expected " + dims_text(rows, cols)), ids);
  }
  std::optional<QuantRows> quant_rows(const std::string& name, long rows, long cols) const override {
    const GgufTensorInfo* info = file_->find_tensor(name);
    if (info == nullptr || info->dims != std::vector<std::int64_t>{cols, rows}) return std::nullopt;
    return QuantRows{static_cast<GgmlType>(info->type), info->data, rows, cols};
  }
  Vector vector(const std::string& name, long n) const override {
    return file_->vector(file_->tensor(name, {n}, "expected " + dims_text(n, 0)));
  }
  bool has(const std::string& name) const override { return file_->find_tensor(name) != nullptr; }
  void check_type(const std::string& name) const override {
    const GgufTensorInfo* info = file_->find_tensor(name);
    if (info != nullptr && !ggml_type_supported(info->type))
      throw InputError::inconsistent(file_->path(), "tensor " + name + ": type " + ggml_type_name(info->type) +
                                                        " is not supported (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, "
                                                        "q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs are)");
  }
  std::vector<std::string> unread(const std::set<std::string>& read) const override {
    std::vector<std::string> names;
    for (const GgufTensorInfo& t : file_->tensors())
      if (!read.count(t.name)) names.push_back(t.name);
    return names;
  }
  std::vector<std::int64_t> shape(const std::string& name) const override {
    const GgufTensorInfo* info = file_->find_tensor(name);
    return info ? std::vector<std::int64_t>(info->dims.rbegin(), info->dims.rend()) : std::vector<std::int64_t>{};
  }
  std::string describe(const std::string& name) const override { return file_->path() + ": tensor " + name; }

 private:
  std::shared_ptr<const GgufFile> file_;
};

long required_integer(const GgufFile& file, const std::string& key) {
  const auto value = file.integer(key);
  if (!value) throw InputError::inconsistent(file.path(), "missing metadata " + key);
  if (*value <= 0 || *value > (1LL << 31))
    throw InputError::inconsistent(file.path(), "metadata " + key + ": expected a positive count, got " + std::to_string(*value));
  return static_cast<long>(*value);
}

// RoPE's linear scaling of the global layers as llama.cpp applies it (llama-model.cpp
// load_hparams, llama-context.cpp): the type defaults to "linear" when absent; the factor is
// gguf_rope_factor's; type "none" never scales the global layers, whatever factor the file gives
// (a family's sliding-window layers follow its own rule: local_rope). Other types (yarn,
// longrope) are refused by name.
void read_rope_scaling(const GgufFile& file, const std::string& a, DecoderConfig& c) {
  const std::string type_key = a + ".rope.scaling.type";
  const std::string type = file.string(type_key).value_or("linear");
  if (type != "linear" && type != "none")
    throw InputError::inconsistent(file.path(), type_key + " \"" + type + "\" is not supported (none, linear)");
  const double factor = gguf_rope_factor(file, a);
  if (type == "none" || factor == 1) return;
  c.rope.linear_factor = factor;
  c.rope_scaling = "linear x" + std::to_string(factor);
}

// LLaMA 3.1's per-frequency factors (rope_freqs.weight), which llama.cpp loads for the
// architectures whose family says so and refuses elsewhere ("wrong number of tensors").
void read_rope_frequency_factors(const GgufFile& file, const DecoderFamily& family, DecoderConfig& c) {
  const GgufTensorInfo* freqs = file.find_tensor("rope_freqs.weight");
  if (!freqs) return;
  if (!family.gguf_rope_frequency_factors)
    throw InputError::inconsistent(file.path(), "tensor rope_freqs.weight: per-frequency RoPE factors, which llama.cpp does not load "
                                                "for architecture " + family.gguf_architecture +
                                                " (it refuses the file: one tensor too many; of attnviz's families only llama has "
                                                "them), and attnviz does not apply");
  if (freqs->num_elements() != c.rope.dim / 2)
    throw InputError::inconsistent(file.path(), "tensor rope_freqs.weight has " + std::to_string(freqs->num_elements()) +
                                                    " values, expected rope dim / 2 = " + std::to_string(c.rope.dim / 2));
  const Vector factors = file.vector(*freqs);
  for (Eigen::Index i = 0; i < factors.size(); ++i)
    c.rope.frequency_factors.push_back(
        require_positive_setting(factors(i), file.path(), "tensor rope_freqs.weight[" + std::to_string(i) + "]"));
  c.rope_scaling = c.rope_scaling == "none" ? "llama3" : c.rope_scaling + ", llama3";
}

// The keys (after "<arch>.") every family's reader below applies, and those that change
// nothing attnviz computes (the vocabulary's size: token_embd.weight's rows are used; what only
// YaRN reads, and YaRN is refused).
const std::set<std::string, std::less<>> kCommonKeys = {
    "block_count",          "embedding_length",        "feed_forward_length",  "context_length",
    "attention.head_count", "attention.head_count_kv", "attention.key_length", "attention.value_length",
    "rope.freq_base",       "rope.dimension_count",    "rope.scaling.type",    "rope.scaling.factor",
    "rope.scale_linear",    "vocab_size",              "rope.scaling.original_context_length", "rope.scaling.finetuned"};

// One warning naming every "<arch>." key that neither the common reader nor the family reads.
void warn_unknown_keys(const GgufFile& file, const DecoderFamily& family, DecoderConfig& c) {
  const std::string prefix = family.gguf_architecture + ".";
  std::string unknown;
  for (const auto& [full_key, value] : file.metadata()) {
    if (full_key.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string key = full_key.substr(prefix.size());
    if (kCommonKeys.count(key) || key == family.gguf_epsilon_key) continue;
    if (std::find(family.gguf_keys.begin(), family.gguf_keys.end(), key) != family.gguf_keys.end()) continue;
    unknown += (unknown.empty() ? "" : ", ") + full_key;
  }
  if (!unknown.empty())
    c.warnings.push_back(file.path() + ": metadata attnviz does not know for architecture " + family.gguf_architecture + ", ignored: " + unknown);
}

DecoderConfig family_config(const GgufFile& file, const DecoderFamily& family) {
  const std::string a = family.gguf_architecture;
  DecoderConfig c;
  c.architecture = a;
  c.block = family.block;
  c.qkv_bias = family.qkv_bias;
  // general.name is often just the architecture ("llama"); the file's name says more then.
  c.file = file.path();
  c.name = file.string("general.name").value_or(a);
  if (c.name == a) c.name = std::filesystem::path(file.path()).stem().string();
  c.num_layers = static_cast<int>(required_integer(file, a + ".block_count"));
  c.d_model = required_integer(file, a + ".embedding_length");
  c.num_heads = static_cast<int>(required_integer(file, a + ".attention.head_count"));
  c.num_kv_heads = file.has(a + ".attention.head_count_kv")
                       ? static_cast<int>(required_integer(file, a + ".attention.head_count_kv"))
                       : c.num_heads;
  c.d_ff = required_integer(file, a + ".feed_forward_length");
  c.context_length = file.has(a + ".context_length") ? required_integer(file, a + ".context_length") : 0;
  const std::string epsilon_key = a + "." + family.gguf_epsilon_key;
  c.rms_epsilon = require_rms_epsilon(file.number(epsilon_key).value_or(1e-5), file.path(), epsilon_key);
  if (c.d_model % c.num_heads != 0 && !file.has(a + ".attention.key_length"))
    throw InputError::inconsistent(file.path(), a + ".attention.head_count " + std::to_string(c.num_heads) +
                                                    " does not divide " + a + ".embedding_length " + std::to_string(c.d_model));
  c.d_k = file.has(a + ".attention.key_length") ? required_integer(file, a + ".attention.key_length") : c.d_model / c.num_heads;
  if (c.num_heads % c.num_kv_heads != 0)
    throw InputError::inconsistent(file.path(), a + ".attention.head_count_kv " + std::to_string(c.num_kv_heads) +
                                                    " does not divide " + a + ".attention.head_count " + std::to_string(c.num_heads));
  const GgufTensorInfo* embedding = file.find_tensor("token_embd.weight");
  if (!embedding) throw InputError::inconsistent(file.path(), "missing tensor token_embd.weight (the token embedding)");
  c.n_vocab = embedding->num_rows();
  if (const auto* tokens = file.string_array("tokenizer.ggml.tokens"); tokens && static_cast<long>(tokens->size()) != c.n_vocab)
    throw InputError::inconsistent(file.path(), "tokenizer.ggml.tokens has " + std::to_string(tokens->size()) +
                                                    " pieces but token_embd.weight has " + std::to_string(c.n_vocab) + " rows");
  if (const auto v = file.integer(a + ".attention.value_length"); v && *v != c.d_k && !family.gguf_checks_all_keys)
    throw InputError::inconsistent(file.path(), "metadata " + a + ".attention.value_length = " + std::to_string(*v) +
                                                    ": value heads would have another width than the key heads' " + std::to_string(c.d_k) +
                                                    ", which attnviz does not apply");
  c.rope.style = family.gguf_rope_style;
  c.rope.theta = require_positive_setting(file.number(a + ".rope.freq_base").value_or(10000.0), file.path(), a + ".rope.freq_base");
  c.rope.dim = file.integer(a + ".rope.dimension_count").value_or(c.d_k);
  if (c.rope.dim <= 0 || c.rope.dim > c.d_k || c.rope.dim % 2 != 0)
    throw InputError::inconsistent(file.path(), a + ".rope.dimension_count " + std::to_string(c.rope.dim) +
                                                    " must be even and at most the head width " + std::to_string(c.d_k));
  read_rope_scaling(file, a, c);
  read_rope_frequency_factors(file, family, c);
  c.tied_output = file.find_tensor("output.weight") == nullptr;
  c.gelu = GeluKind::GgmlTable;  // llama.cpp's CPU ggml_gelu / ggml_geglu (vec.h, GGML_GELU_FP16), for every family using one
  if (family.gguf_settings) family.gguf_settings(file, c);
  if (!family.gguf_checks_all_keys) warn_unknown_keys(file, family, c);
  return c;
}

}  // namespace

std::string supported_gguf_architectures() { return gguf_family_list(); }

DecoderConfig decoder_config_from_gguf(const GgufFile& file) {
  const auto architecture = file.string("general.architecture");
  if (!architecture) throw InputError::inconsistent(file.path(), "missing metadata general.architecture");
  if (const DecoderFamily* family = family_for_gguf(*architecture)) return family_config(file, *family);
  throw InputError::inconsistent(file.path(), "architecture \"" + *architecture + "\" is not supported (supported: " +
                                                  supported_gguf_architectures() + ")");
}

DecoderModel decoder_from_gguf(std::shared_ptr<const GgufFile> file) {
  DecoderConfig config = decoder_config_from_gguf(*file);
  DecoderModel model(std::move(config), std::make_unique<GgufWeights>(std::move(file)));
  model.set_quantized_matmul(true);  // llama.cpp's numerics for its own files (issue 25)
  return model;
}

std::unique_ptr<WeightSource> gguf_weight_source(std::shared_ptr<const GgufFile> file) {
  return std::make_unique<GgufWeights>(std::move(file));
}

}  // namespace attnviz
