// A pre-norm decoder-only Transformer (LLaMA: RMSNorm, RoPE, grouped-query attention, SwiGLU;
// and the families of model/families/, whose differences — LayerNorm, post-norms, GeGLU/GELU,
// fused tensors, QK-norm, learned positions, windows, soft-caps — its config's BlockTraits and
// settings name) run from its real weights, layer by layer, handing each layer's attention to a
// sink. The weights come from any WeightSource (a GGUF file, a safetensors
// folder); the architecture's settings from a DecoderConfig. Every attention layer is the
// engine's attention (cached_self_attention) on that layer's real input. Greedy decoding is
// incremental: each layer's keys and values are kept, so a new token costs one row per layer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention/rope.hpp"
#include "core/types.hpp"
#include "model/block_pieces.hpp"
#include "model/block_probe.hpp"
#include "model/families/block_traits.hpp"
#include "model/formats/quant_matmul.hpp"
#include "model/head_ablation.hpp"
#include "model/model_run.hpp"
#include "model/residual_trace.hpp"

namespace attnviz {

/// Shapes and settings of a decoder. Tensor names follow GGUF's (llama.cpp's) naming:
/// token_embd.weight, blk.L.attn_norm.weight, blk.L.attn_{q,k,v,output}.weight, blk.L.ffn_norm.weight,
/// blk.L.ffn_{gate,up,down}.weight, output_norm.weight, output.weight; a WeightSource maps its
/// own names onto these.
struct DecoderConfig {
  std::string architecture;   ///< llama.cpp's name of the family: "llama", "qwen2", "gemma2"…
  std::string name;
  std::string file;           ///< the model file or folder, for messages
  int num_layers = 0;
  long d_model = 0;
  int num_heads = 0;
  int num_kv_heads = 0;
  long d_k = 0;               ///< per head (d_model / num_heads unless the file says otherwise)
  long d_ff = 0;              ///< feed-forward width
  long n_vocab = 0;
  long context_length = 0;    ///< 0 = unknown
  double rms_epsilon = 1e-5;
  RopeSettings rope;          ///< style, theta, dim, scaling as the architecture applies them
  std::string rope_scaling = "none";  ///< description for the dump: "none", "linear x4", "llama3"
  /// config.json's partial_rotary_factor when given: rope.dim = int(d_k · factor) (for the dump).
  std::optional<double> partial_rotary_factor;
  bool qkv_bias = false;      ///< blk.L.attn_{q,k,v}.bias present (Qwen2)
  bool tied_output = false;   ///< output.weight absent: logits use token_embd.weight
  /// What the family's block computes (norms, feed-forward, fused tensors, positions…);
  /// llama's by default. rms_epsilon is the ε of whichever norm it names.
  BlockTraits block;
  /// The GELU of a GELU or GeGLU feed-forward (GPT-2, Gemma) as the format's engine computes it:
  /// llama.cpp's float16 table (ggml_gelu, ggml_geglu) for GGUF files, transformers' tanh
  /// formula (gelu_new, gelu_pytorch_tanh) for folders.
  GeluKind gelu = GeluKind::Tanh;
  /// The attention logit scale when the family's file sets one (Gemma: llama.cpp's
  /// f_attention_scale, transformers' query_pre_attn_scalar^-½); absent: 1/√d_k.
  std::optional<double> attention_scale;
  double attention_softcap = 0;  ///< c > 0: scaled scores s → c·tanh(s/c) before mask and softmax (Gemma 2)
  double final_softcap = 0;      ///< c > 0: output logits z → c·tanh(z/c) (Gemma 2)
  /// Per layer (num_layers values, or empty = none): W > 0 makes the layer a sliding-window
  /// one, where query i sees keys i − W < j ≤ i (llama.cpp's LLAMA_SWA_TYPE_STANDARD,
  /// transformers' sliding_window); 0 = every earlier key.
  std::vector<long> sliding_window;
  /// Layers that turn no RoPE at all (NoPE; SmolLM3: llama.cpp every 4th, transformers'
  /// no_rope_layers), ascending; empty: every layer turns.
  std::vector<int> no_rope_layers;
  /// Granite's multipliers (llama.cpp's f_embedding_scale, f_residual_scale, f_logit_scale;
  /// transformers' embedding_multiplier, residual_multiplier, logits_scaling): the embeddings
  /// × embedding_multiplier, each sublayer's output × residual_multiplier before it joins the
  /// residual stream, the logits ÷ logit_divisor. 1 elsewhere.
  double embedding_multiplier = 1.0;
  double residual_multiplier = 1.0;
  double logit_divisor = 1.0;
  /// RoPE of the sliding-window layers when they turn otherwise than rope, as the family's rule
  /// for the format gives it (model/families/local_rope: Gemma 3's own base, unscaled; Gemma 2's
  /// own base with the file's scale); nullopt: every layer turns by rope.
  std::optional<RopeSettings> local_rope;
  /// What the file holds that attnviz reads past (metadata it does not know), one line each
  /// naming the file; the CLI prints them.
  std::vector<std::string> warnings;
};

/// The value rules both model readers (gguf_decoder, hf_decoder) apply to a DecoderConfig's
/// numeric settings, one per kind of value, so a GGUF file and a config.json are held to the
/// same ones. Each returns `value`, or throws InputError::bad_value naming `file`, `field` (a
/// metadata key or a JSON pointer) and the value ("inf", "-1", "nan").
/// RoPE's base θ and its scaling factors (linear, llama3): finite and > 0.
double require_positive_setting(double value, const std::string& file, const std::string& field);
/// RMSNorm's ε: finite and ≥ 0.
double require_rms_epsilon(double value, const std::string& file, const std::string& field);

/// Where a model's tensors come from. Each call decodes one tensor to float32 (nothing is kept).
class WeightSource {
 public:
  virtual ~WeightSource() = default;
  /// Tensor `name` as a row-major [rows, cols] matrix (a Linear weight as [out, in]). Throws
  /// InputError naming the file and the tensor when it is missing, of another shape, or of a
  /// type that cannot be decoded.
  virtual Matrix matrix(const std::string& name, long rows, long cols) const = 0;
  /// Rows `ids` of the [rows, cols] tensor `name`, in that order (an embedding lookup). This
  /// default decodes the whole tensor; sources that can decode single rows override it.
  virtual Matrix gather_rows(const std::string& name, long rows, long cols, const std::vector<std::int32_t>& ids) const {
    const Matrix all = matrix(name, rows, cols);
    Matrix out(static_cast<Eigen::Index>(ids.size()), cols);
    for (std::size_t i = 0; i < ids.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = all.row(ids[i]);
    return out;
  }
  /// Tensor `name` [rows, cols] as the ggml blocks the source stores it in (any ggml type, f32
  /// and f16 included), borrowed from the source (valid while it lives); none when the tensor is
  /// missing or of another shape, and from sources that do not store ggml blocks (safetensors).
  virtual std::optional<QuantRows> quant_rows(const std::string& name, long rows, long cols) const {
    (void)name, (void)rows, (void)cols;
    return std::nullopt;
  }
  /// Throws InputError naming the source, the tensor and its type when tensor `name` is stored in
  /// a type this build cannot decode (nor multiply): called for every tensor a model needs, at
  /// load, so that a run stops before it writes anything. This default accepts every tensor.
  virtual void check_type(const std::string& name) const { (void)name; }
  /// A 1-D tensor of n values.
  virtual Vector vector(const std::string& name, long n) const = 0;
  virtual bool has(const std::string& name) const = 0;
  /// Row-major shape of the named tensor ([out, in] for a Linear weight), without decoding it;
  /// empty when it is missing.
  virtual std::vector<std::int64_t> shape(const std::string& name) const = 0;
  /// Where the named tensor is looked for and what the source calls it, for messages:
  /// "model.gguf: tensor blk.0.attn_q.weight".
  virtual std::string describe(const std::string& name) const = 0;
  /// The source's own names of the tensors it holds that are not among `read` (llama.cpp's
  /// names, as the model asks for them), in the source's order: what the architecture ignores,
  /// for a warning. This default knows no list and returns none.
  virtual std::vector<std::string> unread(const std::set<std::string>& read) const {
    (void)read;
    return {};
  }
};

/// What one forward pass keeps.
struct ForwardRequest {
  std::vector<std::int32_t> token_ids;  ///< the decoder input (BOS included when wanted)
  Tokens tokens;                        ///< their labels, for the records
  LayerSelection layers;                ///< which layers' attention go to the sink
  const BlockSink* sink = nullptr;      ///< nullptr: no attention kept (greedy decoding)
  /// With a sink: the selected layers' weights go here head by head as computed (model_run.hpp's
  /// HeadSink), and the sink gets each block without weights after its heads. Not with `trace`.
  const HeadSink* head_sink = nullptr;
  bool logits = true;                   ///< false: skip the output layer (forward returns no logits)
  /// What each block keeps beside its weights: scores, head outputs with the block's output
  /// (--scores, --outputs), and f^h(x_j) with the residual entering the layer (--measure).
  AttentionWants wants{false, false, false};
  /// The residual stream and sublayer outputs each selected block hands on, every position
  /// (--activations; AttentionBlock::activations). The last selected layer's MLP then runs.
  ActivationWants activations;
  // Head attribution (issue 20 §3); none of these changes what the sink receives.
  ResidualTrace* trace = nullptr;       ///< filled with the last position's parts (residual_trace.hpp)
  const HeadAblation* ablation = nullptr;  ///< heads whose z^h is zeroed before W_O (head_ablation.hpp)
  /// Start at layer `start_layer` from `start_residual` [n, d_model], the residual entering it
  /// (a trace's layer_inputs), instead of embedding token_ids: the layers before it are skipped.
  const Matrix* start_residual = nullptr;
  int start_layer = 0;
  /// Only the last position's logits are wanted (ablation reruns): the last layer attends from
  /// its last row alone (keys and values still from every row) and runs its MLP on that row.
  /// Requires no trace and no sink.
  bool last_row_only = false;
  const BlockProbe* probe = nullptr;    ///< sees each selected layer's attention inputs (explain)
};

/// The decoder with its config and weights; layers are decoded from the source as they run.
class DecoderModel {
 public:
  /// Checks that every tensor the config needs exists with its shape (without decoding any).
  /// Throws InputError naming the first missing or misshapen tensor.
  DecoderModel(DecoderConfig config, std::unique_ptr<WeightSource> weights);

