#include "model/decoder_model.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>
#include <stdexcept>

#include "attention/mask.hpp"
#include "core/error.hpp"
#include "core/product_threads.hpp"
#include "core/split_product.hpp"
#include "model/block_pieces.hpp"
#include "model/ggml_products.hpp"

namespace attnviz {

namespace {

std::string block_name(int layer, const char* tensor) { return "blk." + std::to_string(layer) + "." + tensor; }

// Causal mask of m new positions after n_past cached ones, [m, n_past + m]: the new row i
// (position n_past + i) may attend keys 0 … n_past + i (Vaswani et al. 2017, §3.2.3).
MaskMatrix causal_after(long n_past, long m) {
  MaskMatrix allowed(m, n_past + m);
  allowed.leftCols(n_past).setOnes();
  allowed.rightCols(m) = build_mask(m, m, /*causal=*/true, {});
  return allowed;
}

// Shortest text that reads back as `value`: "1e-05", "inf", "-1".
std::string number_text(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

}  // namespace

double require_positive_setting(double value, const std::string& file, const std::string& field) {
  if (!(std::isfinite(value) && value > 0)) throw InputError::bad_value(file, field, "a finite number > 0", number_text(value));
  return value;
}

double require_rms_epsilon(double value, const std::string& file, const std::string& field) {
  if (!(std::isfinite(value) && value >= 0)) throw InputError::bad_value(file, field, "a finite number >= 0", number_text(value));
  return value;
}

Matrix rms_norm(const Matrix& x, const Vector& gain, double epsilon) {
  Matrix out(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    // As ggml_compute_forward_rms_norm_f32, to the bit: each square in float32, summed in double,
    // the mean rounded to float32, scale = 1/sqrt(mean + ε) in float32, then x·scale·gain. The
    // products that follow round their activations to 8 bits (or float16), so a last-bit
    // difference here can move a value across a rounding step of them.
    double sum = 0.0;
    for (Eigen::Index c = 0; c < x.cols(); ++c) sum += static_cast<double>(x(r, c) * x(r, c));
    const double mean_square = sum / static_cast<double>(x.cols());
    // ggml turns this mean into a float32 too, and beyond 3.4e38 divides every x by infinity:
    // a row of zeros that looks like a result. Refused instead.
    if (!std::isfinite(static_cast<Scalar>(mean_square))) {
      char value[32];
      std::snprintf(value, sizeof value, "%.3g", mean_square);
      throw InputError("RMSNorm: the mean square of row " + std::to_string(r) + " (" + value + ") overflows float32");
    }
    const Scalar scale = 1.0f / std::sqrt(static_cast<Scalar>(mean_square) + static_cast<Scalar>(epsilon));
    out.row(r) = (x.row(r) * scale).cwiseProduct(gain.transpose());
  }
  return out;
}

DecoderModel::DecoderModel(DecoderConfig config, std::unique_ptr<WeightSource> weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  const DecoderConfig& c = config_;
  const long q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
  std::set<std::string> read = {"rope_freqs.weight"};  // LLaMA 3's, read with the settings (gguf_decoder)
  auto check = [&](const std::string& name, long rows, long cols) {
    read.insert(name);
    const std::vector<std::int64_t> expected = cols == 0 ? std::vector<std::int64_t>{rows} : std::vector<std::int64_t>{rows, cols};
    const std::vector<std::int64_t> found = weights_->shape(name);
    auto text = [](const std::vector<std::int64_t>& shape) {
      std::string t = "[";
      for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
      return t + "]";
    };
    if (found.empty()) throw InputError(weights_->describe(name) + " is missing (architecture " + c.architecture + " needs it)");
    if (found != expected)
      throw InputError(weights_->describe(name) + ": expected shape " + text(expected) + " (from the model's settings), got " + text(found));
    weights_->check_type(name);
  };
  const BlockTraits& b = c.block;
  const bool layer_norm = b.norm == NormKind::Layer;
  const auto check_norm = [&](const std::string& name) {
    check(name + ".weight", c.d_model, 0);
    if (layer_norm && b.norm_bias) check(name + ".bias", c.d_model, 0);
  };
  check("token_embd.weight", c.n_vocab, c.d_model);
  if (b.positions == PositionKind::Learned) {
    if (c.context_length <= 0) throw InputError(c.file + ": learned positions need the context length (position_embd.weight's rows)");
    check("position_embd.weight", c.context_length, c.d_model);
  }
  check_norm("output_norm");
  if (!c.tied_output) check("output.weight", c.n_vocab, c.d_model);
  for (int l = 0; l < c.num_layers; ++l) {
    const auto blk = [&](const char* tensor) { return block_name(l, tensor); };
    if (b.pre_norm) check_norm(block_name(l, "attn_norm"));
    if (b.fused_qkv) {
      check(blk("attn_qkv.weight"), q_width + 2 * kv_width, c.d_model);
      if (c.qkv_bias) check(blk("attn_qkv.bias"), q_width + 2 * kv_width, 0);
    } else {
      check(blk("attn_q.weight"), q_width, c.d_model);
      check(blk("attn_k.weight"), kv_width, c.d_model);
      check(blk("attn_v.weight"), kv_width, c.d_model);
      if (c.qkv_bias) {
        check(blk("attn_q.bias"), q_width, 0);
        check(blk("attn_k.bias"), kv_width, 0);
        check(blk("attn_v.bias"), kv_width, 0);
      }
    }
    if (b.qk_norm) {
      check(blk("attn_q_norm.weight"), b.qk_norm_whole ? q_width : c.d_k, 0);
      check(blk("attn_k_norm.weight"), b.qk_norm_whole ? kv_width : c.d_k, 0);
    }
    check(blk("attn_output.weight"), c.d_model, q_width);
    if (b.output_bias) check(blk("attn_output.bias"), c.d_model, 0);
    if (b.post_attention_norm) check_norm(block_name(l, "post_attention_norm"));
    if (b.pre_norm) check_norm(block_name(l, "ffn_norm"));
    if (b.ffn == FeedForwardKind::Gelu) {
      check(blk("ffn_up.weight"), c.d_ff, c.d_model);
      if (b.ffn_bias) check(blk("ffn_up.bias"), c.d_ff, 0);
    } else if (b.fused_gate_up) {
      check(blk("ffn_up.weight"), 2 * c.d_ff, c.d_model);
    } else {
      check(blk("ffn_gate.weight"), c.d_ff, c.d_model);
      check(blk("ffn_up.weight"), c.d_ff, c.d_model);
    }
    check(blk("ffn_down.weight"), c.d_model, c.d_ff);
    if (b.ffn_bias) check(blk("ffn_down.bias"), c.d_model, 0);
    if (b.post_ffn_norm) check_norm(block_name(l, "post_ffw_norm"));
  }
  // Nothing is dropped in silence: a tensor the architecture does not read (a bias it has no
  // place for, layers past its layer count, a tied copy of the embedding) is named.
  const std::vector<std::string> ignored = weights_->unread(read);
  if (!ignored.empty()) {
    std::string names;
    for (std::size_t i = 0; i < ignored.size() && i < 6; ++i) names += (i ? ", " : "") + ignored[i];
    if (ignored.size() > 6) names += " and " + std::to_string(ignored.size() - 6) + " more";
    config_.warnings.push_back(c.file + ": " + std::to_string(ignored.size()) + " tensor" + (ignored.size() == 1 ? "" : "s") +
                               " that architecture " + c.architecture + " with " + std::to_string(c.num_layers) +
                               " layers does not read, ignored: " + names);
  }
}

Matrix DecoderModel::linear_weight(const std::string& name, long rows, long cols) const {
  if (!keep_decoded_) return weights_->matrix(name, rows, cols).transpose();
  return kept_linear_weight(name, rows, cols);
}

const Matrix& DecoderModel::kept_linear_weight(const std::string& name, long rows, long cols) const {
  const auto found = decoded_.find(name);
  if (found != decoded_.end()) return found->second;
  return decoded_.emplace(name, weights_->matrix(name, rows, cols).transpose()).first->second;
}

bool DecoderModel::keep_decoded_weights(double max_bytes) {
  const DecoderConfig& c = config_;
  const double q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
  const double ffn = (c.block.ffn == FeedForwardKind::Gelu ? 2.0 : 3.0) * c.d_ff * c.d_model;
  const double per_layer = 2.0 * q_width * c.d_model + 2.0 * kv_width * c.d_model + ffn;
  keep_decoded_ = 4.0 * per_layer * c.num_layers <= max_bytes;
  return keep_decoded_;
}


Projection DecoderModel::quantized_projection(const std::string& name, long rows, long cols, long first, long count) const {
  if (!quantized_matmul_) return {};
  return ggml_projection(*weights_, name, rows, cols, first, count);
}

Matrix DecoderModel::linear(int l, const char* name, long rows, long cols, const Matrix& x) const {
  // Eigen's thread count here is run_layer's ProductThreads choice for the feed-forward.
  if (const Projection p = quantized_projection(block_name(l, name), rows, cols)) return p(x, Eigen::nbThreads());
  // In fixed column blocks (split_product): the same bits whatever --threads is.
  if (keep_decoded_) return split_product(x, kept_linear_weight(block_name(l, name), rows, cols), Eigen::nbThreads());  // no copy of the kept matrix
  return split_product(x, linear_weight(block_name(l, name), rows, cols), Eigen::nbThreads());  // [in, out]
}

Projection DecoderModel::output_projection() const {
  const DecoderConfig& c = config_;
  return quantized_projection(c.tied_output ? "token_embd.weight" : "output.weight", c.n_vocab, c.d_model);
}

std::string DecoderModel::matmul() const {
  const DecoderConfig& c = config_;
  const long q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
  std::vector<ProductTensor> tensors;
  for (int l = 0; l < c.num_layers; ++l) {
    if (c.block.fused_qkv) {
      tensors.push_back({block_name(l, "attn_qkv.weight"), q_width + 2 * kv_width, c.d_model});
    } else {
      tensors.push_back({block_name(l, "attn_q.weight"), q_width, c.d_model});
      tensors.push_back({block_name(l, "attn_k.weight"), kv_width, c.d_model});
      tensors.push_back({block_name(l, "attn_v.weight"), kv_width, c.d_model});
    }
    tensors.push_back({block_name(l, "attn_output.weight"), c.d_model, q_width});
    const long up_rows = c.block.fused_gate_up ? 2 * c.d_ff : c.d_ff;
    tensors.push_back({block_name(l, "ffn_gate.weight"), c.d_ff, c.d_model});
    tensors.push_back({block_name(l, "ffn_up.weight"), up_rows, c.d_model});
    tensors.push_back({block_name(l, "ffn_down.weight"), c.d_model, c.d_ff});
  }
  tensors.push_back({c.tied_output ? "token_embd.weight" : "output.weight", c.n_vocab, c.d_model});
  return matmul_description(*weights_, tensors, quantized_matmul_);
}

AttentionLayer DecoderModel::attention_layer(int layer, bool keep_float) const {
  const DecoderConfig& c = config_;
  const long q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
  AttentionLayer a;
  a.num_heads = c.num_heads;
  a.num_kv_heads = c.num_kv_heads;
  a.q_width = q_width;
  a.v_width = kv_width;
  // Stored as nn.Linear's [out, in]; the engine's convention is Q = X·W_Q, so W is [in, out].
  if (c.block.fused_qkv) {  // rows [Q; K; V] (llama.cpp's attn_qkv, split by views of these widths)
    const std::string name = block_name(layer, "attn_qkv.weight");
    a.q_projection = quantized_projection(name, q_width + 2 * kv_width, c.d_model, 0, q_width);
    a.k_projection = quantized_projection(name, q_width + 2 * kv_width, c.d_model, q_width, kv_width);
    a.v_projection = quantized_projection(name, q_width + 2 * kv_width, c.d_model, q_width + kv_width, kv_width);
    if (keep_float || !a.q_projection) {
      const Matrix qkv = linear_weight(name, q_width + 2 * kv_width, c.d_model);
      a.w_q = qkv.leftCols(q_width);
      a.w_k = qkv.middleCols(q_width, kv_width);
      a.w_v = qkv.rightCols(kv_width);
    }
    if (c.qkv_bias) {
      const Vector bias = weights_->vector(block_name(layer, "attn_qkv.bias"), q_width + 2 * kv_width);
      a.b_q = bias.head(q_width);
      a.b_k = bias.segment(q_width, kv_width);
      a.b_v = bias.tail(kv_width);
    }
  } else {
    const auto weight = [&](const char* name, long rows, Projection& projection) -> Matrix {
      projection = quantized_projection(block_name(layer, name), rows, c.d_model);
      if (projection && !keep_float) return Matrix();
      return linear_weight(block_name(layer, name), rows, c.d_model);
    };
    a.w_q = weight("attn_q.weight", q_width, a.q_projection);
    a.w_k = weight("attn_k.weight", kv_width, a.k_projection);
    a.w_v = weight("attn_v.weight", kv_width, a.v_projection);
    if (c.qkv_bias) {
      a.b_q = weights_->vector(block_name(layer, "attn_q.bias"), q_width);
      a.b_k = weights_->vector(block_name(layer, "attn_k.bias"), kv_width);
      a.b_v = weights_->vector(block_name(layer, "attn_v.bias"), kv_width);
    }
  }
  a.o_projection = quantized_projection(block_name(layer, "attn_output.weight"), c.d_model, q_width);
  if (keep_float || !a.o_projection)
    a.w_o = linear_weight(block_name(layer, "attn_output.weight"), c.d_model, q_width);
  if (c.block.output_bias) a.b_o = weights_->vector(block_name(layer, "attn_output.bias"), c.d_model);
  if (c.block.qk_norm) {
    a.q_norm = weights_->vector(block_name(layer, "attn_q_norm.weight"), c.block.qk_norm_whole ? q_width : c.d_k);
    a.k_norm = weights_->vector(block_name(layer, "attn_k_norm.weight"), c.block.qk_norm_whole ? kv_width : c.d_k);
    a.qk_norm_epsilon = static_cast<Scalar>(c.rms_epsilon);
  }
  if (c.attention_scale) a.scale = static_cast<Scalar>(*c.attention_scale);
  a.logit_softcap = static_cast<Scalar>(c.attention_softcap);
  return a;
}

Matrix DecoderModel::embed(const std::vector<std::int32_t>& ids, long first_position) const {
  const DecoderConfig& c = config_;
  if (ids.empty()) throw InputError("no token ids to run the model on");
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] < 0 || ids[t] >= c.n_vocab)
      throw InputError("token id " + std::to_string(ids[t]) + " (position " + std::to_string(first_position + static_cast<long>(t)) +
                       ") is outside the vocabulary of " + std::to_string(c.n_vocab) + " tokens");
  }
  // Only the rows in use are decoded, not the whole [n_vocab, d_model] table.
  Matrix x = weights_->gather_rows("token_embd.weight", c.n_vocab, c.d_model, ids);
  // Gemma scales by √d_model rounded to float32, as both llama.cpp (sqrtf) and transformers
  // (a tensor of the embedding's dtype) do.
  if (c.block.embedding_scale) x *= std::sqrt(static_cast<Scalar>(c.d_model));
  // Granite's, in float32 as ggml_scale and transformers multiply.
  if (c.embedding_multiplier != 1.0) x *= static_cast<Scalar>(c.embedding_multiplier);
  if (c.block.positions == PositionKind::Learned) {
    std::vector<std::int32_t> positions(ids.size());
    for (std::size_t t = 0; t < ids.size(); ++t) {
      const long p = first_position + static_cast<long>(t);
      if (p >= c.context_length)
        throw InputError(c.file + ": position " + std::to_string(p) + " is past the " + std::to_string(c.context_length) +
                         " learned positions (position_embd.weight)");
      positions[t] = static_cast<std::int32_t>(p);
    }
    x += weights_->gather_rows("position_embd.weight", c.context_length, c.d_model, positions);
  }
  return x;
}

