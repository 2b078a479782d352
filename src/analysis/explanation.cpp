#include "analysis/explanation.hpp"

#include <algorithm>
#include <utility>

namespace attnviz {

namespace {

Tokens pieces_of(const std::vector<long>& rows, const Tokens& pieces) {
  Tokens out;
  for (const long row : rows) out.push_back(pieces[static_cast<std::size_t>(row)]);
  return out;
}

// The top kTopDirections singular directions of W_QK in vocabulary tokens (Elhage et al. 2021
// read W_E W_QK W_Eᵀ the same way: which token queries ask for which token keys).
std::vector<QkDirectionTokens> direction_tokens(const LowRankSvd& qk, const VocabularyCircuit& vocabulary) {
  std::vector<QkDirectionTokens> out;
  const int count = std::min<int>(kTopDirections, static_cast<int>(qk.singular_values.size()));
  for (int i = 0; i < count; ++i) {
    QkDirectionTokens d;
    d.singular_value = qk.singular_values[static_cast<std::size_t>(i)];
    const DirectionTokens query = extreme_tokens(vocabulary.embedding, qk.u.col(i), kDirectionTokens);
    const DirectionTokens key = extreme_tokens(vocabulary.keys(), qk.v.col(i), kDirectionTokens);
    d.query_top = pieces_of(query.top, vocabulary.pieces);
    d.query_bottom = pieces_of(query.bottom, vocabulary.pieces);
    d.key_top = pieces_of(key.top, vocabulary.key_labels());
    d.key_bottom = pieces_of(key.bottom, vocabulary.key_labels());
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

Explanation explain_head(const LayerInputs& in, int head, long query, const CircuitContext& context) {
  Explanation e;
  e.view = neuron_view(in, head, query);
  const WideCircuitMatrix loop = context.vocabulary != nullptr ? vocabulary_loop(*context.vocabulary) : WideCircuitMatrix();
  for (int h = 0; h < in.layer->num_heads; ++h)
    e.layer_circuits.push_back(head_circuits(*in.layer, h, context.query_gain, context.key_gain, &loop));
  e.circuits = e.layer_circuits[static_cast<std::size_t>(head)];
  e.folded = context.query_gain.size() != 0 || context.key_gain.size() != 0;
  if (context.vocabulary != nullptr && context.vocabulary->embedding.cols() == in.layer->w_q.rows() &&
      context.vocabulary->keys().cols() == in.layer->w_k.rows())
    e.qk_top_tokens = direction_tokens(e.circuits.qk, *context.vocabulary);
  return e;
}

namespace {

// One label per embedding row; a row without one is named by its id.
Tokens labels_for(Tokens pieces, Eigen::Index rows) {
  pieces.resize(static_cast<std::size_t>(rows));
  for (std::size_t i = 0; i < pieces.size(); ++i)
    if (pieces[i].empty()) pieces[i] = std::to_string(i);
  return pieces;
}

}  // namespace

VocabularyCircuit vocabulary_circuit(Matrix embedding, const Matrix& output, const Vector& final_gain, Tokens pieces) {
  VocabularyCircuit v;
  v.embedding = std::move(embedding);
  if (output.size() != 0) {
    v.unembedding = output.transpose();  // W_U [d, n_vocab]
    if (final_gain.size() != 0) v.unembedding = final_gain.asDiagonal() * v.unembedding;
  }
  v.pieces = labels_for(std::move(pieces), v.embedding.rows());
  return v;
}

void set_key_vocabulary(VocabularyCircuit& v, Matrix key_embedding, Tokens key_pieces) {
  v.key_embedding = std::move(key_embedding);
  v.key_pieces = labels_for(std::move(key_pieces), v.key_embedding.rows());
}

}  // namespace attnviz
