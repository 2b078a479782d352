// The dump as a safetensors file (issue 36; docs/output-formats.md "safetensors dumps"): the
// same run as the JSON dump, its matrices as float32 tensors named by TransformerLens's hook
// points (`blocks.L.attn.hook_pattern` [head, query, key], `blocks.L.attn.hook_attn_scores`,
// `blocks.L.attn.hook_z` [query, head, d_v], `blocks.L.hook_attn_out`, the residual stream's
// `blocks.L.hook_resid_pre`…; an encoder-decoder's blocks under `encoder.`/`decoder.`, its
// cross-attention `decoder.blocks.L.cross_attn.*`), and in __metadata__ each member of the JSON
// dump's header as JSON text, with each block's own header under its attention's name
// (`blocks.L.attn`). Written block by block as the run hands them over; read back by render and
// compare as they read the JSON dump. Every float is the JSON dump's, bit for bit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/file_text.hpp"
#include "io/safetensors_writer.hpp"
#include "records/model_dump.hpp"

namespace attnviz {

/// "blocks.L" for a model with one stack, "encoder.blocks.L" / "decoder.blocks.L" for an
/// encoder-decoder's: the prefix of a block's hook points.
std::string hook_block_name(const AttentionBlock& block, bool encoder_decoder);
/// hook_block_name + ".attn" (self-attention) or ".cross_attn".
std::string hook_attention_name(const AttentionBlock& block, bool encoder_decoder);

/// Writes a model dump's safetensors file block by block into `temporary` (from
/// OutputSet::stream_ahead), named `target` in messages. Holds no block's matrices.
class SafetensorsDumpWriter {
 public:
  SafetensorsDumpWriter(const std::string& temporary, std::string target, bool encoder_decoder);

  /// The run's shape when known before its first block (tokens, blocks to come), so that the
  /// header's room is right the first time; without it the room is guessed at the first block.
  void plan(long tokens, int blocks);
  /// Writes the block's tensors: weights (unless add_head wrote them), and those of its record it holds (scores, head
  /// outputs and output, the measures) and its activations. Throws OutputError.
  void add(const AttentionBlock& block);
  /// Head `head` of a block's weights [n_q, n_k] as the forward pass computes them (a
  /// HeadSink), written at once; `block` is the block without weights. The block itself then
  /// comes to add() without weights, which writes the rest of it.
  void add_head(const AttentionBlock& block, int head, const Matrix& weights);
  /// A top-level field of the JSON dump (`rollout`, `alti_rollout`, `attention_flow`…), given
  /// as its JSON text (numbers, nested lists of numbers): written as a float64 tensor of the
  /// lists' shape, so its doubles stay exact. Throws std::invalid_argument for other text.
  void add_field(const std::string& name, const std::string& json_text);
  /// Writes the run's members (model_dump_header) and the blocks' headers into __metadata__,
  /// with `logits` info.last_logits as the tensor `last_logits` [n_vocab], and closes the file.
  void finish(const ModelRunInfo& info, bool logits);

  std::size_t layer_count() const { return blocks_; }
  /// Bytes of the file before the tensors' data (8 + the header). Valid after finish().
  std::uint64_t header_bytes() const { return file_.header_bytes(); }

 private:
  void reserve_for(const AttentionBlock& first);

  SafetensorsWriter file_;
  bool encoder_decoder_;
  long planned_tokens_ = 0;
  int planned_blocks_ = 0;
  std::size_t blocks_ = 0;
  bool reserved_ = false;  // the header's room is set (at the first block or head)
  std::map<std::string, std::string> metadata_;
};

/// A single-layer dump as safetensors: `record`'s header members in __metadata__ (as
/// record_header_json writes them), its matrices under `blocks.L.attn.` (`attn.` when the layer
/// is unknown; `cross_attn` for cross-attention). Throws OutputError.
void write_record_safetensors(const AttentionRecord& record, const std::string& temporary, const std::string& target);

/// True when `text` begins as a safetensors file does: an 8-byte length that fits the file,
/// then '{'. (A JSON file's first 8 bytes read as that length are far past its end.)
bool is_safetensors_text(const FileText& text);

/// The bytes of a dump to read: a safetensors file mapped as it is (when `path` is a regular
/// file that begins as one), any other input through read_input_text (a JSON dump, with its
/// checks). Throws InputError, LimitError (a file over `memory_budget_bytes`) as read_input_text.
FileText read_dump_text(const std::string& path, double memory_budget_bytes);

/// A safetensors dump read back: a model dump, or one layer.
struct SafetensorsDump {
  std::optional<ModelDump> model;
  AttentionRecord record;  ///< when !model
};

/// Reads a dump written by SafetensorsDumpWriter or write_record_safetensors, validating the
/// file as the safetensors crate does (SafetensorsFile), then every block as read_model_dump /
/// read_record validate the JSON dump's (messages name the file and the tensor or the
/// metadata key). A tensor or metadata key that is not part of the format is named in a
/// warning. Throws InputError.
SafetensorsDump read_safetensors_dump(FileText text, const std::string& path, std::vector<std::string>& warnings);

}  // namespace attnviz
