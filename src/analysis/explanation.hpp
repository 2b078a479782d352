// Everything `attnviz explain` shows about one head at one query: the neuron view, the head's
// QK/OV circuits beside those of its layer's other heads, and what its QK directions ask for
// in vocabulary tokens. Built from a layer's inputs; no files, no pictures.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/circuits.hpp"
#include "analysis/neuron_view.hpp"

namespace attnviz {

/// Tokens per end of a QK direction, and directions listed (the contract).
constexpr int kDirectionTokens = 8;
constexpr int kTopDirections = 5;

/// One singular direction (u_i, v_i) of W_QK in words: the vocabulary tokens whose embeddings
/// project most positively / most negatively on u_i (query side) and on v_i (key side).
/// Flipping the sign of the pair swaps top and bottom on both sides together.
struct QkDirectionTokens {
  double singular_value = 0;
  Tokens query_top, query_bottom, key_top, key_bottom;
};

/// The explanation of one head at one query.
struct Explanation {
  std::string head_name;   ///< "H3", "L2H5", "cross.L2H5"
  std::string model;       ///< display name, may be empty
  Tokens query_tokens, key_tokens;
  NeuronView view;
  HeadCircuits circuits;                     ///< of the explained head
  std::vector<HeadCircuits> layer_circuits;  ///< every head of the layer, in order (circuits.png)
  bool folded = false;                       ///< norm gains folded into the circuits' weights
  std::optional<std::vector<QkDirectionTokens>> qk_top_tokens;  ///< only with a vocabulary
};

/// The gains of the norms before a layer (empty vectors: no norm, nothing folded) and, for a
/// whole model, its vocabulary circuit (W_E, folded W_U, pieces).
struct CircuitContext {
  Vector query_gain, key_gain;
  const VocabularyCircuit* vocabulary = nullptr;
};

/// Explains `head` at `query` of the layer `in` (see neuron_view and head_circuits for the maths
/// and the errors). The caller fills head_name, model and the token lists.
Explanation explain_head(const LayerInputs& in, int head, long query, const CircuitContext& context);

/// W_E, diag(g_final)·W_U and the pieces of a model's output weights: embedding [n_vocab, d],
/// output as stored [n_vocab, d] (logits = x·outputᵀ; empty: no unembedding), final_gain [d] or
/// empty. Rows without a piece are named by their id.
VocabularyCircuit vocabulary_circuit(Matrix embedding, const Matrix& output, const Vector& final_gain, Tokens pieces);

/// Gives `v` a keys' side of its own (cross- and encoder attention read other tokens than the
/// queries'): key_embedding [n_vocab_k, d] and its pieces.
void set_key_vocabulary(VocabularyCircuit& v, Matrix key_embedding, Tokens key_pieces);

}  // namespace attnviz