  const DecoderConfig& config() const { return config_; }

  /// On: every product with a weight the source stores in ggml blocks is computed as llama.cpp's
  /// CPU backend computes it: the activations converted to the weight type's vec_dot_type (Q8_0,
  /// Q8_1, Q8_K blocks, float16 or bfloat16) and multiplied per block (model/formats/quant_matmul;
  /// the projections, the feed-forward and the logits; the embedding stays a row lookup). Types
  /// with no such product here (iq1–iq3, tq) and f32 are decoded and multiplied in float32. Off:
  /// every weight is decoded to float32 and multiplied exactly (--exact-matmul).
  /// decoder_from_gguf turns it on.
  void set_quantized_matmul(bool on) { quantized_matmul_ = on; }
  /// How the products were computed, per weight type of the product tensors, for the dump's model
  /// block: "q4_K: q8_K activations, as llama.cpp; q6_K: q8_K activations, as llama.cpp" (types in
  /// the order the forward pass meets them; "float32" for each under --exact-matmul and for f32);
  /// "" when every product weight is f32 or the source is not GGUF.
  std::string matmul() const;

  /// Runs every layer on request.token_ids (positions 0 … n−1, causal mask) and returns the
  /// logits of the last position (n_vocab; none when request.logits is false). Each selected layer's attention weights
  /// [head][query][key] go to the sink as an AttentionBlock when one is given. Keeps no
  /// cache: one layer's keys and values are held at a time.
  /// Throws InputError for no ids or an id outside [0, n_vocab).
  std::vector<float> forward(const ForwardRequest& request) const;

