#include "attention/head_stats.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "attention/mask.hpp"

namespace attnviz {

namespace {

long allowed_keys(const MaskMatrix& allowed, long row, long n_k) {
  return allowed.size() == 0 ? n_k : static_cast<long>((allowed.row(row).array() != 0).count());
}

// −Σ p ln p with 0 ln 0 = 0.
double entropy(const Eigen::Ref<const Eigen::RowVectorXd>& p) {
  double h = 0;
  for (Eigen::Index j = 0; j < p.size(); ++j) {
    if (p(j) > 0) h -= p(j) * std::log(p(j));
  }
  return h;
}

double mean(const std::vector<double>& xs) {
  double sum = 0;
  for (double x : xs) sum += x;
  return xs.empty() ? 0 : sum / static_cast<double>(xs.size());
}

HeadStats one_head(const Matrix& w, const MaskMatrix& allowed, const std::vector<long>& rows, bool self_attention) {
  HeadStats s;
  s.argmax_keys.assign(static_cast<std::size_t>(w.rows()), -1);
  std::vector<double> entropies, normalised, maxima, distances, diagonal, previous, first;
  for (long i : rows) {
    const Eigen::RowVectorXd p = w.row(i).cast<double>();
    const double h = entropy(p);
    entropies.push_back(h);
    const long k = allowed_keys(allowed, i, w.cols());
    if (k > 1) normalised.push_back(h / std::log(static_cast<double>(k)));  // k = 1: 0/0, no information
    Eigen::Index best = 0;
    maxima.push_back(p.maxCoeff(&best));
    s.argmax_keys[static_cast<std::size_t>(i)] = static_cast<long>(best);
    if (self_attention) {
      double distance = 0;
      for (Eigen::Index j = 0; j < p.size(); ++j) distance += p(j) * static_cast<double>(std::labs(i - static_cast<long>(j)));
      distances.push_back(distance);
      diagonal.push_back(p(i));
      if (i >= 1) previous.push_back(p(i - 1));
      first.push_back(p(0));
    }
  }
  s.entropy_mean = mean(entropies);
  s.entropy_min = *std::min_element(entropies.begin(), entropies.end());
  s.entropy_max = *std::max_element(entropies.begin(), entropies.end());
  if (!normalised.empty()) s.entropy_normalised_mean = mean(normalised);
  s.max_weight_mean = mean(maxima);
  if (self_attention) {
    s.mean_distance = mean(distances);
    s.diagonal_mass = mean(diagonal);
    if (!previous.empty()) s.previous_mass = mean(previous);  // no row i >= 1: undefined, as induction_score
    s.first_token_mass = mean(first);
  }
  return s;
}

}  // namespace

std::vector<long> rows_for_statistics(long n_q, const MaskMatrix& allowed, const std::vector<long>& fully_masked) {
  std::vector<long> skipped = fully_masked_rows(allowed);
  skipped.insert(skipped.end(), fully_masked.begin(), fully_masked.end());
  std::vector<long> rows;
  for (long i = 0; i < n_q; ++i) {
    if (std::find(skipped.begin(), skipped.end(), i) == skipped.end()) rows.push_back(i);
  }
  return rows;
}

std::vector<HeadStats> head_statistics(const std::vector<Matrix>& weights, const MaskMatrix& allowed,
                                       const std::vector<long>& rows, bool self_attention) {
  assert(!weights.empty() && !rows.empty());
  std::vector<HeadStats> stats;
  for (const Matrix& w : weights) stats.push_back(one_head(w, allowed, rows, self_attention));
  return stats;
}

double js_divergence(const Eigen::Ref<const Eigen::RowVectorXd>& p, const Eigen::Ref<const Eigen::RowVectorXd>& q) {
  double divergence = 0;
  for (Eigen::Index j = 0; j < p.size(); ++j) {
    const double m = 0.5 * (p(j) + q(j));
    if (p(j) > 0) divergence += 0.5 * p(j) * std::log(p(j) / m);
    if (q(j) > 0) divergence += 0.5 * q(j) * std::log(q(j) / m);
  }
  return std::max(0.0, divergence);  // rounding can leave -1e-17 for identical rows
}

Eigen::MatrixXd head_divergence_matrix(const std::vector<Matrix>& weights, const std::vector<long>& rows) {
  assert(!rows.empty());
  const long h = static_cast<long>(weights.size());
  Eigen::MatrixXd d = Eigen::MatrixXd::Zero(h, h);
  for (long a = 0; a < h; ++a) {
    for (long b = a + 1; b < h; ++b) {
      double sum = 0;
      for (long i : rows) sum += js_divergence(weights[a].row(i).cast<double>(), weights[b].row(i).cast<double>());
      d(a, b) = d(b, a) = rows.empty() ? 0 : sum / static_cast<double>(rows.size());
    }
  }
  return d;
}

std::optional<double> induction_score(const Matrix& weights, const Tokens& tokens, const std::vector<long>& rows) {
  assert(weights.rows() == static_cast<Eigen::Index>(tokens.size()) && weights.cols() == weights.rows());
  // Where each token occurs, in order: a row visits only the earlier copies of its own token
  // (a scan of every earlier position made 2048 tokens × 1024 heads take minutes).
  std::unordered_map<std::string_view, std::vector<long>> occurrences;
  for (std::size_t i = 0; i < tokens.size(); ++i) occurrences[tokens[i]].push_back(static_cast<long>(i));
  std::vector<double> scores;
  for (long i : rows) {
    double mass = 0;
    bool repeated = false;
    for (long j : occurrences.at(tokens[static_cast<std::size_t>(i)])) {
      if (j + 1 >= i) break;
      repeated = true;
      mass += weights(i, j + 1);  // distinct j give distinct keys j + 1: each counted once
    }
    if (repeated) scores.push_back(mass);
  }
  if (scores.empty()) return std::nullopt;
  return mean(scores);
}

Matrix mean_over_heads(const std::vector<Matrix>& weights) {
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(weights.front().rows(), weights.front().cols());
  for (const Matrix& w : weights) sum += w.cast<double>();
  return (sum / static_cast<double>(weights.size())).cast<Scalar>();
}

}  // namespace attnviz
