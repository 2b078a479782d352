#include "model/decoder_model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "attention/mask.hpp"
#include "core/error.hpp"

namespace attnviz {

namespace {

std::string block_name(int layer, const char* tensor) { return "blk." + std::to_string(layer) + "." + tensor; }

// SiLU(x) = x·σ(x) (Elfwing et al. 2018), the gate of SwiGLU (Shazeer 2020).
Matrix swiglu(const Matrix& gate, const Matrix& up) {
  Matrix out(gate.rows(), gate.cols());
  for (Eigen::Index i = 0; i < gate.size(); ++i) {
    const Scalar g = gate.data()[i];
    out.data()[i] = g / (1.0f + std::exp(-g)) * up.data()[i];
  }
  return out;
}

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
    // The mean square summed in double (as ggml does), then x / rms · gain in float32.
    const double mean_square = x.row(r).cast<double>().squaredNorm() / static_cast<double>(x.cols());
    // ggml turns this mean into a float32 too, and beyond 3.4e38 divides every x by infinity:
    // a row of zeros that looks like a result. Refused instead.
    if (!std::isfinite(static_cast<Scalar>(mean_square))) {
      char value[32];
      std::snprintf(value, sizeof value, "%.3g", mean_square);
      throw InputError("RMSNorm: the mean square of row " + std::to_string(r) + " (" + value + ") overflows float32");
    }
    const Scalar rms = std::sqrt(static_cast<Scalar>(mean_square) + static_cast<Scalar>(epsilon));
    out.row(r) = (x.row(r) / rms).cwiseProduct(gain.transpose());
  }
  return out;
}

DecoderModel::DecoderModel(DecoderConfig config, std::unique_ptr<WeightSource> weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  const DecoderConfig& c = config_;
  const long q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
  auto check = [&](const std::string& name, long rows, long cols) {
    const std::vector<std::int64_t> expected = cols == 0 ? std::vector<std::int64_t>{rows} : std::vector<std::int64_t>{rows, cols};
    const std::vector<std::int64_t> found = weights_->shape(name);
    auto text = [](const std::vector<std::int64_t>& shape) {
      std::string t = "[";
      for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
      return t + "]";
    };
    if (found.empty()) throw InputError(weights_->describe(name) + " is missing");
    if (found != expected)
      throw InputError(weights_->describe(name) + ": expected shape " + text(expected) + " (from the model's settings), got " + text(found));
  };
  check("token_embd.weight", c.n_vocab, c.d_model);
  check("output_norm.weight", c.d_model, 0);
  if (!c.tied_output) check("output.weight", c.n_vocab, c.d_model);
  for (int l = 0; l < c.num_layers; ++l) {
    check(block_name(l, "attn_norm.weight"), c.d_model, 0);
    check(block_name(l, "attn_q.weight"), q_width, c.d_model);
    check(block_name(l, "attn_k.weight"), kv_width, c.d_model);
    check(block_name(l, "attn_v.weight"), kv_width, c.d_model);
    check(block_name(l, "attn_output.weight"), c.d_model, q_width);
    check(block_name(l, "ffn_norm.weight"), c.d_model, 0);
    check(block_name(l, "ffn_gate.weight"), c.d_ff, c.d_model);
    check(block_name(l, "ffn_up.weight"), c.d_ff, c.d_model);
    check(block_name(l, "ffn_down.weight"), c.d_model, c.d_ff);
  }
}

AttentionLayer DecoderModel::attention_layer(int layer) const {
  const DecoderConfig& c = config_;
  const long q_width = c.num_heads * c.d_k, kv_width = c.num_kv_heads * c.d_k;
  AttentionLayer a;
  a.num_heads = c.num_heads;
  a.num_kv_heads = c.num_kv_heads;
  // Stored as nn.Linear's [out, in]; the engine's convention is Q = X·W_Q, so W is [in, out].
  a.w_q = weights_->matrix(block_name(layer, "attn_q.weight"), q_width, c.d_model).transpose();
  a.w_k = weights_->matrix(block_name(layer, "attn_k.weight"), kv_width, c.d_model).transpose();
  a.w_v = weights_->matrix(block_name(layer, "attn_v.weight"), kv_width, c.d_model).transpose();
  a.w_o = weights_->matrix(block_name(layer, "attn_output.weight"), c.d_model, q_width).transpose();
  if (c.qkv_bias) {
    a.b_q = weights_->vector(block_name(layer, "attn_q.bias"), q_width);
    a.b_k = weights_->vector(block_name(layer, "attn_k.bias"), kv_width);
    a.b_v = weights_->vector(block_name(layer, "attn_v.bias"), kv_width);
  }
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
  return weights_->gather_rows("token_embd.weight", c.n_vocab, c.d_model, ids);
}

Matrix DecoderModel::layer_norm_input(int l, const Matrix& x, const char* gain) const {
  try {
    return rms_norm(x, weights_->vector(block_name(l, gain), config_.d_model), config_.rms_epsilon);
  } catch (const InputError& e) {
    throw InputError(config_.file + ": layer " + std::to_string(l) + ": " + e.what() +
                     ": the layer's input holds too large values (the embeddings or an earlier layer)");
  }
}

