#include "attention/head_stats.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "attention/mask.hpp"

namespace attnviz {

namespace {

long allowed_keys(const MaskMatrix& allowed, long row, long n_k) {
  return allowed.size() == 0 ? n_k : static_cast<long>((allowed.row(row).array() != 0).count());
}

// Mean of xs, in order (as the row-by-row statistics summed them).
double mean(const Eigen::ArrayXd& xs) {
  double sum = 0;
  for (Eigen::Index k = 0; k < xs.size(); ++k) sum += xs(k);
  return xs.size() == 0 ? 0 : sum / static_cast<double>(xs.size());
}

// Mean of the xs where `keep`, in order. Requires keep.any().
double mean(const Eigen::ArrayXd& xs, const Eigen::Array<bool, Eigen::Dynamic, 1>& keep) {
  double sum = 0;
  long count = 0;
  for (Eigen::Index k = 0; k < xs.size(); ++k)
    if (keep(k)) {
      sum += xs(k);
      ++count;
    }
  return sum / static_cast<double>(count);
}

// Rows of doubles converted at a time: 256 KiB, so that a long text's head is never copied
// whole (8192² doubles would be 512 MiB).
constexpr long kBlockDoubles = 32768;
using RowArray = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The rows' values are computed a block of rows at a time as arrays (Eigen's vectorised log:
// the entropy's scalar logarithms were a fifth of a corpus census), then averaged in row order.
// keys: per row of `rows`, the keys it may see (k_i).
HeadStats one_head(const Matrix& w, const std::vector<long>& rows, const Eigen::ArrayXd& keys, bool self_attention) {
  HeadStats s;
  s.argmax_keys.assign(static_cast<std::size_t>(w.rows()), -1);
  const long r = static_cast<long>(rows.size());
  const long n_k = w.cols();
  const long block = std::max(1L, kBlockDoubles / std::max(1L, n_k));
  const Eigen::ArrayXd key_index = Eigen::ArrayXd::LinSpaced(n_k, 0, static_cast<double>(n_k - 1));
  Eigen::ArrayXd entropies(r), maxima(r), distances(r), diagonal(r), previous(r), first(r);
  Eigen::Array<bool, Eigen::Dynamic, 1> has_previous(r);
  RowArray p;
  for (long b = 0; b < r; b += block) {
    const long m = std::min(block, r - b);
    const std::vector<long> part(rows.begin() + b, rows.begin() + b + m);
    p = w(part, Eigen::all).cast<double>().array();  // [m, n_k]
    // −Σ p ln p with 0 ln 0 = 0: ln max(p, DBL_MIN) is finite, and exact for every p > 0 (the
    // weights are float32, whose least value is far above DBL_MIN), so a zero p adds 0·(−708).
    // (Eigen 3.4 evaluates select() one coefficient at a time, with scalar logarithms.)
    // 0 − Σ, not −Σ: a one-key row's entropy is 0, never −0 in the files.
    entropies.segment(b, m) = 0.0 - (p * p.max(std::numeric_limits<double>::min()).log()).rowwise().sum();
    // The maxima vectorised, then each one's first key found by a scan that stops there
    // (maxCoeff(&index) compares one coefficient at a time; the weights hold no NaN).
    maxima.segment(b, m) = p.rowwise().maxCoeff();
    for (long k = 0; k < m; ++k) {
      const long i = part[static_cast<std::size_t>(k)];
      long best = 0;
      while (p(k, best) != maxima(b + k)) ++best;
      s.argmax_keys[static_cast<std::size_t>(i)] = best;
      if (!self_attention) continue;
      distances(b + k) = (p.row(k).transpose() * (key_index - static_cast<double>(i)).abs()).sum();
      diagonal(b + k) = p(k, i);
      has_previous(b + k) = i >= 1;
      previous(b + k) = i >= 1 ? p(k, i - 1) : 0.0;
      first(b + k) = p(k, 0);
    }
  }
  s.entropy_mean = mean(entropies);
  s.entropy_min = entropies.minCoeff();
  s.entropy_max = entropies.maxCoeff();
  const Eigen::Array<bool, Eigen::Dynamic, 1> several = keys > 1;  // k = 1: H/ln 1 = 0/0, no information
  if (several.any()) s.entropy_normalised_mean = mean(entropies / keys.log(), several);
  s.max_weight_mean = mean(maxima);
  if (self_attention) {
    s.mean_distance = mean(distances);
    s.diagonal_mass = mean(diagonal);
    if (has_previous.any()) s.previous_mass = mean(previous, has_previous);  // no row i >= 1: undefined, as induction_score
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
  // The keys each row may see: the same for every head.
  Eigen::ArrayXd keys(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t k = 0; k < rows.size(); ++k)
    keys(static_cast<Eigen::Index>(k)) = static_cast<double>(allowed_keys(allowed, rows[k], weights.front().cols()));
  std::vector<HeadStats> stats;
  stats.reserve(weights.size());
  for (const Matrix& w : weights) stats.push_back(one_head(w, rows, keys, self_attention));
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

InductionKeys InductionKeys::of(const Tokens& tokens, const std::vector<long>& rows) {
  // Where each token occurs, in order: a row visits only the earlier copies of its own token
  // (a scan of every earlier position made 2048 tokens × 1024 heads take minutes).
  std::unordered_map<std::string_view, std::vector<long>> occurrences;
  for (std::size_t i = 0; i < tokens.size(); ++i) occurrences[tokens[i]].push_back(static_cast<long>(i));
  InductionKeys keys;
  for (long i : rows) {
    std::vector<long> k;
    for (long j : occurrences.at(tokens[static_cast<std::size_t>(i)])) {
      if (j + 1 >= i) break;
      k.push_back(j + 1);  // distinct j give distinct keys j + 1: each counted once
    }
    if (!k.empty()) keys.rows.emplace_back(i, std::move(k));
  }
  return keys;
}

std::optional<double> induction_score(const Matrix& weights, const InductionKeys& keys) {
  if (keys.rows.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& [i, k] : keys.rows) {
    double mass = 0;
    for (long j : k) mass += weights(i, j);
    sum += mass;
  }
  return sum / static_cast<double>(keys.rows.size());
}

std::optional<double> induction_score(const Matrix& weights, const Tokens& tokens, const std::vector<long>& rows) {
  assert(weights.rows() == static_cast<Eigen::Index>(tokens.size()) && weights.cols() == weights.rows());
  return induction_score(weights, InductionKeys::of(tokens, rows));
}

Matrix mean_over_heads(const std::vector<Matrix>& weights) {
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(weights.front().rows(), weights.front().cols());
  for (const Matrix& w : weights) sum += w.cast<double>();
  return (sum / static_cast<double>(weights.size())).cast<Scalar>();
}

}  // namespace attnviz
