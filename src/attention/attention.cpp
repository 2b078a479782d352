#include "attention/attention.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attention/mask.hpp"
#include "attention/softmax.hpp"
#include "attention/value_vectors.hpp"
#include "core/product_threads.hpp"
#include "core/split_product.hpp"

namespace attnviz {

void normalize_heads(Matrix& x, long d_k, const Vector& gain, Scalar epsilon) {
  if (gain.size() == 0) return;
  if (gain.size() == x.cols()) d_k = x.cols();  // one norm over the whole vector (OLMo 2)
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    for (Eigen::Index h = 0; h < x.cols() / d_k; ++h) {
      auto head = x.row(r).segment(h * d_k, d_k);
      const double mean_square = head.cast<double>().squaredNorm() / static_cast<double>(d_k);
      const Scalar rms = std::sqrt(static_cast<Scalar>(mean_square) + epsilon);
      head = (head / rms).cwiseProduct(gain.transpose());
    }
  }
}

namespace {


// For the duration of one multi_head_attention call: Eigen's products run one-threaded (Eigen
// would otherwise start its own threads for any product over 50k multiply-adds, even inside a
// one-thread OpenMP team) and the thread budget, --threads (Eigen::setNbThreads, all cores by
// default), is spent by threads_for() instead. Restored on exit.
class ExplicitThreads {
 public:
  ExplicitThreads() : budget_(Eigen::nbThreads()) {}

  // Threads for `flops` of work: one per kProductFlopsPerThread (~1.5 ms of one core's GEMM;
  // splitting a 50 Mflop projection over 2 threads cost 100 ms whenever the other core was busy).
  int threads_for(double flops) const {
    return threads_for_work(flops, budget_);
  }

