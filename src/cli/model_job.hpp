// `--model`: from a model file (GGUF) or folder (CTranslate2) and a text to the model's
// attention blocks, handed one at a time to a sink: the options checked, the text tokenized,
// the continuation generated, the memory estimated, the forward pass run. Draws and writes
// nothing (run.cpp and the jobs do).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "model/block_probe.hpp"
#include "model/model_run.hpp"

namespace attnviz {

/// True when the options name a whole model (--model).
bool is_model_run(const Options& options);

/// For runs without --model: throws UsageError naming a model-only option that was given
/// (--text, --layers…), or saying SENTENCE is required when it is missing.
void check_layer_run_options(const Options& options);

/// True when --model names an encoder-decoder folder (CTranslate2: model.bin inside).
bool is_encoder_decoder_model(const Options& options);

/// Bytes a sink keeps across blocks (an overview's maps, a rollout's R), estimated from the
/// run's shape before the forward pass: tokens, selected layers, heads per layer.
using KeptBytes = std::function<double(long tokens, int layers, int heads)>;

/// Runs the model named by options.model on options.text / token_ids, handing every selected
/// block to `sink`; returns everything else about the run. Appends user-facing warnings.
/// Throws UsageError (options that do not fit: SENTENCE with --model, neither --text nor
/// --token-ids…, a --token-ids id outside the vocabulary), InputError (the model file, a --text
/// token the tokenizer has but the model's embedding lacks, a text longer than the context),
/// LimitError (the forward pass plus what `kept` says the sink keeps over `memory_budget`
/// bytes, estimated before computing). `probe`, when given, sees the model's
/// shape before the pass and every selected block's inputs, and gets the output weights after.
ModelRunInfo run_model(const Options& options, const BlockSink& sink, std::vector<std::string>& warnings,
                       double memory_budget, const KeptBytes& kept = {}, ModelProbe* probe = nullptr);

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

}  // namespace attnviz