Matrix DecoderModel::norm(const Matrix& x, const std::string& name) const {
  const DecoderConfig& c = config_;
  const Vector gain = weights_->vector(name + ".weight", c.d_model);
  if (c.block.norm == NormKind::Rms) return rms_norm(x, gain, c.rms_epsilon);
  return layer_norm(x, gain, c.block.norm_bias ? weights_->vector(name + ".bias", c.d_model) : Vector(), c.rms_epsilon);
}

Matrix DecoderModel::sublayer_input(int l, const Matrix& x, const char* norm_name) const {
  return config_.block.pre_norm ? layer_norm_input(l, x, norm_name) : x;
}

Matrix DecoderModel::layer_norm_input(int l, const Matrix& x, const char* norm_name) const {
  try {
    return norm(x, block_name(l, norm_name));
  } catch (const InputError& e) {
    throw InputError(config_.file + ": layer " + std::to_string(l) + ": " + e.what() +
                     ": the layer's input holds too large values (the embeddings or an earlier layer)");
  }
}

Matrix DecoderModel::feed_forward(int l, const Matrix& h) const {
  const DecoderConfig& c = config_;
  const BlockTraits& b = c.block;
  const auto bias = [&](const char* name, long n) { return b.ffn_bias ? weights_->vector(block_name(l, name), n) : Vector(); };
  // Each product through linear(): Q8_0 weights by q8_matmul, others decoded (block_pieces'
  // affine needs the float32 matrix, which the quantised path never makes).
  const auto dense = [&](const char* name, long rows, long cols, const Matrix& x, const char* bias_name) {
    Matrix y = linear(l, name, rows, cols, x);
    if (b.ffn_bias) y.rowwise() += bias(bias_name, rows).transpose();
    return y;
  };
  Matrix hidden;  // [m, d_ff]
  if (b.ffn == FeedForwardKind::Gelu) {  // GPT-2's MLP
    hidden = gelu(dense("ffn_up.weight", c.d_ff, c.d_model, h, "ffn_up.bias"), c.gelu);
  } else {
    Matrix gate, up;
    if (b.fused_gate_up) {  // [gate | up], as ggml_swiglu and Phi3MLP's chunk(2) split it
      const Matrix both = linear(l, "ffn_up.weight", 2 * c.d_ff, c.d_model, h);
      gate = both.leftCols(c.d_ff);
      up = both.rightCols(c.d_ff);
    } else {
      gate = linear(l, "ffn_gate.weight", c.d_ff, c.d_model, h);
      up = linear(l, "ffn_up.weight", c.d_ff, c.d_model, h);
    }
    hidden = b.ffn == FeedForwardKind::GeGlu ? geglu(gate, up, c.gelu) : swiglu(gate, up);
  }
  return dense("ffn_down.weight", c.d_model, c.d_ff, hidden, "ffn_down.bias");
}

