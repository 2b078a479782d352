#include "model/gguf_encoder.hpp"

#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "model/gguf_decoder.hpp"

namespace attnviz {

namespace {

long required_count(const GgufFile& file, const std::string& key) {
  const auto value = file.integer(key);
  if (!value) throw InputError::inconsistent(file.path(), "missing metadata " + key + " (needed by a bert model)");
  if (*value <= 0 || *value > (1LL << 31))
    throw InputError::inconsistent(file.path(), "metadata " + key + ": expected a positive count, got " + std::to_string(*value));
  return static_cast<long>(*value);
}

// The `bert.` keys llama.cpp's converter writes that attnviz reads, or that leave attention
// unchanged (pooling only shapes the output embedding, which attnviz does not compute).
const std::set<std::string> kKnownKeys = {"block_count", "context_length", "embedding_length", "feed_forward_length",
                                          "attention.head_count", "attention.layer_norm_epsilon", "attention.causal",
                                          "pooling_type", "vocab_size"};

}  // namespace

bool is_gguf_encoder(const GgufFile& file) { return file.string("general.architecture").value_or("") == "bert"; }

EncoderModel encoder_from_gguf(std::shared_ptr<const GgufFile> file) {
  const std::string a = "bert";
  EncoderConfig c;
  c.file = file->path();
  c.name = file->string("general.name").value_or(a);
  if (c.name == a) c.name = std::filesystem::path(file->path()).stem().string();
  c.num_layers = static_cast<int>(required_count(*file, a + ".block_count"));
  c.d_model = required_count(*file, a + ".embedding_length");
  c.d_ff = required_count(*file, a + ".feed_forward_length");
  c.num_heads = static_cast<int>(required_count(*file, a + ".attention.head_count"));
  c.n_positions = required_count(*file, a + ".context_length");
  if (c.d_model % c.num_heads != 0)
    throw InputError::inconsistent(file->path(), "metadata " + a + ".attention.head_count " + std::to_string(c.num_heads) +
                                                     " does not divide " + a + ".embedding_length " + std::to_string(c.d_model));
  const auto epsilon = file->number(a + ".attention.layer_norm_epsilon");
  if (!epsilon) throw InputError::inconsistent(file->path(), "missing metadata " + a + ".attention.layer_norm_epsilon (needed by a bert model)");
  c.layer_norm_epsilon = require_rms_epsilon(*epsilon, file->path(), a + ".attention.layer_norm_epsilon");
  if (file->boolean(a + ".attention.causal").value_or(false))
    throw InputError::inconsistent(file->path(), "metadata " + a + ".attention.causal = true: a causal mask, which a bert "
                                                     "encoder does not apply in llama.cpp nor in attnviz");
  c.n_token_types = file->integer("tokenizer.ggml.token_type_count").value_or(2);
  if (c.n_token_types <= 0)
    throw InputError::inconsistent(file->path(), "metadata tokenizer.ggml.token_type_count: expected a positive count, got " +
                                                     std::to_string(c.n_token_types));
  c.gelu = GeluKind::GgmlTable;  // ggml_gelu (a float16 table of the tanh approximation)
  const GgufTensorInfo* embedding = file->find_tensor("token_embd.weight");
  if (!embedding || embedding->dims.size() != 2)
    throw InputError(file->path() + ": tensor token_embd.weight is missing (needed by a bert model)");
  c.n_vocab = static_cast<long>(embedding->dims[1]);
  std::string unknown;
  for (const auto& [key, value] : file->metadata())
    if (key.rfind(a + ".", 0) == 0 && !kKnownKeys.count(key.substr(a.size() + 1))) unknown += (unknown.empty() ? "" : ", ") + key;
  if (!unknown.empty()) c.warnings.push_back(file->path() + ": metadata attnviz does not know for architecture bert, ignored: " + unknown);
  EncoderModel model(std::move(c), gguf_weight_source(std::move(file)));
  model.set_quantized_matmul(true);  // llama.cpp's numerics for its own files (issue 25)
  return model;
}

}  // namespace attnviz