 private:
  int budget_;                // read before one_thread_ sets Eigen's count to 1
  OneThreadEigen one_thread_;  // restores the budget on exit
};

// X·W + b for all heads at once: one GEMM instead of one per head, in split_product's fixed
// column blocks spread over the threads (the same bits for every thread count).
Matrix project(const Matrix& x, const Matrix& w, const Vector& b, const ExplicitThreads& pool) {
  Matrix y = split_product(x, w, pool.threads_for(2.0 * static_cast<double>(x.rows() * x.cols() * w.cols())));  // [n, width]
  if (b.size() != 0) y.rowwise() += b.transpose();
  return y;
}

// X·W + b through `projection` when the layer has one (a quantised weight), else as above.
Matrix project(const Matrix& x, const Matrix& w, const Projection& projection, const Vector& b, const ExplicitThreads& pool) {
  if (!projection) return project(x, w, b, pool);
  // The whole budget: the projection knows its width and how fast it is, so it chooses.
  Matrix y = projection(x, pool.threads_for(std::numeric_limits<double>::max()));
  if (b.size() != 0) y.rowwise() += b.transpose();
  return y;
}

// "the projection V (X·W_V + b_V) overflows", "the projections Q, K (X·W + b) overflow":
// exactly the projections that are not finite (at least one).
std::string overflowing_projections(bool q, bool k, bool v) {
  std::vector<std::string> names;
  if (q) names.push_back("Q");
  if (k) names.push_back("K");
  if (v) names.push_back("V");
  if (names.size() == 1) {
    const std::string& n = names.front();
    return "the projection " + n + " (X·W_" + n + " + b_" + n + ") overflows";
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  return "the projections " + list + " (X·W + b) overflow";
}

// Fills result.overflow (and returns true) when a projection is not finite. v may be empty
// (not computed): empty counts as finite.
bool projections_overflow(const Matrix& q, const Matrix& k, const Matrix& v, AttentionResult& result) {
  const bool q_overflows = !q.allFinite();
  const bool k_overflows = !k.allFinite();
  const bool v_overflows = !v.allFinite();
  if (!q_overflows && !k_overflows && !v_overflows) return false;
  result.overflow = overflowing_projections(q_overflows, k_overflows, v_overflows);
  result.overflow_spares_weights = !q_overflows && !k_overflows;
  return true;
}

// Projections Q and K as the scores use them: QK-norm, then RoPE.
void prepare_queries_keys(const AttentionLayer& layer, Matrix& q, Matrix& k, const std::optional<RopeRequest>& rope) {
  normalize_heads(q, layer.d_k(), layer.q_norm, layer.qk_norm_epsilon);
  normalize_heads(k, layer.d_k(), layer.k_norm, layer.qk_norm_epsilon);
  if (rope) {
    apply_rope(q, layer.d_k(), rope->settings, rope->query_positions);
    apply_rope(k, layer.d_k(), rope->settings, rope->key_positions);
  }
}

// attend's end, after the heads: an overflowing head named, else the concat, W_O and the value
// vectors.
void finish_attention(const AttentionLayer& layer, const Eigen::Ref<const Matrix>& v, const AttentionWants& wants,
                      const ExplicitThreads& pool, const std::vector<char>& finite, AttentionResult& result) {
  for (int h = 0; h < layer.num_heads; ++h) {
    if (!finite[h]) {
      result.overflow = "the scores of head " + std::to_string(h) + " overflow";
      if (result.weights.size() > static_cast<std::size_t>(h)) result.weights.resize(static_cast<std::size_t>(h));
      result.scores.clear();
      result.head_outputs.clear();
      return;
    }
  }
  const long d_v = layer.d_v();
  const long n_q = result.head_outputs.empty() ? 0 : result.head_outputs.front().rows();
  if (wants.outputs) {
    result.concat.resize(n_q, layer.num_heads * d_v);
    for (int h = 0; h < layer.num_heads; ++h) {
      result.concat.middleCols(h * d_v, d_v) = result.head_outputs[h];
    }
    if (layer.o_projection || layer.w_o.size() != 0) result.output = project(result.concat, layer.w_o, layer.o_projection, layer.b_o, pool);
    if (!result.output.allFinite()) {
      result.overflow = "the output concat·W_O + b_O overflows";
      result.overflow_spares_weights = true;
    }
  }
  if (wants.value_vectors) {
    result.value_vectors = head_value_vectors(layer, v);
    for (const Matrix& f : result.value_vectors) {
      if (f.allFinite()) continue;
      result.overflow = "the value vectors f(x) = (X·W_V + b_V)·W_O of a head overflow";
      result.overflow_spares_weights = true;
      break;
    }
  }
}

// Eq. (1) for query rows [first, first + count) of head h (key/value head g), in place in
// `scores` (those rows of the head's [n_q, n_k] matrix): (Q/√d_k)Kᵀ, soft-capping, the masked
// scores when wanted, the softmax, and A·V into the head's outputs. False when a score overflows.
// Both attention paths compute every head in the same fixed blocks of kAttentionBlockRows rows,
// so a row's numbers depend neither on the path nor on the thread count.
bool attend_rows(const AttentionLayer& layer, const Matrix& q, const Eigen::Ref<const Matrix>& k, const Eigen::Ref<const Matrix>& v,
                 const MaskMatrix& allowed, const RowSpans& spans, const AttentionWants& wants, int h, long first, long count,
                 Eigen::Ref<Matrix> scores, AttentionResult& result) {
  const long d_k = layer.d_k(), d_v = layer.d_v();
  const int g = h / (layer.num_heads / layer.num_kv_heads);
  scores.noalias() = q.middleRows(first, count).middleCols(h * d_k, d_k) * k.middleCols(g * d_k, d_k).transpose();
  if (!scores.allFinite()) return false;
  if (layer.logit_softcap > 0) scores = (scores.array() / layer.logit_softcap).tanh() * layer.logit_softcap;
  if (wants.scores) {
    result.scores[h].middleRows(first, count) = scores;
    softmax_mask_scores(result.scores[h].middleRows(first, count), allowed, first);
  }
  softmax_rows_in_place(scores, allowed, first, spans);
  if (wants.outputs) result.head_outputs[h].middleRows(first, count).noalias() = scores * v.middleCols(g * d_v, d_v);
  return true;
}

// attend for a caller that takes the weights head by head: one head [n_q, n_k] at a time, its
// row blocks spread over `threads` threads, then handed to `per_head`. Stops at a head whose
// scores overflow (finite[h] = 0), before handing it on.
void attend_by_rows(const AttentionLayer& layer, const Matrix& q, const Eigen::Ref<const Matrix>& k,
                    const Eigen::Ref<const Matrix>& v, const MaskMatrix& allowed, const RowSpans& spans, const AttentionWants& wants,
                    int threads, std::vector<char>& finite, const HeadWeightsSink& per_head, AttentionResult& result) {
  const long n_q = q.rows(), n_k = k.rows();
  const long blocks = (n_q + kAttentionBlockRows - 1) / kAttentionBlockRows;
  threads = std::max(1, std::min(threads, static_cast<int>(blocks)));
  Matrix weights;
  std::vector<char> block_finite(static_cast<std::size_t>(blocks), 1);
  for (int h = 0; h < layer.num_heads; ++h) {
    weights.resize(n_q, n_k);  // again after the sink moved the last head out
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long b = 0; b < blocks; ++b) {
      const long first = b * kAttentionBlockRows, count = std::min(kAttentionBlockRows, n_q - first);
      block_finite[static_cast<std::size_t>(b)] =
          attend_rows(layer, q, k, v, allowed, spans, wants, h, first, count, weights.middleRows(first, count), result) ? 1 : 0;
    }
    finite[h] = std::all_of(block_finite.begin(), block_finite.end(), [](char f) { return f != 0; }) ? 1 : 0;
    if (!finite[h]) return;
    per_head(h, weights);
  }
}

// Eq. (1) per head on projections already made (and rotated), then the concat and W_O (§3.2.2):
// q [n_q, h·d_k] (scaled in place), k [n_k, h_kv·d_k], v [n_k, h_kv·d_v] (empty unless outputs
// are wanted), allowed [n_q, n_k] or empty. Fills `result` (overflow included). With `per_head`,
// the weights go to it instead of result.weights, one head at a time (attend_by_rows).
void attend(const AttentionLayer& layer, Matrix& q, const Eigen::Ref<const Matrix>& k, const Eigen::Ref<const Matrix>& v,
            const MaskMatrix& allowed, const AttentionWants& wants, const ExplicitThreads& pool, AttentionResult& result,
            const HeadWeightsSink* per_head) {
  const long d_k = layer.d_k();
  const long d_v = layer.d_v();
  result.fully_masked_rows = fully_masked_rows(allowed);
  const long n_q = q.rows();
  const long n_k = k.rows();
  // Every result is allocated here, before the parallel loop, so that no allocation (and no
  // exception) happens inside it; the heads are independent and each writes only its own.
  // (resize, not assign(n, Matrix(..)): that copied an uninitialised prototype into each.)
  const auto allocate = [&](std::vector<Matrix>& stack, long count, long rows, long cols) {
    stack.resize(static_cast<std::size_t>(count));
    for (Matrix& m : stack) m.resize(rows, cols);
  };
  if (wants.scores) allocate(result.scores, layer.num_heads, n_q, n_k);
  if (wants.outputs) allocate(result.head_outputs, layer.num_heads, n_q, d_v);
  // 1/√d_k applied to Q once (n_q·h·d_k products) rather than to every score (h·n_q·n_k), as
  // PyTorch's MHA does (q_scaled = q / √d_k before the bmm).
  q *= layer.logit_scale();
  std::vector<char> finite(layer.num_heads, 1);
  const RowSpans spans = RowSpans::of(allowed, n_q, n_k);  // the same for every head
  const double head_flops = 2.0 * static_cast<double>(n_q * n_k) * static_cast<double>(d_k + (wants.outputs ? d_v : 0));
  const int threads = pool.threads_for(head_flops * layer.num_heads);
  if (per_head != nullptr) {
    // Head by head: one head's weights held whatever the thread count, its rows split over the
    // threads (each row is computed as the whole-layer loop computes it: the same bits).
    attend_by_rows(layer, q, k, v, allowed, spans, wants, threads, finite, *per_head, result);
    return finish_attention(layer, v, wants, pool, finite, result);
  }
  allocate(result.weights, layer.num_heads, n_q, n_k);
#pragma omp parallel for num_threads(threads) schedule(dynamic)
  for (int h = 0; h < layer.num_heads; ++h) {
    // [n_q, n_k], Eq. (1): (Q/√d_k)Kᵀ, then softmax in place: the weights A_h, a block of rows at a time.
    Matrix& scores = result.weights[h];
    for (long first = 0; first < n_q && finite[h]; first += kAttentionBlockRows) {
      const long count = std::min(kAttentionBlockRows, n_q - first);
      finite[h] = attend_rows(layer, q, k, v, allowed, spans, wants, h, first, count, scores.middleRows(first, count), result) ? 1 : 0;
    }
  }
  finish_attention(layer, v, wants, pool, finite, result);
}

}  // namespace