long DecoderModel::window_of(int l) const {
  return config_.sliding_window.empty() ? 0 : config_.sliding_window[static_cast<std::size_t>(l)];
}

MaskMatrix DecoderModel::layer_mask(int l, long n_past, long m) const {
  MaskMatrix allowed = causal_after(n_past, m);
  const long window = window_of(l);
  if (window > 0)
    for (long i = 0; i < m; ++i)
      for (long j = 0; j < n_past + m; ++j)
        if (n_past + i - j >= window) allowed(i, j) = 0;
  return allowed;
}

std::optional<RopeRequest> DecoderModel::layer_rope(int l, long first, long m) const {
  const DecoderConfig& c = config_;
  if (c.block.positions != PositionKind::Rope) return std::nullopt;
  if (std::binary_search(c.no_rope_layers.begin(), c.no_rope_layers.end(), l)) return std::nullopt;  // a NoPE layer
  RopeRequest rope{c.rope, std::vector<long long>(static_cast<std::size_t>(m)), {}};
  std::iota(rope.query_positions.begin(), rope.query_positions.end(), static_cast<long long>(first));
  rope.key_positions = rope.query_positions;
  if (window_of(l) > 0 && c.local_rope) rope.settings = *c.local_rope;
  return rope;
}

AttentionResult DecoderModel::run_layer(int l, const AttentionLayer& layer, Matrix& x, KeyValueCache& cache,
                                        const MaskMatrix& allowed, const AttentionWants& wants, const BlockProbe* probe,
                                        const HeadWeightsSink* per_head, bool attention_only, BlockActivations* taps,
                                        const ActivationWants& tap_wants) const {
  const DecoderConfig& c = config_;
  const long first = cache.size(), m = x.rows();
  const std::optional<RopeRequest> rope = layer_rope(l, first, m);
  const Matrix attention_input = sublayer_input(l, x, "attn_norm");
  if (probe != nullptr) {
    // explain's circuits fold the norm's gain (as stored: Gemma's 1 + w) into W_Q, W_K, W_V.
    std::optional<Scalar> cap;
    if (layer.logit_softcap > 0) cap = layer.logit_softcap;
    // OLMo 2's sublayers read the residual stream unnormalised: a gain of ones.
    const Vector gain = c.block.pre_norm ? weights_->vector(block_name(l, "attn_norm.weight"), c.d_model) : Vector(Vector::Ones(c.d_model));
    (*probe)(BlockInputs{l, "decoder", "self", LayerInputs{&layer, &attention_input, &attention_input, &allowed, &rope, cap}, gain, {}});
  }
  // The pass's last layer on its own rows: the same projections and scores as through an
  // empty cache, without what only the next layer would read.
  AttentionResult result = attention_only && cache.size() == 0
                               ? multi_head_attention(layer, attention_input, attention_input, allowed, wants, rope, per_head)
                               : cached_self_attention(layer, attention_input, cache, allowed,
                                                       AttentionWants{wants.scores, true, wants.value_vectors}, rope, per_head);
  if (!result.overflow.empty())
    throw InputError(c.file + ": layer " + std::to_string(l) + ": " + result.overflow +
                     " float32 (|x| > 3.4e38, or NaN): " + block_name(l, "attn_*") +
                     " or the layer's input holds NaN or too large values");
  if (!attention_only) finish_layer(l, x, result.output, taps, tap_wants);
  return result;
}

