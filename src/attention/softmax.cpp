#include "attention/softmax.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>

namespace attnviz {

// GCC 12 takes the _mm512_undefined_ps() inside _mm512_max_ps (Eigen's pmax on 16 floats) for
// a read of an uninitialised value (GCC bug 105593), an error under -Werror.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // GCC only: clang has no -Wmaybe-uninitialized
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace {
constexpr Scalar kMinusInfinity = -std::numeric_limits<Scalar>::infinity();

// Sixteen floats: one AVX-512 register (two AVX, four SSE), so Eigen evaluates each chunk's exp
// vectorised. Rows are read in such chunks with the last one padded: Eigen would send a short
// row's remainder (up to 15 keys of every row) to scalar expf.
using Chunk = Eigen::Array<Scalar, 16, 1>;
constexpr long kChunk = 16;

// softmax over x [0, L) in place, every key allowed (a filled span): max, exp(x − max), sum,
// divide, chunk by chunk.
void softmax_span(Scalar* x, long L) {
  Chunk top = Chunk::Constant(kMinusInfinity);
  const long full = L - L % kChunk;
  for (long c = 0; c < full; c += kChunk) top = top.max(Eigen::Map<const Chunk>(x + c));
  const long rest = L - full;
  Chunk tail = Chunk::Constant(kMinusInfinity);
  for (long j = 0; j < rest; ++j) tail(j) = x[full + j];
  top = top.max(tail);
  const Scalar row_max = top.maxCoeff();
  Chunk sum = Chunk::Zero();
  for (long c = 0; c < full; c += kChunk) {
    Eigen::Map<Chunk> e(x + c);
    e = (e - row_max).exp();
    sum += e;
  }
  if (rest > 0) {
    Chunk e = (tail - row_max).exp();
    for (long j = 0; j < kChunk; ++j) {
      if (j < rest) x[full + j] = e(j);
      else e(j) = 0;  // Eigen's exp(−inf) is ~2.9e-39, not 0: the padding adds nothing
    }
    sum += e;
  }
  const Scalar total = sum.sum();
  for (long j = 0; j < L; ++j) x[j] /= total;
}

// A row whose allowed keys leave holes (padding): the whole row, masked keys set to 0.
void softmax_masked_row(Eigen::Ref<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>> row, const std::uint8_t* a) {
  for (Eigen::Index j = 0; j < row.size(); ++j) row(j) = a[j] != 0 ? row(j) : kMinusInfinity;
  const Scalar row_max = row.maxCoeff();
  if (row_max == kMinusInfinity) {
    row.setZero();
    return;
  }
  row = (row.array() - row_max).exp();
  // Eigen's vectorised exp clamps its argument (to about -88.4 on SSE/AVX2 builds), so
  // exp(-inf) comes out as ~2.9e-39, not 0: masked keys are set to exactly 0 here.
  for (Eigen::Index j = 0; j < row.size(); ++j) row(j) = a[j] != 0 ? row(j) : Scalar(0);
  row /= row.sum();
}

// Row i of a matrix [., n_k] in place, its mask row `a` (nullptr: all allowed) and span.
void softmax_row(Scalar* row, long n_k, const std::uint8_t* a, std::pair<long, long> span, bool filled) {
  const auto [first, last] = span;
  if (first > last) {  // every key masked: no distribution exists
    std::fill(row, row + n_k, Scalar(0));
    return;
  }
  if (!filled && a != nullptr) return softmax_masked_row(Eigen::Map<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>(row, n_k), a);
  if (first == 0 && last == n_k - 1) {
    // A whole row (no mask; a causal mask's last row): Eigen's own row expression, as attnviz
    // always computed it. On GGUF Q8_0 models, whose next layer quantises these rows' outputs
    // in blocks of 32, the last bit of a weight can move a value across a quantisation step:
    // BERT's layer 1 then matches llama.cpp's attention within 7e-7, not 3e-3.
    Eigen::Map<Eigen::Array<Scalar, Eigen::Dynamic, 1>> x(row, n_k);
    x = (x - x.maxCoeff()).exp();
    x /= x.sum();
    return;
  }
  std::fill(row, row + first, Scalar(0));
  std::fill(row + last + 1, row + n_k, Scalar(0));
  softmax_span(row + first, last - first + 1);
}

}  // namespace

void softmax_mask_scores(Matrix& scores, const MaskMatrix& allowed) {
  if (allowed.size() == 0) return;
  // Both are row-major [n_q, n_k]: one flat pass the compiler vectorises (a blend per lane),
  // where (i, j) indexing compared one cell at a time (a tenth of a corpus census's time).
  assert(allowed.rows() == scores.rows() && allowed.cols() == scores.cols());
  Scalar* s = scores.data();
  const std::uint8_t* a = allowed.data();
  for (Eigen::Index c = 0; c < scores.size(); ++c) s[c] = a[c] != 0 ? s[c] : kMinusInfinity;
}

void softmax_rows_in_place(Matrix& scores, const MaskMatrix& allowed, const RowSpans& spans) {
  assert(static_cast<Eigen::Index>(spans.spans.size()) == scores.rows());
  for (Eigen::Index i = 0; i < scores.rows(); ++i)
    softmax_row(scores.row(i).data(), scores.cols(), allowed.size() == 0 ? nullptr : allowed.row(i).data(),
                spans.spans[static_cast<std::size_t>(i)], spans.filled);
}

void softmax_rows_in_place(Matrix& scores, const MaskMatrix& allowed) {
  softmax_rows_in_place(scores, allowed, RowSpans::of(allowed, scores.rows(), scores.cols()));
}

void softmax_mask_scores(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row) {
  if (allowed.size() == 0) return;
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    for (Eigen::Index j = 0; j < scores.cols(); ++j) {
      if (allowed(first_row + i, j) == 0) scores(i, j) = kMinusInfinity;
    }
  }
}

void softmax_rows_in_place(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row, const RowSpans& spans) {
  for (Eigen::Index i = 0; i < scores.rows(); ++i)
    softmax_row(&scores(i, 0), scores.cols(), allowed.size() == 0 ? nullptr : allowed.row(first_row + i).data(),
                spans.spans[static_cast<std::size_t>(first_row + i)], spans.filled);
}

void softmax_rows_in_place(Eigen::Ref<Matrix> scores, const MaskMatrix& allowed, Eigen::Index first_row) {
  const long n_q = allowed.size() == 0 ? first_row + scores.rows() : allowed.rows();
  softmax_rows_in_place(scores, allowed, first_row, RowSpans::of(allowed, n_q, scores.cols()));
}

}  // namespace attnviz

#pragma GCC diagnostic pop
