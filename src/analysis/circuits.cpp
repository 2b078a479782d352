#include "analysis/circuits.hpp"

#include <algorithm>
#include <numeric>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <Eigen/SVD>

namespace attnviz {

namespace {

// Vocabulary rows per float64 block of W_U W_E: 4096 rows of d = 4096 are 128 MB as float64.
constexpr Eigen::Index kVocabularyBlock = 4096;

// Thin QR, A = Q R with Q [m, k] orthonormal columns and R [k, r], k = min(m, r).
struct ThinQr {
  WideCircuitMatrix q, r;
};

ThinQr thin_qr(const WideCircuitMatrix& a) {
  const Eigen::Index k = std::min(a.rows(), a.cols());
  const Eigen::HouseholderQR<WideCircuitMatrix> qr(a);
  ThinQr out;
  out.q = qr.householderQ() * WideCircuitMatrix::Identity(a.rows(), k);
  out.r = qr.matrixQR().topRows(k).triangularView<Eigen::Upper>();
  return out;
}

// Rows of w scaled by gain (diag(g)·W): a norm's gain folded into the weights it feeds.
WideCircuitMatrix fold_gain(const Matrix& w, const Vector& gain) {
  WideCircuitMatrix folded = w.cast<double>();
  if (gain.size() != 0) folded = gain.cast<double>().asDiagonal() * folded;
  return folded;
}

// Eigenvalues of a small square matrix, by descending modulus.
std::vector<std::complex<double>> eigenvalues_by_modulus(const WideCircuitMatrix& m) {
  const Eigen::EigenSolver<WideCircuitMatrix> solver(m, /*computeEigenvectors=*/false);
  std::vector<std::complex<double>> values(solver.eigenvalues().data(), solver.eigenvalues().data() + m.rows());
  std::stable_sort(values.begin(), values.end(),
                   [](const std::complex<double>& a, const std::complex<double>& b) { return std::abs(a) > std::abs(b); });
  return values;
}

}  // namespace

LowRankSvd low_rank_svd(const WideCircuitMatrix& a, const WideCircuitMatrix& b) {
  const ThinQr qa = thin_qr(a), qb = thin_qr(b);
  const WideCircuitMatrix small = qa.r * qb.r.transpose();  // [k_a, k_b]
  const Eigen::JacobiSVD<WideCircuitMatrix> svd(small, Eigen::ComputeThinU | Eigen::ComputeThinV);
  LowRankSvd out;
  const Eigen::VectorXd& s = svd.singularValues();
  out.singular_values.assign(s.data(), s.data() + s.size());
  out.u = qa.q * svd.matrixU();
  out.v = qb.q * svd.matrixV();
  return out;
}

WideCircuitMatrix vocabulary_loop(const VocabularyCircuit& vocabulary) {
  const Matrix& w_e = vocabulary.keys();          // [n_vocab, d]
  const Matrix& w_u = vocabulary.unembedding;     // [d, n_vocab]
  if (w_u.size() == 0 || w_e.rows() != w_u.cols()) return {};
  WideCircuitMatrix loop = WideCircuitMatrix::Zero(w_u.rows(), w_e.cols());
  for (Eigen::Index first = 0; first < w_e.rows(); first += kVocabularyBlock) {
    const Eigen::Index n = std::min<Eigen::Index>(kVocabularyBlock, w_e.rows() - first);
    loop.noalias() += w_u.middleCols(first, n).cast<double>() * w_e.middleRows(first, n).cast<double>();
  }
  return loop;
}

HeadCircuits head_circuits(const AttentionLayer& layer, int head, const Vector& input_gain, const Vector& key_gain,
                           const WideCircuitMatrix* loop) {
  const long d_k = layer.d_k(), d_v = layer.d_v();
  const int g = head / (layer.num_heads / layer.num_kv_heads);
  const Vector& kv_gain = key_gain.size() != 0 ? key_gain : input_gain;
  const WideCircuitMatrix w_q = fold_gain(layer.w_q.middleCols(head * d_k, d_k), input_gain);  // [d_model_q, d_k]
  const WideCircuitMatrix w_k = fold_gain(layer.w_k.middleCols(g * d_k, d_k), kv_gain);        // [d_model_kv, d_k]
  HeadCircuits out;
  out.qk = low_rank_svd(w_q, w_k);  // W_QK = W_Q W_Kᵀ [d_model_q, d_model_kv]
  out.qk_singular_values = out.qk.singular_values;
  if (layer.w_o.size() == 0) return out;

  const WideCircuitMatrix w_v = fold_gain(layer.w_v.middleCols(g * d_v, d_v), kv_gain);         // [d_model_kv, d_v]
  const WideCircuitMatrix w_o = layer.w_o.middleRows(head * d_v, d_v).cast<double>();           // [d_v, d_out]
  out.ov_singular_values = low_rank_svd(w_v, w_o.transpose()).singular_values;  // W_OV = W_V W_O
  if (w_v.rows() != w_o.cols()) return out;
  // W_V W_O [d, d] and W_O W_V [d_v, d_v] have the same nonzero eigenvalues (AB and BA).
  out.ov_eigenvalues = eigenvalues_by_modulus(w_o * w_v);
  if (loop == nullptr || loop->size() == 0 || loop->rows() != w_o.cols() || loop->cols() != w_v.rows()) return out;
  // Full OV circuit W_E W_V W_O W_U [n_vocab, n_vocab]; its nonzero eigenvalues are those of
  // W_O (W_U W_E) W_V [d_v, d_v] (Elhage et al. 2021, "Copying / primarily positive eigenvalues").
  const WideCircuitMatrix full = w_o * *loop * w_v;  // [d_v, d_v]
  const std::vector<std::complex<double>> lambda = eigenvalues_by_modulus(full);
  std::complex<double> sum = 0;
  double sum_abs = 0;
  for (const std::complex<double>& l : lambda) {
    sum += l;
    sum_abs += std::abs(l);
  }
  if (sum_abs > 0) out.copying_score = sum.real() / sum_abs;
  return out;
}

DirectionTokens extreme_tokens(const Matrix& embedding, const Eigen::VectorXd& direction, int count) {
  Eigen::VectorXd projection(embedding.rows());  // [n], row by row in float64 (no float64 copy of the table)
  for (Eigen::Index r = 0; r < embedding.rows(); ++r) projection(r) = embedding.row(r).cast<double>().dot(direction);
  std::vector<long> order(static_cast<std::size_t>(projection.size()));
  std::iota(order.begin(), order.end(), 0L);
  std::stable_sort(order.begin(), order.end(), [&](long a, long b) { return projection(a) > projection(b); });
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(count), order.size());
  DirectionTokens out;
  out.top.assign(order.begin(), order.begin() + static_cast<long>(n));
  out.bottom.assign(order.rbegin(), order.rbegin() + static_cast<long>(n));
  return out;
}

}  // namespace attnviz
