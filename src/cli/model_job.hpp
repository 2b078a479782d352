// `--model`: from a model file (GGUF) or folder (CTranslate2) and a text to the model's
// attention blocks, handed one at a time to a sink: the options checked, the text tokenized,
// the continuation generated, the memory estimated, the forward pass run. Draws and writes
// nothing (run.cpp and the jobs do).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "model/block_probe.hpp"
#include "model/decoder_model.hpp"
#include "model/model_run.hpp"
#include "model/model_session.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// True when the options name a whole model (--model).
bool is_model_run(const Options& options);

/// For runs without --model: throws UsageError naming a model-only option that was given
/// (--text, --layers…), or saying SENTENCE is required when it is missing.
void check_layer_run_options(const Options& options);

/// True when --model names an encoder-decoder folder (CTranslate2: model.bin inside).
bool is_encoder_decoder_model(const Options& options);

// KeptBytes (what a sink keeps across blocks, for the memory estimate): model/model_session.hpp.

/// Runs the model named by options.model on options.text / token_ids, handing every selected
/// block to `sink`; returns everything else about the run. Appends user-facing warnings.
/// Throws UsageError (options that do not fit: SENTENCE with --model, neither --text nor
/// --token-ids…, a --token-ids id outside the vocabulary), InputError (the model file, a --text
/// token the tokenizer has but the model's embedding lacks, a text longer than the context),
/// LimitError (the forward pass plus what `kept` says the sink keeps over `memory_budget`
/// bytes, estimated before computing). `probe`, when given, sees the model's
/// shape before the pass and every selected block's inputs, and gets the output weights after.
/// `heads`, when given, receives a decoder's weights head by head as computed (HeadSink; the
/// sink then gets each block without weights), and the estimate counts one head's weights, not
/// the layer's, whatever the thread count; not with --measure norms|alti, nor for encoders and CTranslate2 models,
/// whose blocks come whole to `sink` (split_heads in head_stream.hpp feeds them to a HeadSink).
ModelRunInfo run_model(const Options& options, const BlockSink& sink, std::vector<std::string>& warnings,
                       double memory_budget, const KeptBytes& kept = {}, ModelProbe* probe = nullptr,
                       const HeadSink* heads = nullptr);

/// A decoder-only --model loaded with its input checked, for commands that run the model
/// themselves (attribute): info holds the model summary, the ids (from --text or --token-ids)
/// and their labels, as run_model's would.
struct DecoderRun {
  std::unique_ptr<DecoderModel> model;
  std::unique_ptr<Vocabulary> vocab;  ///< the tokenizer, when the file has one and --text was given
  const Vocabulary* names = nullptr;  ///< what names tokens: vocab, or a tokenizer.json's token list; may be null
  std::optional<Vocabulary> token_list;
  ModelRunInfo info;
  Tokens labels;                      ///< each token as pictures show it (texts for byte-level pieces)
};

/// Loads options.model as a decoder and checks options.text / token_ids as run_model does
/// (the same errors), plus UsageError naming `command` for an encoder-decoder folder when
/// `encoder_decoder_refusal` is non-empty (it says why). Appends the model's and tokenizer's warnings.
DecoderRun prepare_decoder_run(const Options& options, std::vector<std::string>& warnings,
                               const std::string& encoder_decoder_refusal);

/// `attnviz tokenize`: how the tokenizer of options.model (a GGUF file, or a Hugging Face
/// folder's tokenizer.json) splits options.text. One JSON document {"tokens": [pieces],
/// "token_ids": [...], "token_texts": [token_display_text]} on one line; with options.table, a
/// header row "index id piece text kind" and one tab-separated line per token: the piece
/// JSON-quoted, its text quoted on one line (piece_display), and byte, special, unknown or
/// nothing. Appends the vocabulary's warnings (Vocabulary::warnings). Throws InputError for a
/// folder without tokenizer.json and as the tokenizers do.
std::string tokenize_report(const Options& options, std::vector<std::string>& warnings);

/// The folder of a block's pictures below the output folder: "layer_<l>" for decoder-only
/// models, "encoder/layer_<l>", "decoder/layer_<l>/self" and "decoder/layer_<l>/cross" for
/// encoder-decoders.
std::string block_folder(const AttentionBlock& block, bool encoder_decoder);

/// A decoder-only model (GGUF file or Hugging Face folder) loaded once and run on many inputs
/// (census --corpus): run() is run_model on given ids without loading the model again.
class DecoderSession {
 public:
  /// Loads options.model, with its tokenizer when `needs_tokenizer`. Throws UsageError for an
  /// encoder-decoder model, else as run_model.
  DecoderSession(const Options& options, bool needs_tokenizer);
  ~DecoderSession();
  DecoderSession(const DecoderSession&) = delete;
  DecoderSession& operator=(const DecoderSession&) = delete;

  const ModelSummary& summary() const { return summary_; }
  /// The model's vocabulary size: valid ids are 0 … n_vocab − 1.
  long n_vocab() const;
  /// The ids of `text` as the model's tokenizer gives them, BOS added as it says (unless
  /// options.no_bos). Throws InputError when the model has no tokenizer.
  std::vector<std::int32_t> tokenize(const std::string& text) const;
  /// As run_model with --token-ids `ids` (options.layers and the rest as given at loading);
  /// `heads`, when given, takes each layer's weights head by head (run_model's HeadSink).
  ModelRunInfo run(const std::vector<std::int32_t>& ids, const BlockSink& sink, std::vector<std::string>& warnings,
                   double memory_budget, const HeadSink* heads = nullptr) const;
  /// As run_model with `request` (its text or token ids, layers, measure, generate…) on the
  /// loaded model: `request.model` must be the session's. Throws as run_model.
  ModelRunInfo run(const Options& request, const BlockSink& sink, std::vector<std::string>& warnings, double memory_budget,
                   const KeptBytes& kept = {}) const;
  /// The model's tokenizer (null for a model without one).
  const Vocabulary* vocabulary() const;

 private:
  struct Loaded;
  Options options_;
  std::unique_ptr<Loaded> loaded_;
  ModelSummary summary_;
};

}  // namespace attnviz