AttentionResult DecoderModel::run_layer(int l, const AttentionLayer& layer, Matrix& x, KeyValueCache& cache,
                                        const MaskMatrix& allowed, const BlockProbe* probe) const {
  const DecoderConfig& c = config_;
  const long first = cache.size(), m = x.rows();
  RopeRequest rope{c.rope, std::vector<long long>(static_cast<std::size_t>(m)), {}};
  std::iota(rope.query_positions.begin(), rope.query_positions.end(), static_cast<long long>(first));
  rope.key_positions = rope.query_positions;
  const Matrix attention_input = layer_norm_input(l, x, "attn_norm.weight");
  if (probe != nullptr) {
    const std::optional<RopeRequest> rotation = rope;
    (*probe)(BlockInputs{l, "decoder", "self", LayerInputs{&layer, &attention_input, &attention_input, &allowed, &rotation, std::nullopt},
                         weights_->vector(block_name(l, "attn_norm.weight"), c.d_model), {}});
  }
  AttentionResult result = cached_self_attention(layer, attention_input, cache, allowed, AttentionWants{false, true}, rope);
  if (!result.overflow.empty())
    throw InputError(c.file + ": layer " + std::to_string(l) + ": " + result.overflow +
                     " float32 (|x| > 3.4e38, or NaN): " + block_name(l, "attn_*") +
                     " or the layer's input holds NaN or too large values");
  x += result.output;
  const Matrix ffn_input = layer_norm_input(l, x, "ffn_norm.weight");
  const Matrix gate = ffn_input * weights_->matrix(block_name(l, "ffn_gate.weight"), c.d_ff, c.d_model).transpose();
  const Matrix up = ffn_input * weights_->matrix(block_name(l, "ffn_up.weight"), c.d_ff, c.d_model).transpose();
  x += swiglu(gate, up) * weights_->matrix(block_name(l, "ffn_down.weight"), c.d_model, c.d_ff).transpose();
  // Checked here, not only at the logits, so that the message names the layer where the
  // residual stream stopped being finite.
  if (!x.allFinite())
    throw InputError(c.file + ": layer " + std::to_string(l) + ": the residual stream after the feed-forward is not finite "
                     "(|x| > 3.4e38, or NaN): " + block_name(l, "ffn_*") + " holds NaN or too large values");
  return result;
}

Matrix DecoderModel::output_matrix() const {
  const DecoderConfig& c = config_;
  return weights_->matrix(c.tied_output ? "token_embd.weight" : "output.weight", c.n_vocab, c.d_model);
}

std::vector<float> DecoderModel::last_logits(const Matrix& x, const Matrix& output) const {
  const DecoderConfig& c = config_;
  const Matrix last = rms_norm(x.bottomRows(1), weights_->vector("output_norm.weight", c.d_model), c.rms_epsilon);
  const Matrix logits = last * output.transpose();
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
  r.rope = c.rope;
  r.weights = std::move(result.weights);
  return block;
}

std::vector<float> DecoderModel::forward(const ForwardRequest& request) const {
  const long n = static_cast<long>(request.token_ids.size());
  Matrix x = embed(request.token_ids, 0);
  const MaskMatrix causal = causal_after(0, n);
  for (int l = 0; l < config_.num_layers; ++l) {
    const AttentionLayer layer = attention_layer(l);
    KeyValueCache cache;  // this pass only: dropped with the layer, so one layer's K, V are held at a time
    const bool selected = request.layers.contains(l);
    AttentionResult result = run_layer(l, layer, x, cache, causal, selected ? request.probe : nullptr);
    if (request.sink && selected)
      (*request.sink)(block_of(l, layer.logit_scale(), request.tokens, std::move(result)));
  }
  if (!request.logits) return {};
  return last_logits(x, output_matrix());
}

std::vector<float> DecoderModel::extend(std::vector<KeyValueCache>& caches, const std::vector<std::int32_t>& ids) const {
  return extend(caches, ids, output_matrix());
}

std::vector<float> DecoderModel::extend(std::vector<KeyValueCache>& caches, const std::vector<std::int32_t>& ids,
                                        const Matrix& output) const {
  if (caches.empty()) caches.resize(static_cast<std::size_t>(config_.num_layers));
  const long first = caches.front().size();
  Matrix x = embed(ids, first);
  const MaskMatrix allowed = causal_after(first, static_cast<long>(ids.size()));
  for (int l = 0; l < config_.num_layers; ++l) run_layer(l, attention_layer(l), x, caches[static_cast<std::size_t>(l)], allowed);
  return last_logits(x, output);
}

int DecoderModel::generate(std::vector<std::int32_t>& ids, int count, std::int32_t eos) const {
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
  const Matrix output = output_matrix();
  std::vector<std::int32_t> pending = ids;  // the prompt once, then each new token alone
  int added = 0;
  while (added < count) {
    if (c.context_length > 0 && static_cast<long>(ids.size()) >= c.context_length) break;
    const std::vector<float> logits = extend(caches, pending, output);
    const auto next = static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    ids.push_back(next);
    ++added;
    if (next == eos) break;
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
