// A CTranslate2 encoder-decoder model directory, run on one source sentence: the model.bin
// weights (model/formats/ct2_file, model/ct2_transformer), the vocabularies (model/tokenizers/ct2_vocabulary),
// config.json when present (special tokens, layer norm epsilon), greedy decoding or teacher
// forcing, and one capture pass that hands every attention block to a BlockSink.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/ct2_transformer.hpp"
#include "model/model_run.hpp"
#include "model/tokenizers/ct2_vocabulary.hpp"

namespace attnviz {

struct Ct2Model;

/// What to run. Exactly one of source_tokens and text is given.
struct Ct2Request {
  std::string model_dir;                     ///< holds model.bin and the vocabularies
  std::optional<std::string> source_tokens;  ///< space-separated source tokens (--source-tokens)
  std::optional<std::string> text;           ///< split into characters (--text); character-level
                                             ///< source vocabularies only
  std::optional<std::string> target_tokens;  ///< space-separated decoder tokens after <s>: teacher
                                             ///< forcing; absent = greedy decoding
  int max_generate = 256;                    ///< greedy decoding stops after this many tokens
                                             ///< (or the learned position table's length)
  LayerSelection layers;                     ///< layers captured (all are computed)
  bool want_last_logits = false;             ///< fill ModelRunInfo::last_logits
  /// What each block keeps beside its weights (--scores, --outputs, --measure: f^h(x_j) and the
  /// residual entering each self-attention block; see AttentionBlock).
  AttentionWants wants{false, false, false};
  double memory_budget_bytes = 0;            ///< refuse a model whose file and decoded weights
                                             ///< would need more (0 = no limit; --max-memory)
  /// Sees the model's shape before the run and the teacher-forced pass's blocks' inputs, and
  /// gets the target side's output weights plus the source embeddings (explain); may be null.
  ModelProbe* probe = nullptr;
  /// Called last, while the model is loaded, with the source ids and the decoder's input ids
  /// (<s> first, </s> left out): for work on the model itself (attribute). May be empty.
  std::function<void(const Ct2Model& model, const std::vector<std::int32_t>& source_ids,
                     const std::vector<std::int32_t>& decoder_ids)>
      with_model;
};

/// A loaded model directory.
struct Ct2Model {
  std::string dir;
  Ct2Transformer transformer;
  Ct2Vocabulary source, target;
  std::int32_t bos = 0, eos = 0;  ///< target ids of the decoder start token and </s>
  std::string source_prefix;      ///< added before the source tokens (config add_source_bos), or ""
  std::string source_suffix;      ///< added after them (config add_source_eos), or ""
};

/// Loads `dir`: model.bin, config.json if present (unk_token, bos_token, eos_token,
/// decoder_start_token, add_source_bos, add_source_eos, layer_norm_epsilon; CTranslate2's
/// defaults otherwise), and source_vocabulary / target_vocabulary
/// (or shared_vocabulary), .txt or .json. Throws InputError naming the file for anything
/// model.bin's reader refuses, a missing vocabulary (naming the names tried), a vocabulary whose
/// size (with <unk>) differs from its embedding rows, or a start/end token not in the target
/// vocabulary. With memory_budget_bytes > 0, throws LimitError before reading model.bin when
/// the file alone exceeds it, and before decoding when the file plus its weights decoded (at
/// most 8 bytes per number: float32, float64 for the feed-forward and output layers) would.
Ct2Model load_ct2_model(const std::string& dir, double memory_budget_bytes = 0);

/// Runs `request`: source ids (with the config's source prefix and suffix; unknown tokens
/// become <unk>, with a warning appended to
/// `warnings`), the encoder, then greedy decoding from <s> until </s> or max_generate tokens (a
/// warning when the cap is hit), or the given target tokens; then one teacher-forced pass over
/// <s> + the target (without </s>) that hands `sink` every selected layer's blocks in order:
/// encoder self (stack "encoder"), then per decoder layer self (causal) and cross (queries the
/// target tokens, keys the source tokens). Returns the run's tokens and text; model.architecture
/// is "transformer". Throws UsageError when neither or both of source_tokens and text are given,
/// for --text on a vocabulary that is not character-level, or for an empty source; InputError
/// as load_ct2_model.
ModelRunInfo run_ct2_model(const Ct2Request& request, const BlockSink& sink, std::vector<std::string>& warnings);
/// run_ct2_model on a model already loaded (request.model_dir is then only its name in
/// messages): a census runs every text of a corpus on one load.
ModelRunInfo run_ct2_model(const Ct2Model& model, const Ct2Request& request, const BlockSink& sink, std::vector<std::string>& warnings);

}  // namespace attnviz