void DecoderModel::finish_layer(int l, Matrix& x, const Matrix& attention_output, BlockActivations* taps,
                                const ActivationWants& wants) const {
  const DecoderConfig& c = config_;
  // A pre-norm block's sublayer reads N(x); Gemma's post-norms apply to each sublayer's output
  // before it joins the residual stream, so they are part of the sublayer here. The attention
  // sublayer's output is given (run_layer computed it, an ablation may have changed it).
  // Granite's residual multiplier scales the sublayer's output as it joins (ggml_scale, float32).
  const auto post_norm = [&](bool has, const char* name, Matrix out) {
    if (has) out = layer_norm_input(l, out, name);
    if (c.residual_multiplier != 1.0) out *= static_cast<Scalar>(c.residual_multiplier);
    return out;
  };
  if (taps && wants.attn_out) {
    taps->attn_out = post_norm(c.block.post_attention_norm, "post_attention_norm", attention_output);
    x += taps->attn_out;
  } else {
    x += post_norm(c.block.post_attention_norm, "post_attention_norm", attention_output);
  }
  if (taps && wants.resid_mid) taps->resid_mid = x;
  const ProductThreads threads(2.0 * 3.0 * static_cast<double>(x.rows()) * static_cast<double>(c.d_model) * static_cast<double>(c.d_ff));
  residual_sublayer(x, NormPlacement::Pre, [this, l](const Matrix& v) { return sublayer_input(l, v, "ffn_norm"); },
                    [&](const Matrix& h) {
                      Matrix out = post_norm(c.block.post_ffn_norm, "post_ffw_norm", feed_forward(l, h));
                      if (taps && wants.mlp_out) taps->mlp_out = out;
                      return out;
                    });
  if (taps && wants.resid_post) taps->resid_post = x;
  // Checked here, not only at the logits, so that the message names the layer where the
  // residual stream stopped being finite.
  if (!x.allFinite())
    throw InputError(c.file + ": layer " + std::to_string(l) + ": the residual stream after the feed-forward is not finite "
                     "(|x| > 3.4e38, or NaN): " + block_name(l, "ffn_*") + " holds NaN or too large values");
}

