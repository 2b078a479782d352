// `--model` on an encoder (a GGUF of llama.cpp's architecture "bert"): the text framed as the
// file says ([CLS] … [SEP]), token types from --token-types, every layer's bidirectional
// attention handed to the sink. No continuation: an encoder writes no next token.
#pragma once

#include <string>
#include <vector>

#include "cli/model_job.hpp"

namespace attnviz {

/// True when --model names a GGUF file whose architecture is an encoder's (bert).
bool is_encoder_model(const Options& options);

/// run_model for an encoder. Throws UsageError for --generate or --logits (an encoder has
/// neither), --token-types of another length than the tokens or with a type the model lacks;
/// InputError for the model file (a missing tensor named with the family); LimitError as
/// run_model.
/// `probe` (explain): checked against the model, shown each selected layer's inputs, and given
/// the token embeddings after the pass (run_model's probe).
ModelRunInfo run_encoder_model(const Options& options, const BlockSink& sink, std::vector<std::string>& warnings,
                               double memory_budget, const KeptBytes& kept, ModelProbe* probe = nullptr);

}  // namespace attnviz
