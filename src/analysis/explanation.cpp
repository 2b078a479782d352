#include "analysis/explanation.hpp"

#include <algorithm>

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
    const DirectionTokens key = extreme_tokens(vocabulary.embedding, qk.v.col(i), kDirectionTokens);
    d.query_top = pieces_of(query.top, vocabulary.pieces);
    d.query_bottom = pieces_of(query.bottom, vocabulary.pieces);
    d.key_top = pieces_of(key.top, vocabulary.pieces);
    d.key_bottom = pieces_of(key.bottom, vocabulary.pieces);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

Explanation explain_head(const LayerInputs& in, int head, long query, const CircuitContext& context) {
  Explanation e;
  e.view = neuron_view(in, head, query);
  for (int h = 0; h < in.layer->num_heads; ++h)
    e.layer_circuits.push_back(head_circuits(*in.layer, h, context.query_gain, context.key_gain, context.vocabulary));
  e.circuits = e.layer_circuits[static_cast<std::size_t>(head)];
  e.folded = context.query_gain.size() != 0 || context.key_gain.size() != 0;
  const bool same_space = in.layer->w_q.rows() == in.layer->w_k.rows();
  if (context.vocabulary != nullptr && same_space && context.vocabulary->embedding.cols() == in.layer->w_q.rows())
    e.qk_top_tokens = direction_tokens(e.circuits.qk, *context.vocabulary);
  return e;
}

VocabularyCircuit vocabulary_circuit(const Matrix& embedding, const Matrix& output, const Vector& final_gain, Tokens pieces) {
  VocabularyCircuit v;
  v.embedding = embedding.cast<double>();
  v.unembedding = output.cast<double>().transpose();  // W_U [d, n_vocab]
  if (final_gain.size() != 0) v.unembedding = final_gain.cast<double>().asDiagonal() * v.unembedding;
  v.pieces = std::move(pieces);
  v.pieces.resize(static_cast<std::size_t>(embedding.rows()));
  for (std::size_t i = 0; i < v.pieces.size(); ++i)
    if (v.pieces[i].empty()) v.pieces[i] = std::to_string(i);
  return v;
}

}  // namespace attnviz