void DecoderModel::run_last_row(int l, const AttentionLayer& layer, Matrix& x) const {
  const long n = x.rows();
  const Matrix attention_input = sublayer_input(l, x, "attn_norm");
  std::optional<RopeRequest> rope = layer_rope(l, 0, n);
  if (rope) rope->query_positions = {n - 1};
  const MaskMatrix allowed = window_of(l) > 0 ? MaskMatrix(layer_mask(l, 0, n).bottomRows(1)) : MaskMatrix();
  const AttentionResult result =
      multi_head_attention(layer, attention_input.bottomRows(1), attention_input, allowed, AttentionWants{false, true, false}, rope);
  if (!result.overflow.empty())
    throw InputError(config_.file + ": layer " + std::to_string(l) + ": " + result.overflow +
                     " float32 (|x| > 3.4e38, or NaN): " + block_name(l, "attn_*") +
                     " or the layer's input holds NaN or too large values");
  x = Matrix(x.bottomRows(1));
  finish_layer(l, x, result.output);
}

Matrix DecoderModel::output_matrix() const {
  const DecoderConfig& c = config_;
  return weights_->matrix(c.tied_output ? "token_embd.weight" : "output.weight", c.n_vocab, c.d_model);
}

std::vector<float> DecoderModel::last_logits(const Matrix& x, const Matrix& output) const {
  const DecoderConfig& c = config_;
  const Matrix last = norm(x.bottomRows(1), "output_norm");
  Matrix logits = output.size() != 0 ? Matrix(last * output.transpose()) : output_projection()(last, Eigen::nbThreads());
  if (c.logit_divisor != 1.0) logits /= static_cast<Scalar>(c.logit_divisor);  // Granite's logits_scaling
  if (c.final_softcap > 0) logits = soft_cap(logits, c.final_softcap);
  if (!logits.allFinite())
    throw InputError(c.file + ": the last position's logits are not finite (|x| > 3.4e38, or NaN): output_norm.weight or " +
                     (c.tied_output ? "token_embd.weight (the tied output)" : "output.weight") + " holds NaN or too large values");
  return std::vector<float>(logits.data(), logits.data() + logits.size());
}

