#include "analysis/alti.hpp"

#include <algorithm>
#include <cassert>

#include "core/product_threads.hpp"

namespace attnviz {

namespace {

// LN's linear part for one query: v ↦ γ ⊙ (v − mean(v)) / σ, applied to every row of t [n, d].
void apply_linear_norm(Eigen::MatrixXd& t, const Eigen::RowVectorXd& gamma, double sigma) {
  const Eigen::VectorXd means = t.rowwise().mean();
  t.colwise() -= means;
  t = (t.array().rowwise() * (gamma.array() / sigma)).matrix();
}

}  // namespace

Matrix alti_contributions(const std::vector<Matrix>& weights, const std::vector<Matrix>& value_vectors,
                          const Matrix& residual, const Vector& b_o, const std::optional<PostLayerNorm>& post_norm) {
  assert(!weights.empty() && weights.size() == value_vectors.size());
  const long heads = static_cast<long>(weights.size());
  const long n_q = weights.front().rows();
  const long n_k = weights.front().cols();
  const long d_out = value_vectors.front().cols();
  assert(n_q == n_k && residual.rows() == n_q && residual.cols() == d_out);
  Eigen::RowVectorXd bias = Eigen::RowVectorXd::Zero(d_out);
  if (b_o.size() != 0) bias = b_o.transpose().cast<double>();
  std::vector<Eigen::MatrixXd> f;
  for (const Matrix& f_h : value_vectors) f.push_back(f_h.cast<double>());  // [n_k, d_out] each
  Matrix c(n_q, n_k);
  // --threads (Eigen's budget, which an OpenMP region does not read by itself) and only as many
  // as the work pays for: a short text's ALTI is microseconds, less than waking a thread.
  const double flops = 2.0 * static_cast<double>(n_q) * static_cast<double>(heads + 2) * static_cast<double>(n_k * d_out);
  const int threads = threads_for_work(flops, Eigen::nbThreads());
#pragma omp parallel for num_threads(threads) schedule(dynamic)
  for (long i = 0; i < n_q; ++i) {
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(n_k, d_out);  // row j = T_i(x_j)
    for (long h = 0; h < heads; ++h)
      t += (f[h].array().colwise() * weights[h].row(i).transpose().cast<double>().array()).matrix();
    t.row(i) += residual.row(i).cast<double>();
    Eigen::RowVectorXd y = t.colwise().sum() + bias;  // [d_out]
    if (post_norm) {
      const double mean = y.mean();
      const double sigma = std::sqrt((y.array() - mean).square().mean() + post_norm->epsilon);
      const Eigen::RowVectorXd gamma = post_norm->gamma.transpose().cast<double>();
      apply_linear_norm(t, gamma, sigma);
      Eigen::MatrixXd b = bias;
      apply_linear_norm(b, gamma, sigma);
      y = t.colwise().sum() + b.row(0) + post_norm->beta.transpose().cast<double>();  // = LN(y_i)
    }
    const double y_l1 = y.lpNorm<1>();
    Eigen::RowVectorXd row(n_k);
    for (long j = 0; j < n_k; ++j) row(j) = std::max(0.0, y_l1 - (y - t.row(j)).lpNorm<1>());
    const double sum = row.sum();
    if (sum > 0) row /= sum;
    c.row(i) = row.cast<Scalar>();
  }
  return c;
}

void AltiRollout::add_layer(const Matrix& contributions) {
  const Eigen::MatrixXd c = contributions.cast<double>();
  rollout_ = layers_ == 0 ? c : Eigen::MatrixXd(c * rollout_);
  ++layers_;
}

}  // namespace attnviz
