// Multi-head scaled dot-product attention (Vaswani et al. 2017, §3.2.1–3.2.2), for self- and
// cross-attention alike (self-attention is x_q == x_kv), with grouped-query attention
// (Ainslie et al. 2023; LLaMA-2), and causal self-attention that extends a cache of earlier
// keys and values (incremental decoding). Pure maths: no files, no printing.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attention/rope.hpp"
#include "core/types.hpp"

namespace attnviz {

/// X [n, in] → X·W [n, out] on at most `threads` threads (the budget: the projection uses fewer
/// for small products), for a weight kept in another form than a
/// float32 matrix (a GGUF file's Q8_0 blocks, multiplied as llama.cpp does: model/formats/q8_matmul).
using Projection = std::function<Matrix(const Matrix& x, int threads)>;

/// One attention layer's parameters, row-vector convention Q = X·W_Q + b_Q.
/// Shapes: w_q [d_model_q, h·d_k], w_k [d_model_kv, h_kv·d_k], w_v [d_model_kv, h_kv·d_v],
/// biases of the matching widths or empty, w_o [h·d_v, d_out] or empty, b_o [d_out] or empty.
/// Query head i uses the column block [i·d_k, (i+1)·d_k) of Q, and key/value head
/// i / (h / h_kv). Invariants are established by io/ (load_weights); here they are asserted.
struct AttentionLayer {
  int num_heads = 0;     ///< h
  int num_kv_heads = 0;  ///< h_kv; divides h (h_kv == h is plain multi-head attention)
  Matrix w_q, w_k, w_v, w_o;
  Vector b_q, b_k, b_v, b_o;
  std::optional<Scalar> scale;  ///< logit scale; default 1/sqrt(d_k)
  /// RMSNorm gains [d_k] applied to every query / key head after the projection and before
  /// RoPE (QK-norm: Qwen 3, Gemma 3; Dehghani et al. 2023), with qk_norm_epsilon; empty = none.
  /// Gains of the projections' whole width (h·d_k, h_kv·d_k) normalise each row of Q, K whole
  /// before the head split (OLMo 2).
  Vector q_norm, k_norm;
  Scalar qk_norm_epsilon = 0;
  /// c > 0: the scaled scores s become c·tanh(s/c) before the mask and softmax (logit
  /// soft-capping, Gemma 2: transformers' attn_logit_softcapping, llama.cpp's
  /// f_attn_logit_softcapping); 0 = none.
  Scalar logit_softcap = 0;
  /// When set, X·W_Q, X·W_K, X·W_V and concat·W_O are computed by these instead of from the
  /// float32 matrices, which may then be empty (the biases still apply); q_width = h·d_k and
  /// v_width = h_kv·d_v give the widths when w_q, w_v are empty.
  Projection q_projection, k_projection, v_projection, o_projection;
  long q_width = 0, v_width = 0;