AttentionBlock DecoderModel::block_of(int l, Scalar scale, const Tokens& tokens, AttentionResult&& result) const {
  const DecoderConfig& c = config_;
  AttentionBlock block;
  block.layer = l;
  AttentionRecord& r = block.record;
  r.mode = "self";
  r.model = c.name;
  r.layer = l;
  r.query_tokens = tokens;
  r.key_tokens = tokens;
  r.num_heads = c.num_heads;
  r.num_kv_heads = c.num_kv_heads;
  r.d_model = c.d_model;
  r.d_k = c.d_k;
  r.d_v = c.d_k;
  r.scale = scale;
  r.causal = true;
  r.sliding_window = window_of(l);
  r.logit_softcap = c.attention_softcap;
  if (c.block.positions == PositionKind::Rope) {
    const std::optional<RopeRequest> rope = layer_rope(l, 0, 0);
    if (rope) r.rope = rope->settings;
    r.no_rope = !rope;  // a NoPE layer
  }
  r.weights = std::move(result.weights);
  return block;
}

AttentionBlock DecoderModel::block_of(int l, Scalar scale, const Tokens& tokens, AttentionResult&& result,
                                      const AttentionWants& wants, const Matrix& x, const Vector& b_o) const {
  AttentionBlock block = block_of(l, scale, tokens, std::move(result));
  if (wants.scores) block.record.scores = std::move(result.scores);
  if (wants.outputs) {
    block.record.head_outputs = std::move(result.head_outputs);
    block.record.output = std::move(result.output);
  }
  if (wants.value_vectors) {
    block.value_vectors = std::move(result.value_vectors);
    block.residual = x;
    block.b_o = b_o;  // GPT-2's attn_output.bias; empty where the family has none
  }
  return block;
}