  /// Incremental forward pass: runs `ids` as the next positions of the sequence whose every
  /// layer's keys and values are in `caches` (one KeyValueCache per layer; an empty vector
  /// starts a sequence at position 0), appends their K and V, and returns the logits of the
  /// last of them (n_vocab). `caches` must come from earlier calls on this model. The logits equal forward()'s over the whole sequence up to
  /// float32 rounding (products over fewer rows round differently; tests/decoder_model_test).
  /// Throws InputError for no ids or an id outside [0, n_vocab).
  std::vector<float> extend(std::vector<KeyValueCache>& caches, const std::vector<std::int32_t>& ids) const;

  /// Greedy continuation: appends argmax tokens to `ids` (at most `count`, stopping after
  /// `eos` when it is ≥ 0, or when `ids` reaches the context length) and returns how many
  /// were added. The prompt runs once, then each new token alone against the cached keys
  /// and values (extend). Throws InputError for an empty `ids` when count > 0.
  int generate(std::vector<std::int32_t>& ids, int count, std::int32_t eos) const;
  /// generate() stopping after any of `end_tokens` (GGUF's EOS, EOT and EOM; a list of
  /// eos_token_id in config.json or generation_config.json); none: only count and the context stop it.
  int generate(std::vector<std::int32_t>& ids, int count, const std::vector<std::int32_t>& end_tokens) const;