Scalar AttentionLayer::logit_scale() const {
  if (scale) return *scale;
  return static_cast<Scalar>(1.0 / std::sqrt(static_cast<double>(d_k())));
}

AttentionResult multi_head_attention(const AttentionLayer& layer, const Matrix& x_q,
                                     const Matrix& x_kv, const MaskMatrix& allowed,
                                     const AttentionWants& wants,
                                     const std::optional<RopeRequest>& rope, const HeadWeightsSink* per_head) {
  assert(layer.num_heads > 0 && layer.num_heads % layer.num_kv_heads == 0);
  const ExplicitThreads pool;
  Matrix q = project(x_q, layer.w_q, layer.q_projection, layer.b_q, pool);    // [n_q, h·d_k]
  Matrix k = project(x_kv, layer.w_k, layer.k_projection, layer.b_k, pool);   // [n_k, h_kv·d_k]
  // V only when head outputs are wanted: the weights do not depend on it (P2: 7 ms of 50).
  const Matrix v = wants.outputs || wants.value_vectors ? project(x_kv, layer.w_v, layer.v_projection, layer.b_v, pool) : Matrix();  // [n_k, h_kv·d_v]
  prepare_queries_keys(layer, q, k, rope);
  AttentionResult result;
  if (projections_overflow(q, k, v, result)) return result;
  attend(layer, q, k, v, allowed, wants, pool, result, per_head);
  return result;
}

