#include "attention/head_stats.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "attention/mask.hpp"
#include "attention/row_spans.hpp"

// GCC 12 takes the _mm512_undefined_ps() inside _mm512_max_ps (Eigen's pmax on 16 floats) for
// a read of an uninitialised value (GCC bug 105593), an error under -Werror.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // GCC only: clang has no -Wmaybe-uninitialized
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace attnviz {

namespace {

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

// Sixteen weights at a time (one AVX-512 register): the sums run in float lanes, each lane
// adding at most 16 terms before the lanes are added into double, so a row of any length keeps
// float's relative precision (~1e-7) in its sums.
using Chunk = Eigen::Array<Scalar, 16, 1>;
constexpr long kChunk = 16;
constexpr long kChunksPerFlush = 16;

// One row's sums over its span x [0, L), key j of the span at distance |j − offset| from the
// query: −Σ p ln p (0 ln 0 = 0), max p, Σ p·|j − offset|, Σ p.
struct RowSums {
  double entropy = 0, distance = 0, mass = 0;
  Scalar max = 0;
};

// room: the keys readable from x (L ≤ room); keys L … room − 1 lie outside the span, where every
// weight is 0 (a model's softmax wrote it; a file's weights were checked to be within 1e-6 of
// it), so the last chunk reads them in place when it fits, instead of a padded copy.
RowSums row_sums(const Scalar* x, long L, long room, long offset) {
  Chunk e = Chunk::Zero(), d = Chunk::Zero(), s = Chunk::Zero(), top = Chunk::Zero();
  Chunk distance = Chunk::LinSpaced(kChunk, 0, kChunk - 1) - static_cast<Scalar>(offset);
  double entropy_sum = 0, distance_sum = 0, mass_sum = 0;
  const auto add = [&](const Chunk& p) {
    // ln max(p, FLT_MIN): finite for p = 0, whose term is then 0·ln FLT_MIN = 0; a subnormal
    // weight's term (below 1e-36) is off by less than its own size.
    e += p * p.max(std::numeric_limits<Scalar>::min()).log();
    d += p * distance.abs();
    s += p;
    top = top.max(p);
    distance += static_cast<Scalar>(kChunk);
  };
  const auto flush = [&] {
    entropy_sum += e.cast<double>().sum();
    distance_sum += d.cast<double>().sum();
    mass_sum += s.cast<double>().sum();
    e.setZero();
    d.setZero();
    s.setZero();
  };
  const long full = L - L % kChunk;
  for (long c = 0; c < full; c += kChunk) {
    add(Eigen::Map<const Chunk>(x + c));
    if ((c / kChunk + 1) % kChunksPerFlush == 0) flush();
  }
  if (full < L && full + kChunk <= room) {
    add(Eigen::Map<const Chunk>(x + full));
  } else if (full < L) {
    Chunk tail = Chunk::Zero();  // zeros add nothing to any sum, nor to the max of weights >= 0
    for (long j = 0; j < L - full; ++j) tail(j) = x[full + j];
    add(tail);
  }
  flush();
  RowSums r;
  r.entropy = 0.0 - entropy_sum;  // 0 − Σ: a one-key row's entropy is 0, never −0 in the files
  r.distance = distance_sum;
  r.mass = mass_sum;
  r.max = top.maxCoeff();
  return r;
}

// The first key of x [0, L) holding `value` (which one of them does).
long first_key_of(const Scalar* x, long L, Scalar value) {
  long c = 0;
  for (; c + kChunk <= L; c += kChunk)
    if ((Eigen::Map<const Chunk>(x + c) == value).any()) break;
  while (x[c] != value) ++c;
  return c;
}

// One head over the block's rows: each row read over its span of allowed keys only (outside it
// every weight is 0), in one pass.
HeadStats one_head(const Matrix& w, const StatisticRows& r, bool self_attention) {
  HeadStats s;
  s.argmax_keys.assign(static_cast<std::size_t>(w.rows()), -1);
  const long count = static_cast<long>(r.rows.size());
  Eigen::ArrayXd entropies(count), maxima(count), distances(count), diagonal(count), previous(count), first(count);
  Eigen::Array<bool, Eigen::Dynamic, 1> has_previous(count);
  for (long k = 0; k < count; ++k) {
    const long i = r.rows[static_cast<std::size_t>(k)];
    const auto [a, b] = r.spans[static_cast<std::size_t>(k)];
    const Scalar* row = w.row(i).data();
    const RowSums sums = row_sums(row + a, b - a + 1, w.cols() - a, i - a);
    entropies(k) = sums.entropy;
    maxima(k) = sums.max;
    s.mass += sums.mass;
    s.argmax_keys[static_cast<std::size_t>(i)] = a + first_key_of(row + a, b - a + 1, sums.max);
    if (!self_attention) continue;
    distances(k) = sums.distance;
    diagonal(k) = row[i];
    has_previous(k) = i >= 1;
    previous(k) = i >= 1 ? row[i - 1] : 0.0;
    first(k) = row[0];
  }
  s.entropy_mean = mean(entropies);
  s.entropy_min = entropies.minCoeff();
  s.entropy_max = entropies.maxCoeff();
  const Eigen::Array<bool, Eigen::Dynamic, 1> several = r.keys > 1;  // k = 1: H/ln 1 = 0/0, no information
  if (several.any()) s.entropy_normalised_mean = mean(entropies / r.log_keys, several);
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

StatisticRows StatisticRows::of(const MaskMatrix& allowed, const std::vector<long>& rows, long n_k) {
  StatisticRows r;
  r.rows = rows;
  const RowSpans all = RowSpans::of(allowed, allowed.size() == 0 ? 0 : allowed.rows(), n_k);
  r.keys.resize(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const long i = rows[k];
    r.spans.push_back(allowed.size() == 0 ? std::pair<long, long>{0, n_k - 1} : all.spans[static_cast<std::size_t>(i)]);
    const long keys = allowed.size() == 0 ? n_k : static_cast<long>((allowed.row(i).array() != 0).count());
    r.keys(static_cast<Eigen::Index>(k)) = static_cast<double>(keys);
  }
  r.log_keys = r.keys.log();
  return r;
}

HeadStats head_statistics(const Matrix& weights, const StatisticRows& rows, bool self_attention) {
  assert(!rows.rows.empty());
  return one_head(weights, rows, self_attention);
}

std::vector<HeadStats> head_statistics(const std::vector<Matrix>& weights, const MaskMatrix& allowed,
                                       const std::vector<long>& rows, bool self_attention) {
  assert(!weights.empty() && !rows.empty());
  const StatisticRows shared = StatisticRows::of(allowed, rows, weights.front().cols());  // the same for every head
  std::vector<HeadStats> stats;
  stats.reserve(weights.size());
  for (const Matrix& w : weights) stats.push_back(one_head(w, shared, self_attention));
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

#pragma GCC diagnostic pop