std::vector<float> DecoderModel::forward(const ForwardRequest& request) const {
  Matrix x = request.start_residual ? *request.start_residual : embed(request.token_ids, 0);
  const long n = x.rows();
  const MaskMatrix causal = causal_after(0, n);
  const bool residual = request.wants.value_vectors;
  if (request.trace) trace_embedding(x, *request.trace);
  // What reads the layer's float32 W (the trace's W_O, the value vectors, explain's circuits).
  const bool keep_float = request.trace || request.probe || request.wants.value_vectors;
  // Without logits or a trace nothing reads the residual stream after the last selected layer's
  // attention: the layers after it, and its own feed-forward, are not run (a census over a
  // corpus of short texts spent a fifth of its products there).
  const int last = request.logits || request.trace || !request.sink ? config_.num_layers - 1 : (request.layers.all() ? config_.num_layers - 1 : std::min(config_.num_layers - 1, request.layers.last()));
  for (int l = request.start_residual ? request.start_layer : 0; l <= last; ++l) {
    AttentionLayer layer = attention_layer(l, keep_float);
    if (request.ablation && request.ablation->layer == l) zero_head_outputs(layer, request.ablation->heads);
    if (request.trace) request.trace->enter_layer(x);
    if (request.last_row_only && l == config_.num_layers - 1) {
      assert(!request.trace && !request.sink);
      run_last_row(l, layer, x);
      break;
    }
    KeyValueCache cache;  // this pass only: dropped with the layer, so one layer's K, V are held at a time
    const Matrix entering = residual && request.layers.contains(l) ? x : Matrix();  // r: before the layer adds to x
    const bool selected = request.layers.contains(l);
    // Head by head: the block without weights is what each head is handed with.
    const bool by_head = selected && request.sink && request.head_sink && !request.trace;
    const AttentionBlock shell = by_head ? block_of(l, layer.logit_scale(), request.tokens, AttentionResult()) : AttentionBlock();
    const HeadWeightsSink per_head = [&](int h, Matrix& weights) { (*request.head_sink)(shell, h, weights); };
    // --activations: the residual entering the layer, and what finish_layer taps.
    const bool tapped = selected && request.sink && request.activations.any();
    BlockActivations taps;
    if (tapped && request.activations.resid_pre) taps.resid_pre = x;
    AttentionResult result = run_layer(l, layer, x, cache, window_of(l) > 0 ? layer_mask(l, 0, n) : causal,
                                       request.wants, selected ? request.probe : nullptr, by_head ? &per_head : nullptr,
                                       l == last && !request.logits && !request.trace && !tapped, tapped ? &taps : nullptr,
                                       request.activations);
    if (request.trace) trace_layer(l, layer, result, x, *request.trace);
    if (request.sink && request.layers.contains(l)) {
      AttentionBlock block = block_of(l, layer.logit_scale(), request.tokens, std::move(result), request.wants, entering, layer.b_o);
      block.activations = std::move(taps);
      (*request.sink)(std::move(block));
    }
  }
  if (request.trace) trace_final_norm(x, *request.trace);
  if (!request.logits) return {};
  // The trace's logit attribution reads the float32 output rows: its logits are those rows'.
  return last_logits(x, output_projection() && !request.trace ? Matrix() : output_matrix());
}

void DecoderModel::trace_embedding(const Matrix& x, ResidualTrace& trace) const {
  const DecoderConfig& c = config_;
  if (c.block.positions != PositionKind::Learned) return trace.begin(x);
  std::vector<std::int32_t> positions(static_cast<std::size_t>(x.rows()));
  std::iota(positions.begin(), positions.end(), 0);
  const Matrix rows = weights_->gather_rows("position_embd.weight", c.context_length, c.d_model, positions);
  trace.begin(x, &rows);
}

Vector DecoderModel::joining_gain(int l, const Matrix& output) const {
  const DecoderConfig& c = config_;
  const double multiplier = c.residual_multiplier;  // Granite's, 1 elsewhere
  if (!c.block.post_attention_norm) return multiplier == 1.0 ? Vector() : Vector(Vector::Constant(c.d_model, static_cast<Scalar>(multiplier)));
  // Gemma's and OLMo 2's post-attention RMSNorm, linear once its statistic at the row is fixed:
  // what multiplies each head's write as it joins the residual stream.
  if (c.block.norm != NormKind::Rms) throw std::logic_error("residual trace: a post-attention LayerNorm is not traced");
  const double mean_square = output.bottomRows(1).cast<double>().squaredNorm() / static_cast<double>(c.d_model);
  const Vector gain = weights_->vector(block_name(l, "post_attention_norm.weight"), c.d_model);
  return (gain.cast<double>() * multiplier / std::sqrt(mean_square + c.rms_epsilon)).cast<Scalar>();
}

void DecoderModel::trace_layer(int l, const AttentionLayer& layer, const AttentionResult& result, const Matrix& x,
                               ResidualTrace& trace) const {
  const DecoderConfig& c = config_;
  // GPT-2's b_down joins the residual as it is; behind Gemma's post-norm no family has one.
  const Vector mlp_bias = c.block.ffn_bias && !c.block.post_ffn_norm ? weights_->vector(block_name(l, "ffn_down.bias"), c.d_model) : Vector();
  trace.leave_layer(layer, result, x, joining_gain(l, result.output), mlp_bias);
}

