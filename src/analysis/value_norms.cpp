#include "analysis/value_norms.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstdint>

namespace attnviz {

namespace {

// Query rows per block of layer_norms: h rows of n_k float64 (8 heads × 1024 keys: 64 KiB per row).
constexpr long kRowBlock = 8;

// One past the last non-zero of row[from, to), or `from` if there is none. Under a causal mask
// the zeros right of the diagonal are half the row: they are skipped 16 at a time (a loop the
// compiler vectorises) rather than one compare and branch each (11% of a stories260K dump's
// CPU went to that scan).
long end_of_nonzeros(const Scalar* row, long from, long to) {
  constexpr long kChunk = 16;
  long end = to;
  while (end - kChunk >= from) {
    // x != 0 (NaN included, -0 excluded) as the bits past the sign: an integer OR, vectorised.
    std::uint32_t bits = 0;
    for (long k = 0; k < kChunk; ++k) bits |= std::bit_cast<std::uint32_t>(row[end - kChunk + k]) & 0x7fffffffu;
    if (bits != 0) break;
    end -= kChunk;
  }
  while (end > from && row[end - 1] == 0) --end;
  return end;
}

}  // namespace

NormMeasures head_weighted_norms(const std::vector<Matrix>& weights, Matrix value_norms) {
  assert(!weights.empty() && value_norms.rows() == static_cast<long>(weights.size()));
  NormMeasures m;
  m.value_norms = std::move(value_norms);  // [h, n_k]
  // α ≥ 0, so ‖α f‖ = α ‖f‖: one scaling of each column.
  for (std::size_t h = 0; h < weights.size(); ++h) {
    assert(weights[h].cols() == m.value_norms.cols());
    m.norms.push_back(weights[h] * m.value_norms.row(static_cast<long>(h)).asDiagonal());
  }
  return m;
}

NormMeasures value_weighted_norms(const std::vector<Matrix>& weights, const std::vector<Matrix>& value_vectors,
                                  bool with_layer_norms) {
  assert(weights.size() == value_vectors.size() && !weights.empty());
  const long heads = static_cast<long>(weights.size());
  const long n_q = weights.front().rows();
  const long n_k = weights.front().cols();
  if (!with_layer_norms) {
    Matrix value_norms(heads, n_k);  // [h, n_k]
    for (long h = 0; h < heads; ++h)
      value_norms.row(h) = value_vectors[h].cast<double>().rowwise().norm().cast<Scalar>().transpose();
    return head_weighted_norms(weights, std::move(value_norms));
  }
  const long d_out = value_vectors.front().cols();
  // G_j [h, h] per key, in float64: the norm of a sum of nearly cancelling heads stays accurate.
  // Its diagonal is ‖f^h(x_j)‖².
  // ‖Σ_h α^h_ij f^h(x_j)‖² = Σ_h Σ_h' α^h_ij α^h'_ij G_j[h, h']: one pass over the weights per
  // pair h ≤ h' (off-diagonal pairs counted twice), each an element-wise product of two heads'
  // rows scaled per key by G_j[h, h'] — h(h+1)/2 vectorised passes over n_q × n_k, in float64,
  // kRowBlock rows at a time so that the rows of every head stay in cache. (The per-key
  // [n_q, h] × [h, h] products before cost 0.7× a 1024-token layer's whole plain run.)
  const long pairs = heads * (heads + 1) / 2;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> pair_gram(pairs, n_k);  // row p: G_j[h, h'] over j
  Matrix value_norms(heads, n_k);  // [h, n_k]
  Eigen::MatrixXd f_j(heads, d_out);  // row h = f^h(x_j); it and G_j reused for every key
  Eigen::MatrixXd gram(heads, heads);
  for (long j = 0; j < n_k; ++j) {
    for (long h = 0; h < heads; ++h) f_j.row(h) = value_vectors[h].row(j).cast<double>();
    gram.noalias() = f_j * f_j.transpose();
    value_norms.col(j) = gram.diagonal().cwiseMax(0.0).cwiseSqrt().cast<Scalar>();
    for (long h = 0, p = 0; h < heads; ++h)
      for (long h2 = h; h2 < heads; ++h2) pair_gram(p++, j) = (h == h2 ? 1.0 : 2.0) * gram(h, h2);
  }
  NormMeasures m = head_weighted_norms(weights, std::move(value_norms));
  m.layer_norms.resize(n_q, n_k);
  using Rows = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::vector<Rows> a(static_cast<std::size_t>(heads));
  Rows squared;
  for (long i0 = 0; i0 < n_q; i0 += kRowBlock) {
    const long rows = std::min(kRowBlock, n_q - i0);
    // Keys past every head's last non-zero weight in these rows (above the diagonal under a
    // causal mask) give 0 and are skipped: half the work of a decoder.
    long live = 0;
    for (long h = 0; h < heads; ++h)
      for (long i = i0; i < i0 + rows; ++i) live = std::max(live, end_of_nonzeros(weights[h].row(i).data(), live, n_k));
    m.layer_norms.block(i0, live, rows, n_k - live).setZero();
    if (live == 0) continue;
    for (long h = 0; h < heads; ++h) a[h] = weights[h].block(i0, 0, rows, live).cast<double>().array();
    squared.setZero(rows, live);
    for (long h = 0, p = 0; h < heads; ++h)
      for (long h2 = h; h2 < heads; ++h2, ++p)
        squared += (a[h] * a[h2]).rowwise() * pair_gram.row(p).head(live).array();
    // Eigen's sqrt of the block, then a plain narrowing loop: both vectorise, where the fused
    // sqrt-and-cast expression ran one scalar at a time (14% of layer_norms).
    squared = squared.max(0.0).sqrt();
    for (long r = 0; r < rows; ++r) {
      const double* from = squared.row(r).data();
      Scalar* to = m.layer_norms.row(i0 + r).data();
      for (long j = 0; j < live; ++j) to[j] = static_cast<Scalar>(from[j]);
    }
  }
  return m;
}

Matrix normalise_rows(const Matrix& m) {
  Matrix out = m;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const double sum = m.row(i).cast<double>().sum();
    if (sum > 0) out.row(i) = (m.row(i).cast<double>() / sum).cast<Scalar>();
  }
  return out;
}

}  // namespace attnviz
