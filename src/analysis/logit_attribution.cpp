#include "analysis/logit_attribution.hpp"

#include <cassert>
#include <numeric>

namespace attnviz {

namespace {

using VectorD = Eigen::VectorXd;

// The direction a part is read along: w = s · γ ⊙ u, so that dla(c) = c · w. LayerNorm's
// centring, Σ_k (c_k − mean c) w_k = Σ_k c_k (w_k − mean w), moves onto w once.
VectorD read_direction(const FinalNormTrace& norm, const Vector& u) {
  VectorD w = norm.scale * norm.gain.cast<double>().cwiseProduct(u.cast<double>());
  if (norm.centre) w.array() -= w.mean();
  return w;
}

double share(const Vector& part, const VectorD& w) { return part.cast<double>().dot(w); }

}  // namespace

Eigen::VectorXd logit_direction(const FinalNormTrace& norm, const Vector& u) { return read_direction(norm, u); }

double LogitAttribution::total() const {
  double sum = embedding + position.value_or(0.0) + final_norm_bias;
  for (const std::vector<double>& layer : heads) sum += std::accumulate(layer.begin(), layer.end(), 0.0);
  for (const std::vector<double>* terms : {&mlp, &attn_bias, &mlp_bias}) sum += std::accumulate(terms->begin(), terms->end(), 0.0);
  return sum;
}

LogitAttribution direct_logit_attribution(const ResidualTrace& trace, const Vector& u) {
  assert(u.size() == trace.final_residual.size());
  const VectorD w = read_direction(trace.final_norm, u);
  LogitAttribution a;
  a.embedding = share(trace.embedding, w);
  if (trace.position.size()) a.position = share(trace.position, w);
  for (std::size_t l = 0; l < trace.head_writes.size(); ++l) {
    const Matrix& writes = trace.head_writes[l];  // [h, d_model]
    std::vector<double> layer(static_cast<std::size_t>(writes.rows()));
    for (Eigen::Index h = 0; h < writes.rows(); ++h) layer[static_cast<std::size_t>(h)] = writes.row(h).cast<double>().dot(w);
    a.heads.push_back(std::move(layer));
    a.attn_bias.push_back(share(trace.attn_bias[l], w));
    a.mlp.push_back(share(trace.mlp_writes[l], w));
    a.mlp_bias.push_back(share(trace.mlp_bias[l], w));
  }
  if (trace.final_norm.bias.size()) a.final_norm_bias = trace.final_norm.bias.cast<double>().dot(u.cast<double>());
  return a;
}

double traced_logit(const ResidualTrace& trace, const Vector& u) {
  const VectorD w = read_direction(trace.final_norm, u);
  const double bias = trace.final_norm.bias.size() ? trace.final_norm.bias.cast<double>().dot(u.cast<double>()) : 0.0;
  return trace.final_residual.cast<double>().dot(w) + bias;
}

}  // namespace attnviz
