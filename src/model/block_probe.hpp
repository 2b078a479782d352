// What a whole-model run hands an analysis besides the attention weights (docs/analysis.md
// "Inside one head"): each selected block's inputs, as the engine took them, and the model's
// embedding and output weights. The forward pass calls the probe; it never changes the run.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "attention/layer_inputs.hpp"
#include "model/model_run.hpp"

namespace attnviz {

/// One attention block's inputs with the gains of the norms that made them (TransformerLens's
/// fold_ln folds these into W_Q, W_K, W_V): query_gain [d_model_q] on the query side, key_gain
/// [d_model_kv] on the key/value side (empty: the same norm as the queries', or none).
struct BlockInputs {
  int layer = 0;
  std::string stack = "decoder";  ///< "encoder" or "decoder"
  std::string kind = "self";      ///< "self" or "cross"
  LayerInputs inputs;
  Vector query_gain, key_gain;
};

/// Receives a block's inputs while they are alive (during the forward pass).
using BlockProbe = std::function<void(const BlockInputs&)>;

/// The model's token embeddings W_E [n_vocab, d_model], its output matrix as stored
/// [n_vocab, d_model] (logits = norm(x)·outputᵀ), the final norm's gain [d_model] (empty when
/// none) and each vocabulary row's piece ("" when unknown); for an encoder-decoder, W_E and the
/// pieces are the target side's, and the source side's embeddings follow.
struct OutputWeights {
  Matrix embedding;
  Matrix output;
  Vector final_gain;
  Tokens pieces;
  Matrix source_embedding;  ///< [n_source_vocab, d_model]; empty for decoder-only models
  Tokens source_pieces;
};

/// Hooks into a model run (run_model's `probe`): `check` sees the model's shape before the
/// forward pass (to refuse a head it lacks before the work), `block` every selected block's
/// inputs as they are computed, and `output` is filled after the pass when `want_output`.
struct ModelProbe {
  std::function<void(const ModelSummary&)> check;
  BlockProbe block;
  bool want_output = false;
  std::optional<OutputWeights> output;
};

}  // namespace attnviz