  /// Row `id` of the output projection (the embedding's when tied), [d_model]: the target's
  /// unembedding for logit attribution. Requires id in [0, n_vocab).
  Vector output_row(std::int32_t id) const;

  /// Bytes of the key/value caches generate() holds for n positions (float32 K and V of
  /// every layer).
  double cache_bytes(double n) const;

  /// Bytes of float32 weights of one layer and of the embedding table: the memory estimate.
  double layer_float_bytes() const;

  /// W_E, the output matrix and the final norm's gain, decoded (pieces left empty): what the
  /// full OV circuit and the QK token lists read (analysis/circuits).
  OutputWeights output_weights() const;

  /// For runs over many texts (census): keeps every layer's decoded, transposed projection and
  /// feed-forward matrices after their first use, when all layers' take at most `max_bytes`
  /// (float32), instead of decoding them again for each text. Returns whether they are kept.
  /// Not thread-safe while the cache fills (the model is otherwise read-only).
  bool keep_decoded_weights(double max_bytes);

 private:
  /// One layer's attention parameters (W as [in, out] for Q = X·W). A Q8_0 weight under
  /// quantized matmul becomes a Projection, its float32 matrix left empty unless `keep_float`
  /// (what the residual trace, value vectors and explain's probe read).
  AttentionLayer attention_layer(int layer, bool keep_float = false) const;
  /// X·Wᵀ as llama.cpp computes it (quantized_product) for rows [first, first + count) (count < 0:
  /// all) of the [rows, cols] tensor `name`, when quantized matmul is on and the tensor's type has
  /// such a product; empty otherwise.
  Projection quantized_projection(const std::string& name, long rows, long cols, long first = 0, long count = -1) const;
  /// X [m, in]·Wᵀ for layer l's tensor `name` [rows, cols]: quantized_projection, or decoded.
  Matrix linear(int l, const char* name, long rows, long cols, const Matrix& x) const;
  /// The output projection as a Projection when it is quantised, else empty.
  Projection output_projection() const;
  /// Embedding rows [n, d_model] of ids at positions first_position …; throws InputError for
  /// no ids or an id outside the vocabulary, naming its position.
  Matrix embed(const std::vector<std::int32_t>& ids, long first_position) const;
  /// Layer l (pre-norm; Touvron et al. 2023) on the rows x [m, d_model] that follow the
  /// cache's positions, in place:
  ///   x += [PostNorm](Attention(Norm(x))) over the cached positions and these rows;
  ///   x += [PostNorm](FFN(Norm(x)))
  /// with the family's Norm (RMSNorm, LayerNorm), FFN (SwiGLU, GeGLU, GELU; feed_forward) and
  /// Gemma's post-norms when its BlockTraits say so.
  /// `layer` is attention_layer(l); allowed is [m, cache.size() + m]. Appends the rows' K, V to
  /// the cache and returns the attention (weights [m, n_k] per head). Throws InputError on
  /// float32 overflow.
  /// `probe`, when given, sees the attention's inputs (BlockInputs) before it runs; `per_head`,
  /// when given, receives the weights head by head (cached_self_attention) instead of the result.
  /// `attention_only`: the last layer a pass needs, read for its attention alone: x and the
  /// cache are left as they are, V, the head outputs and W_O are computed only when `wants`
  /// asks for them, and the feed-forward is skipped (its result would feed nothing).
  AttentionResult run_layer(int l, const AttentionLayer& layer, Matrix& x, KeyValueCache& cache,
                            const MaskMatrix& allowed, const AttentionWants& wants = {false, true},
                            const BlockProbe* probe = nullptr, const HeadWeightsSink* per_head = nullptr,
                            bool attention_only = false, BlockActivations* taps = nullptr,
                            const ActivationWants& tap_wants = {}) const;
  /// run_layer for the last row of x [n, d_model] alone: its attention over every row (the
  /// rows' own K and V), then its feed-forward; x becomes that row [1, d_model].
  void run_last_row(int l, const AttentionLayer& layer, Matrix& x) const;
  /// After layer l's attention: x += [PostNorm](attention_output), then the feed-forward
  /// sublayer on x's rows; throws InputError when x is no longer finite. `taps`, when given,
  /// keeps resid_mid, attn_out, mlp_out and resid_post where `wants` asks for them.
  void finish_layer(int l, Matrix& x, const Matrix& attention_output, BlockActivations* taps = nullptr,
                    const ActivationWants& wants = {}) const;
  /// The family's norm (RMSNorm or LayerNorm) of x [m, d_model] with layer l's tensor `norm`
  /// ("attn_norm": blk.l.attn_norm.weight, and .bias for LayerNorm); throws InputError naming
  /// the file and layer when a row's mean square overflows float32.
  Matrix layer_norm_input(int l, const Matrix& x, const char* norm) const;
  /// What layer l's sublayer reads: layer_norm_input(l, x, norm) in a pre-norm block, x itself
  /// where the family has no pre-norm (BlockTraits::pre_norm false: OLMo 2).
  Matrix sublayer_input(int l, const Matrix& x, const char* norm) const;
  /// The family's norm of x with the tensor `name`.weight (and .bias), any layer or none.
  Matrix norm(const Matrix& x, const std::string& name) const;
  /// The family's feed-forward network of layer l on h [m, d_model]: [m, d_model].
  Matrix feed_forward(int l, const Matrix& h) const;
  /// Layer l's sliding window W (0: none).
  long window_of(int l) const;
  /// Allowed pairs of layer l for m rows after n_past cached positions: causal, and within
  /// the layer's sliding window when it has one.
  MaskMatrix layer_mask(int l, long n_past, long m) const;
  /// RoPE of layer l (θ of a sliding-window layer may differ), or none for learned positions.
  std::optional<RopeRequest> layer_rope(int l, long first, long m) const;
  /// The output projection [n_vocab, d_model] (the embedding table when tied), decoded.
  Matrix output_matrix() const;
  /// Final RMSNorm and output projection of the last row of x [n, d_model]: n_vocab logits.
  /// `output` is output_matrix(), decoded by the caller once for many calls (generate()), or
  /// empty when the output is quantised (output_projection()).
  std::vector<float> last_logits(const Matrix& x, const Matrix& output) const;
  /// extend() with the output projection already decoded.
  std::vector<float> extend(std::vector<KeyValueCache>& caches, const std::vector<std::int32_t>& ids,
                            const Matrix& output) const;
  /// Residual-trace hooks (issue 20 §3): the embedding's parts (learned positions apart), a
  /// layer's parts at the last row as they join the residual (Gemma's post-attention norm with
  /// its statistic fixed: joining_gain; GPT-2's MLP output bias apart), and the final norm's
  /// statistic, gain, bias and soft-cap.
  void trace_embedding(const Matrix& x, ResidualTrace& trace) const;
  Vector joining_gain(int l, const Matrix& output) const;
  void trace_layer(int l, const AttentionLayer& layer, const AttentionResult& result, const Matrix& x, ResidualTrace& trace) const;
  void trace_final_norm(const Matrix& x, ResidualTrace& trace) const;
  /// Layer l's attention as the sink receives it (weights moved out of `result`).
  AttentionBlock block_of(int l, Scalar scale, const Tokens& tokens, AttentionResult&& result) const;
  /// block_of, with what `wants` asked for moved in too (scores, outputs, value vectors) and,
  /// with value vectors, the residual `x` entering the layer and the layer's b_O.
  AttentionBlock block_of(int l, Scalar scale, const Tokens& tokens, AttentionResult&& result, const AttentionWants& wants,
                          const Matrix& x, const Vector& b_o) const;

  /// Linear weight `name` stored [rows, cols] ([out, in]), as [cols, rows] for X·W; from
  /// decoded_ when keep_decoded_weights is on.
  Matrix linear_weight(const std::string& name, long rows, long cols) const;
  /// linear_weight's decoded_ entry itself (decoding it on first use); keep_decoded_weights on.
  const Matrix& kept_linear_weight(const std::string& name, long rows, long cols) const;

  DecoderConfig config_;
  std::unique_ptr<WeightSource> weights_;
  bool keep_decoded_ = false;
  mutable std::map<std::string, Matrix> decoded_;  ///< linear_weight's, by tensor name
  bool quantized_matmul_ = false;
};

/// RMSNorm (Zhang & Sennrich 2019) of each row of x [n, d]: x / sqrt(mean(x²) + ε) · gain.
/// Throws InputError when a row's mean square overflows float32 (ggml would return zeros).
Matrix rms_norm(const Matrix& x, const Vector& gain, double epsilon);

}  // namespace attnviz
