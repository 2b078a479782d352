#include "model/encoder_model.hpp"

#include "core/error.hpp"
#include "model/block_pieces.hpp"
#include "model/ggml_products.hpp"

namespace attnviz {

namespace {

std::string layer_tensor(int layer, const char* name) { return "blk." + std::to_string(layer) + "." + name; }

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

EncoderModel::EncoderModel(EncoderConfig config, std::unique_ptr<WeightSource> weights)
    : config_(std::move(config)), weights_(std::move(weights)) {
  const EncoderConfig& c = config_;
  const auto check = [&](const std::string& name, long rows, long cols) {
    const std::vector<std::int64_t> expected = cols == 0 ? std::vector<std::int64_t>{rows} : std::vector<std::int64_t>{rows, cols};
    const std::vector<std::int64_t> found = weights_->shape(name);
    if (found.empty()) throw InputError(weights_->describe(name) + " is missing (needed by a " + c.family + " model)");
    if (found != expected)
      throw InputError(weights_->describe(name) + ": expected shape " + shape_text(expected) + " (from the model's settings), got " +
                       shape_text(found));
    weights_->check_type(name);
  };
  check("token_embd.weight", c.n_vocab, c.d_model);
  check("token_types.weight", c.n_token_types, c.d_model);
  check("position_embd.weight", c.n_positions, c.d_model);
  check("token_embd_norm.weight", c.d_model, 0);
  check("token_embd_norm.bias", c.d_model, 0);
  for (int l = 0; l < c.num_layers; ++l) {
    for (const char* projection : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
      check(layer_tensor(l, (std::string(projection) + ".weight").c_str()), c.d_model, c.d_model);
      check(layer_tensor(l, (std::string(projection) + ".bias").c_str()), c.d_model, 0);
    }
    for (const char* norm : {"attn_output_norm", "layer_output_norm"}) {
      check(layer_tensor(l, (std::string(norm) + ".weight").c_str()), c.d_model, 0);
      check(layer_tensor(l, (std::string(norm) + ".bias").c_str()), c.d_model, 0);
    }
    check(layer_tensor(l, "ffn_up.weight"), c.d_ff, c.d_model);
    check(layer_tensor(l, "ffn_up.bias"), c.d_ff, 0);
    check(layer_tensor(l, "ffn_down.weight"), c.d_model, c.d_ff);
    check(layer_tensor(l, "ffn_down.bias"), c.d_model, 0);
  }
}

WideVector EncoderModel::wide(const std::string& name, long n) const { return weights_->vector(name, n).cast<double>(); }

Projection EncoderModel::quantized_projection(const std::string& name, long rows, long cols) const {
  if (!quantized_matmul_) return {};
  return ggml_projection(*weights_, name, rows, cols);
}

Matrix EncoderModel::linear(int l, const char* name, long rows, long cols, const Matrix& x) const {
  const std::string tensor = layer_tensor(l, name);
  if (const Projection p = quantized_projection(tensor, rows, cols)) return p(x, Eigen::nbThreads());
  return x * weights_->matrix(tensor, rows, cols).transpose();  // W stored [out, in]
}

std::string EncoderModel::matmul() const {
  const EncoderConfig& c = config_;
  std::vector<ProductTensor> tensors;
  for (int l = 0; l < c.num_layers; ++l) {
    for (const char* name : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight"})
      tensors.push_back({layer_tensor(l, name), c.d_model, c.d_model});
    tensors.push_back({layer_tensor(l, "ffn_up.weight"), c.d_ff, c.d_model});
    tensors.push_back({layer_tensor(l, "ffn_down.weight"), c.d_model, c.d_ff});
  }
  return matmul_description(*weights_, tensors, quantized_matmul_);
}

AttentionLayer EncoderModel::attention_layer(int l, bool keep_float) const {
  const long d = config_.d_model;
  AttentionLayer a;
  a.num_heads = a.num_kv_heads = config_.num_heads;
  a.q_width = a.v_width = d;
  // Stored as nn.Linear's [out, in]; the engine's convention is Q = X·W_Q + b_Q, W as [in, out].
  // A Q8_0 weight under quantized matmul is multiplied from its blocks; its float32 copy is
  // made only for what reads W itself (explain's probe).
  const auto weight = [&](const char* name, Projection& projection) -> Matrix {
    projection = quantized_projection(layer_tensor(l, name), d, d);
    if (projection && !keep_float) return Matrix();
    return weights_->matrix(layer_tensor(l, name), d, d).transpose();
  };
  a.w_q = weight("attn_q.weight", a.q_projection);
  a.w_k = weight("attn_k.weight", a.k_projection);
  a.w_v = weight("attn_v.weight", a.v_projection);
  a.w_o = weight("attn_output.weight", a.o_projection);
  a.b_q = weights_->vector(layer_tensor(l, "attn_q.bias"), d);
  a.b_k = weights_->vector(layer_tensor(l, "attn_k.bias"), d);
  a.b_v = weights_->vector(layer_tensor(l, "attn_v.bias"), d);
  a.b_o = weights_->vector(layer_tensor(l, "attn_output.bias"), d);
  return a;
}

WideMatrix EncoderModel::embed(const EncoderRequest& request) const {
  const EncoderConfig& c = config_;
  const std::vector<std::int32_t>& ids = request.token_ids;
  const long n = static_cast<long>(ids.size());
  if (ids.empty()) throw InputError("no token ids to run the model on");
  if (n > c.n_positions)
    throw InputError(c.file + ": " + std::to_string(n) + " tokens exceed the " + std::to_string(c.n_positions) +
                     " learned positions (position_embd.weight); --max-tokens " + std::to_string(c.n_positions) +
                     " keeps the last tokens that fit");
  std::vector<std::int32_t> types = request.token_types;
  if (types.empty()) types.assign(ids.size(), 0);
  if (types.size() != ids.size())
    throw UsageError::bad_option("--token-types", "gives " + std::to_string(types.size()) + " token types for " + std::to_string(n) +
                                                      " tokens (one per token)");
  for (std::size_t t = 0; t < ids.size(); ++t) {
    if (ids[t] < 0 || ids[t] >= c.n_vocab)
      throw InputError("token id " + std::to_string(ids[t]) + " (position " + std::to_string(t) + ") is outside the vocabulary of " +
                       std::to_string(c.n_vocab) + " tokens");
    if (types[t] < 0 || types[t] >= c.n_token_types)
      throw UsageError::bad_option("--token-types", "token type " + std::to_string(types[t]) + " (position " + std::to_string(t) +
                                                        ") is outside the model's " + std::to_string(c.n_token_types) +
                                                        " token types (0-" + std::to_string(c.n_token_types - 1) + ")");
  }
  const WideMatrix words = weights_->gather_rows("token_embd.weight", c.n_vocab, c.d_model, ids).cast<double>();
  const WideMatrix segments = weights_->gather_rows("token_types.weight", c.n_token_types, c.d_model, types).cast<double>();
  const WideMatrix positions = weights_->matrix("position_embd.weight", c.n_positions, c.d_model).topRows(n).cast<double>();
  return layer_norm(words + segments + positions, wide("token_embd_norm.weight", c.d_model), wide("token_embd_norm.bias", c.d_model),
                    c.layer_norm_epsilon);
}

AttentionBlock EncoderModel::block_of(int l, Scalar scale, const Tokens& tokens, AttentionResult&& result) const {
  const EncoderConfig& c = config_;
  AttentionBlock block;
  block.layer = l;
  block.stack = "encoder";
  AttentionRecord& r = block.record;
  r.mode = "self";
  r.model = c.name;
  r.layer = l;
  r.query_tokens = tokens;
  r.key_tokens = tokens;
  r.num_heads = r.num_kv_heads = c.num_heads;
  r.d_model = c.d_model;
  r.d_k = r.d_v = c.d_model / c.num_heads;
  r.scale = scale;
  r.causal = false;
  r.weights = std::move(result.weights);
  return block;
}

void EncoderModel::forward(const EncoderRequest& request) const {
  const EncoderConfig& c = config_;
  WideMatrix x = embed(request);  // [n, d_model]
  for (int l = 0; l < c.num_layers; ++l) {
    const AttentionLayer layer = attention_layer(l, request.probe != nullptr);
    const Matrix input = x.cast<Scalar>();
    // Bidirectional: an empty mask allows every key for every query.
    const MaskMatrix every_key;
    if (request.probe && request.layers.contains(l)) {
      const std::optional<RopeRequest> no_rope;
      const std::string gain = l == 0 ? "token_embd_norm.weight" : layer_tensor(l - 1, "layer_output_norm.weight");
      (*request.probe)(BlockInputs{l, "encoder", "self", LayerInputs{&layer, &input, &input, &every_key, &no_rope, std::nullopt},
                                   weights_->vector(gain, c.d_model), {}});
    }
    AttentionResult result = multi_head_attention(layer, input, input, every_key, AttentionWants{false, true, request.value_vectors});
    if (!result.overflow.empty())
      throw InputError(c.file + ": layer " + std::to_string(l) + ": " + result.overflow + " float32 (|x| > 3.4e38, or NaN): " +
                       layer_tensor(l, "attn_*") + " or the layer's input holds NaN or too large values");
    // Post-norm (Devlin et al. 2019, as Vaswani et al. 2017): x = LN(x + Sublayer(x)).
    x = layer_norm(x + result.output.cast<double>(), wide(layer_tensor(l, "attn_output_norm.weight"), c.d_model),
                   wide(layer_tensor(l, "attn_output_norm.bias"), c.d_model), c.layer_norm_epsilon);
    // The products in float32, as the engines compute them (and at float32 GEMM speed), or from
    // Q8_0 blocks as llama.cpp does; the residual adds and the norms in float64.
    const Matrix ffn_input = x.cast<Scalar>();
    Matrix up = linear(l, "ffn_up.weight", c.d_ff, c.d_model, ffn_input);  // [n, d_ff]
    up.rowwise() += weights_->vector(layer_tensor(l, "ffn_up.bias"), c.d_ff).transpose();
    const Matrix hidden = gelu(up, c.gelu);
    const Matrix down = linear(l, "ffn_down.weight", c.d_model, c.d_ff, hidden);
    WideMatrix ffn = down.cast<double>();  // [n, d_model]
    ffn.rowwise() += wide(layer_tensor(l, "ffn_down.bias"), c.d_model).transpose();
    x = layer_norm(x + ffn, wide(layer_tensor(l, "layer_output_norm.weight"), c.d_model),
                   wide(layer_tensor(l, "layer_output_norm.bias"), c.d_model), c.layer_norm_epsilon);
    if (!x.allFinite())
      throw InputError(c.file + ": layer " + std::to_string(l) + ": the residual stream is not finite: " + layer_tensor(l, "*") +
                       " holds NaN or too large values");
    if (request.sink && request.layers.contains(l)) {
      std::vector<Matrix> value_vectors = std::move(result.value_vectors);
      AttentionBlock block = block_of(l, layer.logit_scale(), request.tokens, std::move(result));
      if (request.value_vectors) {
        // Post-LN: the block writes LN(input + attention output); ALTI reads that LayerNorm.
        block.value_vectors = std::move(value_vectors);
        block.residual = input;
        block.b_o = layer.b_o;
        block.post_norm = PostLayerNorm{weights_->vector(layer_tensor(l, "attn_output_norm.weight"), c.d_model),
                                        weights_->vector(layer_tensor(l, "attn_output_norm.bias"), c.d_model), c.layer_norm_epsilon};
      }
      (*request.sink)(std::move(block));
    }
  }
}

OutputWeights EncoderModel::output_weights() const {
  const EncoderConfig& c = config_;
  OutputWeights w;
  w.embedding = weights_->matrix("token_embd.weight", c.n_vocab, c.d_model);
  return w;  // no output matrix: a BertModel predicts no token, so no copying score
}

double EncoderModel::layer_float_bytes() const {
  const EncoderConfig& c = config_;
  const double d = static_cast<double>(c.d_model);
  const double per_layer = 4.0 * d * d + 2.0 * static_cast<double>(c.d_ff) * d;
  return 8.0 * per_layer + 4.0 * static_cast<double>(c.n_vocab + c.n_positions + c.n_token_types) * d;
}

}  // namespace attnviz
