// The model dump ("attnviz.model_attention" v1, docs/models.md): a whole model's run —
// the model's shape, the tokens, the text — and one object per attention block under
// `layers`, each a complete single-layer dump ("attnviz.attention") plus `stack` and `kind`,
// so a layer can be read by anything that reads single-layer dumps. Written layer by layer
// (the run hands blocks over one at a time) and read back by `render` and `compare`.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "io/file_text.hpp"
#include "model/model_record.hpp"

namespace attnviz {

/// Builds a model dump's text one block at a time.
class ModelDumpWriter {
 public:
  /// Appends `block` as the next entry of `layers`.
  void add(const AttentionBlock& block);
  /// The whole document in pieces, to be written one after another: `info`'s fields, then the
  /// layers added so far (each layer's text as add() made it: a dump of hundreds of MB is
  /// never copied into one string). With `logits`, writes info.last_logits as `last_logits`.
  /// Hands over the layers' text (call it once).
  std::vector<std::string> finish(const ModelRunInfo& info, bool logits);
  std::size_t layer_count() const { return layers_.size(); }
  /// Adds a top-level field, written after the run's fields and before `layers` (the rollout:
  /// issue 13). `json_text` is its value as JSON text.
  void add_field(const std::string& name, std::string json_text);

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
  std::vector<std::string> layers_;  // "\n{…}" then ",\n{…}" for each block; finish() moves their text out
};

/// A model dump read back.
struct ModelDump {
  ModelRunInfo info;
  std::vector<AttentionBlock> blocks;
};

/// The members a model dump can have at its top level, in its `model` object, and in each
/// `layers[]` entry beside a single-layer dump's (record_members_written): each documented in
/// docs/models.md "Model dumps".
std::set<std::string> model_dump_members();
std::set<std::string> model_summary_members();
std::set<std::string> model_dump_layer_members();

/// The run's members of a model dump, each as JSON text, in the dump's order: format, version,
/// model, tokens, token_ids, text, prompt_length, generated_text, and where the run has them
/// token_texts, source_tokens, source_text, target_tokens. What a safetensors dump's
/// __metadata__ holds (records/safetensors_dump).
std::vector<std::pair<std::string, std::string>> model_dump_header(const ModelRunInfo& info);

/// True when `text` is a model dump (its `format` is "attnviz.model_attention").
bool is_model_dump_text(const FileText& text);

/// Reads a model dump, validating each layer as read_record does (messages name the file and
/// "/layers/<i>"), each layer's stack and kind ("encoder"/"decoder", "self"/"cross", agreeing
/// with its mode), token_ids one per token, and model.rope as the model path writes it.
/// Throws InputError. Members that are not fields of the format (docs/models.md), also inside
/// model.rope, are named in lines appended to `warnings`.
ModelDump read_model_dump(const FileText& text, const std::string& path, std::vector<std::string>& warnings);

/// The pieces of read_model_dump, for dumps stored otherwise (records/safetensors_dump):
/// the run's members of `root` (format, version, model, tokens…; no `layers`) checked as
/// read_model_dump checks them; a layer's stack and kind read from `layer` into `block`
/// ("decoder" and "self" when absent); `block` (its record read) checked against the blocks
/// read before and appended to dump.blocks (`where` names it in messages); and each block's
/// encoder_decoder set once all are read. Throw InputError.
ModelDump read_model_dump_header(const nlohmann::json& root, const std::string& path, std::vector<std::string>& warnings);
void read_block_kind(const nlohmann::json& layer, const std::string& where, AttentionBlock& block);
void add_read_block(AttentionBlock block, const std::string& where, const std::string& path, ModelDump& dump);
void finish_read_dump(ModelDump& dump);

}  // namespace attnviz