void KeyValueCache::append(Matrix k, Matrix v) {
  assert(k.rows() == v.rows() && (size_ == 0 || (k.cols() == k_.cols() && v.cols() == v_.cols())));
  const long needed = size_ + k.rows();
  if (needed > k_.rows() && size_ == 0) {  // a whole forward pass fills an empty cache at once: no copy
    size_ = needed;
    k_ = std::move(k);
    v_ = std::move(v);
    return;
  }
  if (needed > k_.rows()) {
    // Doubling: n one-row appends copy O(n) rows in all, not O(n²).
    const long capacity = std::max(needed, 2 * static_cast<long>(k_.rows()));
    k_.conservativeResize(capacity, k.cols());
    v_.conservativeResize(capacity, v.cols());
  }
  k_.middleRows(size_, k.rows()) = k;
  v_.middleRows(size_, v.rows()) = v;
  size_ = needed;
}

AttentionResult cached_self_attention(const AttentionLayer& layer, const Matrix& x, KeyValueCache& cache,
                                      const MaskMatrix& allowed, const AttentionWants& wants,
                                      const std::optional<RopeRequest>& rope, const HeadWeightsSink* per_head) {
  assert(layer.num_heads > 0 && layer.num_heads % layer.num_kv_heads == 0);
  const ExplicitThreads pool;
  Matrix q = project(x, layer.w_q, layer.q_projection, layer.b_q, pool);      // [m, h·d_k]
  Matrix k_new = project(x, layer.w_k, layer.k_projection, layer.b_k, pool);  // [m, h_kv·d_k]
  // V always: the positions after these need it even when this call's outputs are not wanted.
  Matrix v_new = project(x, layer.w_v, layer.v_projection, layer.b_v, pool);  // [m, h_kv·d_v]
  prepare_queries_keys(layer, q, k_new, rope);
  AttentionResult result;
  if (projections_overflow(q, k_new, v_new, result)) return result;
  cache.append(std::move(k_new), std::move(v_new));
  attend(layer, q, cache.keys(), cache.values(), allowed, wants, pool, result, per_head);
  return result;
}

}  // namespace attnviz