void DecoderModel::trace_final_norm(const Matrix& x, ResidualTrace& trace) const {
  const DecoderConfig& c = config_;
  // The statistic of last_logits' norm, from the real residual (in double: the DLA terms are
  // summed in double and must add up to the logit).
  const Eigen::RowVectorXd last = x.bottomRows(1).cast<double>();
  const double d = static_cast<double>(c.d_model);
  const bool layer_norm = c.block.norm == NormKind::Layer;
  const double mean = layer_norm ? last.sum() / d : 0.0;
  const double second_moment = (last.array() - mean).square().sum() / d;
  trace.final_norm.centre = layer_norm;
  trace.final_norm.scale = 1.0 / std::sqrt(second_moment + c.rms_epsilon);
  // Granite's logit divisor folded into the gain: the logits are linear in it.
  trace.final_norm.gain = weights_->vector("output_norm.weight", c.d_model) / static_cast<Scalar>(c.logit_divisor);
  trace.final_norm.bias = layer_norm && c.block.norm_bias ? weights_->vector("output_norm.bias", c.d_model) : Vector();
  trace.final_softcap = c.final_softcap;
}

Vector DecoderModel::output_row(std::int32_t id) const {
  const DecoderConfig& c = config_;
  return weights_->gather_rows(c.tied_output ? "token_embd.weight" : "output.weight", c.n_vocab, c.d_model, {id}).row(0).transpose();
}

std::vector<float> DecoderModel::extend(std::vector<KeyValueCache>& caches, const std::vector<std::int32_t>& ids) const {
  return extend(caches, ids, output_projection() ? Matrix() : output_matrix());
}

std::vector<float> DecoderModel::extend(std::vector<KeyValueCache>& caches, const std::vector<std::int32_t>& ids,
                                        const Matrix& output) const {
  if (caches.empty()) caches.resize(static_cast<std::size_t>(config_.num_layers));
  const long first = caches.front().size();
  Matrix x = embed(ids, first);
  const long m = static_cast<long>(ids.size());
  const MaskMatrix causal = causal_after(first, m);
  for (int l = 0; l < config_.num_layers; ++l)
    run_layer(l, attention_layer(l), x, caches[static_cast<std::size_t>(l)], window_of(l) > 0 ? layer_mask(l, first, m) : causal);
  return last_logits(x, output);
}

int DecoderModel::generate(std::vector<std::int32_t>& ids, int count, std::int32_t eos) const {
  return generate(ids, count, eos >= 0 ? std::vector<std::int32_t>{eos} : std::vector<std::int32_t>{});
}

int DecoderModel::generate(std::vector<std::int32_t>& ids, int count, const std::vector<std::int32_t>& end_tokens) const {
  const DecoderConfig& c = config_;
  if (count <= 0) return 0;
  long final_size = static_cast<long>(ids.size()) + count;
  if (c.context_length > 0) final_size = std::min(final_size, c.context_length);
  // Room for every position from the start (cache_bytes), so no step copies the cache.
  std::vector<KeyValueCache> caches;
  for (int l = 0; l < c.num_layers; ++l) caches.emplace_back(final_size, c.num_kv_heads * c.d_k, c.num_kv_heads * c.d_k);
  // Decoded once, not at every step: n_vocab × d_model floats (98 MB for a 32 000-token
  // vocabulary at d_model 768) freshly allocated and faulted in per token cost more than the
  // step itself (issue 11; counted in the memory estimate, layer_float_bytes).
  const Matrix output = output_projection() ? Matrix() : output_matrix();
  std::vector<std::int32_t> pending = ids;  // the prompt once, then each new token alone
  int added = 0;
  while (added < count) {
    if (c.context_length > 0 && static_cast<long>(ids.size()) >= c.context_length) break;
    const std::vector<float> logits = extend(caches, pending, output);
    const auto next = static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    ids.push_back(next);
    ++added;
    if (std::find(end_tokens.begin(), end_tokens.end(), next) != end_tokens.end()) break;
    pending = {next};
  }
  return added;
}

OutputWeights DecoderModel::output_weights() const {
  const DecoderConfig& c = config_;
  OutputWeights w;
  w.embedding = weights_->matrix("token_embd.weight", c.n_vocab, c.d_model);
  w.output = output_matrix();
  w.final_gain = weights_->vector("output_norm.weight", c.d_model);
  return w;
}

double DecoderModel::cache_bytes(double n) const {
  const DecoderConfig& c = config_;
  return 4.0 * 2.0 * c.num_layers * static_cast<double>(c.num_kv_heads * c.d_k) * n;
}

double DecoderModel::layer_float_bytes() const {
  const DecoderConfig& c = config_;
  const double q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
  const double per_layer = 2.0 * q_width * c.d_model + 2.0 * kv_width * c.d_model + 3.0 * c.d_ff * c.d_model;
  return 4.0 * (per_layer + 2.0 * c.n_vocab * c.d_model);
}

}  // namespace attnviz