  long d_k() const { return (w_q.size() != 0 ? w_q.cols() : q_width) / num_heads; }
  long d_v() const { return (w_v.size() != 0 ? w_v.cols() : v_width) / num_kv_heads; }
  /// The logit scale used: `scale` if given, else 1/sqrt(d_k) (Eq. 1).
  Scalar logit_scale() const;
};

/// What to keep besides the weights (the weights are the visualiser's product, always kept).
struct AttentionWants {
  bool scores = false;   ///< scaled logits per head, -inf where masked
  bool outputs = false;  ///< per-head outputs A_h·V_h, their concat, and the W_O output
  /// f^h(x_j) = (x_j·W_V^g + b_V^g)·W_O^h per head h and key j (value_vectors.hpp): what a head
  /// writes per unit of weight (Kobayashi et al. 2020, Eq. 6), for norms and ALTI.
  bool value_vectors = false;
};

/// Per-head results. weights[h] is [n_q, n_k] with rows summing to 1, except fully masked
/// rows, which are all zero and listed in fully_masked_rows.
struct AttentionResult {
  std::vector<Matrix> weights;       ///< h × [n_q, n_k]
  std::vector<Matrix> scores;        ///< h × [n_q, n_k] when wanted (masked entries -inf)
  std::vector<Matrix> head_outputs;  ///< h × [n_q, d_v] when wanted
  Matrix concat;                     ///< [n_q, h·d_v] when wanted
  Matrix output;                     ///< [n_q, d_out] when wanted and w_o is present
  std::vector<Matrix> value_vectors; ///< h × [n_k, d_out] when wanted (head_value_vectors)
  std::vector<long> fully_masked_rows;
  /// Empty when every number is finite; otherwise names what overflowed float32, with its
  /// verb ("the scores of head 3 overflow", "the projection V (X·W_V + b_V) overflows"), and
  /// the other fields are incomplete. Finite inputs can still overflow: 3e38·3e38 is +inf in
  /// float32, and a softmax of +inf is NaN.
  std::string overflow;
  /// True when only what the weights do not need overflowed (V, the W_O output): the same
  /// inputs give weights without AttentionWants::outputs.
  bool overflow_spares_weights = false;
};

/// Rotary position embedding applied to Q and K of every head (after bias, before scores).
struct RopeRequest {
  RopeSettings settings;
  std::vector<long long> query_positions;  ///< n_q positions
  std::vector<long long> key_positions;    ///< n_k positions
};

/// QK-norm: RMSNorm of each head block [h·d_k, (h+1)·d_k) of x [n, heads·d_k] in place, with the
/// gain [d_k] (Dehghani et al. 2023; Qwen 3 and Gemma 3 apply it before RoPE). The mean square in
/// double, as ggml's rms_norm sums it. An empty gain leaves x unchanged; a gain as wide as x
/// ([heads·d_k]) normalises each row whole, before any head split (OLMo 2's QK-norm).
void normalize_heads(Matrix& x, long d_k, const Vector& gain, Scalar epsilon);

/// softmax(Q_h K_gᵀ · scale + mask) for every query head h (g = its key/value head), and,
/// when asked, A_h·V_g, the concat [O_0 | O_1 | …] and concat·W_O + b_O (§3.2.2).
/// x_q [n_q, d_model_q], x_kv [n_k, d_model_kv], allowed [n_q, n_k] or empty (all allowed).
/// Receives query head `head`'s weights [n_q, n_k] as soon as they are computed (heads in order,
/// on the calling thread); it may move them out. What cached_self_attention hands them to when
/// the caller takes a layer head by head (memory: issue 23, 8192 tokens).
using HeadWeightsSink = std::function<void(int head, Matrix& weights)>;

/// Requires shapes consistent with `layer` (checked by io/).
/// V is projected only when head outputs or value vectors are wanted. per_head, when given,
/// receives each head's weights instead of result.weights, as cached_self_attention's does.
AttentionResult multi_head_attention(const AttentionLayer& layer, const Matrix& x_q,
                                     const Matrix& x_kv, const MaskMatrix& allowed,
                                     const AttentionWants& wants,
                                     const std::optional<RopeRequest>& rope = std::nullopt,
                                     const HeadWeightsSink* per_head = nullptr);

/// The keys and values one self-attention layer has computed for the positions so far (the
/// "KV cache" of incremental decoding: llama2.c's RunState key_cache/value_cache, one layer's
/// slice). Under a causal mask a position's K and V never change when positions are
/// appended, so each is computed once. K is stored after RoPE.
class KeyValueCache {
 public:
  KeyValueCache() = default;
  /// An empty cache with room for `capacity` positions of K width k_width (h_kv·d_k) and V
  /// width v_width (h_kv·d_v): appends up to it copy no earlier rows. Beyond it, the room doubles.
  KeyValueCache(long capacity, long k_width, long v_width) : k_(capacity, k_width), v_(capacity, v_width) {}
  /// Positions cached.
  long size() const { return size_; }
  /// K [size, h_kv·d_k] (rotated) and V [size, h_kv·d_v] of positions 0 … size−1.
  Eigen::Ref<const Matrix> keys() const { return k_.topRows(size_); }
  Eigen::Ref<const Matrix> values() const { return v_.topRows(size_); }
  /// Appends the rows of k [m, h_kv·d_k] and v [m, h_kv·d_v] (widths as the rows before).
  void append(Matrix k, Matrix v);

 private:
  Matrix k_, v_;  ///< [capacity, width]; rows size_ … capacity−1 unused
  long size_ = 0;
};

/// Causal self-attention of m new positions x [m, d_model] over the cached positions and
/// themselves: projects the new rows' Q, K and V, rotates Q and K, appends K and V to `cache`,
/// then attends exactly as multi_head_attention does with keys and values = the whole cache
/// (n_k = cache.size() + m after the call). Row i of the result equals row n_past + i of
/// multi_head_attention over all positions under a causal mask, up to float32 rounding of
/// the projections. allowed [m, n_k] or empty (all allowed: right for m == 1).
/// rope: query_positions and key_positions both the new rows' m positions (the cached keys
/// are already rotated). V is computed (and checked for overflow) even without `wants.outputs`;
/// on overflow the cache is left unchanged.
/// per_head, when given, receives each head's weights instead of result.weights (left empty):
/// one head at a time, its query rows split over the threads, handed on before the next head
/// is computed, so m × n_k weights are held whatever the thread count, not h × m × n_k. The
/// numbers are the same as without it, bit for bit (soft-capped scores run in one block for
/// that). On overflow the heads before it have been handed on already.
AttentionResult cached_self_attention(const AttentionLayer& layer, const Matrix& x, KeyValueCache& cache,
                                      const MaskMatrix& allowed, const AttentionWants& wants,
                                      const std::optional<RopeRequest>& rope = std::nullopt,
                                      const HeadWeightsSink* per_head = nullptr);

}  // namespace attnviz
