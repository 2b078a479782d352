#include "model/ct2_transformer.hpp"

#include <cmath>

#include "attention/mask.hpp"
#include "attention/positional.hpp"
#include "core/error.hpp"
#include "model/formats/ct2_file.hpp"

namespace attnviz {

namespace {

// Parts of CTranslate2 specs that change the computation of ct2_transformer.hpp
// (transformer_spec.py, attention_spec.py); a file that has any of them is refused rather than
// run wrongly.
constexpr const char* kUnsupportedParts[] = {
    "relative_position_keys", "relative_attention_bias", "layernorm_embedding", "project_in",
    "embeddings_1/", "linear_0_noact", "input_layer_norm", "post_attention_layer_norm",
    "pre_feedforward_layer_norm", "shared_layer_norm", "q_norm", "k_norm", "rotary_",
};
// Boolean settings that must be off (model.bin scalars of TransformerDecoderSpec).
constexpr const char* kUnsupportedFlags[] = {"alibi", "start_from_zero_embedding"};
// Heads implied by the spec name before revision 3 stored them (transformer.cc RegisterModel).
constexpr int kBaseHeads = 8;
constexpr int kBigHeads = 16;
// The last common_spec.Activation id implemented (Tanh; 6, Sigmoid, is newer and unused here).
constexpr std::int64_t kLastActivation = static_cast<std::int64_t>(Ct2Activation::Tanh);

std::string shape_text(const std::vector<std::int64_t>& shape) {
  Ct2Variable v;
  v.shape = shape;
  return v.shape_text();
}

// Reads the variables of one model, checking every shape against d_model.
class Loader {
 public:
  explicit Loader(const Ct2File& file) : file_(file) {}

  const std::string& path() const { return file_.path(); }

  Matrix matrix(const std::string& name, std::int64_t rows, std::int64_t cols, const std::string& role) const {
    require_shape(name, {rows, cols}, role);
    return file_.matrix(name, role);
  }
  Vector vector(const std::string& name, std::int64_t size, const std::string& role) const {
    require_shape(name, {size}, role);
    return file_.vector(name, role);
  }
  // A Dense layer's [out, in] weight, rows [first, first + count), transposed to [in, count]:
  // the row-vector convention's W in x·W + b.
  Matrix dense(const Matrix& weight, long first, long count) const {
    return weight.middleRows(first, count).transpose();
  }

  Ct2LayerNorm norm(const std::string& scope) const {
    return {vector(scope + "/gamma", d_model, "layer norm scale").cast<double>(),
            vector(scope + "/beta", d_model, "layer norm shift").cast<double>()};
  }

  Ct2FeedForward ffn(const std::string& scope) const {
    const Ct2Variable& inner = file_.variable(scope + "/linear_0/weight", "feed-forward inner weight");
    const std::int64_t d_ff = inner.shape.empty() ? 0 : inner.shape[0];
    Ct2FeedForward f;
    f.norm = norm(scope + "/layer_norm");
    f.w1 = matrix(scope + "/linear_0/weight", d_ff, d_model, "feed-forward inner weight").transpose().cast<double>();
    f.b1 = vector(scope + "/linear_0/bias", d_ff, "feed-forward inner bias").cast<double>();
    f.w2 = matrix(scope + "/linear_1/weight", d_model, d_ff, "feed-forward outer weight").transpose().cast<double>();
    f.b2 = vector(scope + "/linear_1/bias", d_model, "feed-forward outer bias").cast<double>();
    return f;
  }

  // self_attention/linear_0 is the fused [3·d, d] Q,K,V projection (rows Q, then K, then V),
  // linear_1 the output projection (CTranslate2 layers/attention.cc, MultiHeadAttention).
  AttentionLayer self_attention(const std::string& scope, int heads) const {
    const Matrix qkv = matrix(scope + "/linear_0/weight", 3 * d_model, d_model, "fused Q,K,V weight");
    const Vector qkv_bias = vector(scope + "/linear_0/bias", 3 * d_model, "fused Q,K,V bias");
    AttentionLayer layer = heads_layer(heads);
    layer.w_q = dense(qkv, 0, d_model);
    layer.w_k = dense(qkv, d_model, d_model);
    layer.w_v = dense(qkv, 2 * d_model, d_model);
    layer.b_q = qkv_bias.segment(0, d_model);
    layer.b_k = qkv_bias.segment(d_model, d_model);
    layer.b_v = qkv_bias.segment(2 * d_model, d_model);
    output(scope + "/linear_1", layer);
    return layer;
  }

  // Cross-attention: linear_0 Q [d, d] (decoder side), linear_1 fused K,V [2·d, d] (encoder
  // side), linear_2 the output projection.
  AttentionLayer cross_attention(const std::string& scope, int heads) const {
    const Matrix kv = matrix(scope + "/linear_1/weight", 2 * d_model, d_model, "fused K,V weight");
    const Vector kv_bias = vector(scope + "/linear_1/bias", 2 * d_model, "fused K,V bias");
    AttentionLayer layer = heads_layer(heads);
    layer.w_q = matrix(scope + "/linear_0/weight", d_model, d_model, "query weight").transpose();
    layer.b_q = vector(scope + "/linear_0/bias", d_model, "query bias");
    layer.w_k = dense(kv, 0, d_model);
    layer.w_v = dense(kv, d_model, d_model);
    layer.b_k = kv_bias.segment(0, d_model);
    layer.b_v = kv_bias.segment(d_model, d_model);
    output(scope + "/linear_2", layer);
    return layer;
  }

  // The learned position table when the file has one (PositionEncoderSpec.encodings), else empty.
  Matrix positions(const std::string& scope) const {
    const std::string name = scope + "/position_encodings/encodings";
    const Ct2Variable* v = file_.find(name);
    if (v == nullptr) return Matrix();
    const std::int64_t rows = v->shape.empty() ? 0 : v->shape[0];
    return matrix(name, rows, d_model, "learned position encodings");
  }

  long d_model = 0;

 private:
  static AttentionLayer heads_layer(int heads) {
    AttentionLayer layer;
    layer.num_heads = heads;
    layer.num_kv_heads = heads;
    return layer;
  }

  void output(const std::string& scope, AttentionLayer& layer) const {
    layer.w_o = matrix(scope + "/weight", d_model, d_model, "output projection weight").transpose();
    layer.b_o = vector(scope + "/bias", d_model, "output projection bias");
  }

  void require_shape(const std::string& name, const std::vector<std::int64_t>& expected, const std::string& role) const {
    const Ct2Variable& v = file_.variable(name, role);
    if (v.shape != expected) {
      throw InputError::inconsistent(path(), "variable " + name + ": expected shape " + shape_text(expected) + " (" +
                                                 role + ", d_model " + std::to_string(d_model) + "), got " +
                                                 v.shape_text());
    }
  }

  const Ct2File& file_;
};

// A spec setting as CTranslate2 finds it: STACK/KEY from revision 5, the root KEY before
// (transformer.cc aliases encoder/num_heads to num_heads for revisions < 5).
std::optional<std::int64_t> setting(const Ct2File& file, const std::string& stack, const std::string& key) {
  if (auto scoped = file.integer(stack + "/" + key)) return scoped;
  return file.integer(key);
}

int heads_of(const Ct2File& file, const std::string& stack) {
  if (auto heads = setting(file, stack, "num_heads")) {
    if (*heads < 1) {
      throw InputError::inconsistent(file.path(), "variable " + stack + "/num_heads: expected at least 1, got " +
                                                      std::to_string(*heads));
    }
    return static_cast<int>(*heads);
  }
  if (file.spec_name() == "TransformerBig") return kBigHeads;
  if (file.spec_name() == "TransformerBase") return kBaseHeads;
  file.variable(stack + "/num_heads", "number of attention heads");  // throws: missing
  return 0;
}

void refuse_unsupported(const Ct2File& file) {
  const std::string& spec = file.spec_name();
  if (spec != "TransformerBase" && spec != "TransformerBig" && spec != "TransformerSpec") {
    throw InputError::inconsistent(file.path(), "spec '" + spec +
                                                    "' is not an encoder-decoder Transformer this reader implements "
                                                    "(TransformerBase, TransformerBig, TransformerSpec)");
  }
  if (file.spec_revision() < 2) {
    throw InputError::inconsistent(file.path(), "spec revision " + std::to_string(file.spec_revision()) +
                                                    " (OpenNMT-tf v1 variable names) is not supported");
  }
  for (const Ct2Variable& v : file.variables()) {
    for (const char* part : kUnsupportedParts) {
      if (v.name.find(part) != std::string::npos) {
        throw InputError::inconsistent(file.path(), "variable " + v.name + ": '" + part +
                                                        "' is not part of the base Transformer this reader implements");
      }
    }
  }
  for (const std::string stack : {"encoder", "decoder"}) {
    const auto activation = setting(file, stack, "activation").value_or(0);
    if (activation < 0 || activation > kLastActivation) {
      throw InputError::inconsistent(file.path(), stack + "/activation is " + std::to_string(activation) +
                                                      ": expected 0 (ReLU) to 5 (tanh)");
    }
    for (const char* flag : kUnsupportedFlags) {
      if (setting(file, stack, flag).value_or(0) != 0) {
        throw InputError::inconsistent(file.path(), stack + "/" + flag + " is set: not supported");
      }
    }
  }
}

// The embedding matrix of a stack: STACK/embeddings/weight, or STACK/embeddings_0/weight as
// TransformerEncoderSpec's list of source embeddings names it.
std::string embeddings_name(const Ct2File& file, const std::string& stack) {
  const std::string listed = stack + "/embeddings_0/weight";
  return file.find(listed) != nullptr ? listed : stack + "/embeddings/weight";
}

bool scales_embeddings(const Ct2File& file, const std::string& stack) {
  if (auto scale = file.integer(stack + "/scale_embeddings")) return *scale != 0;
  if (auto scale = file.integer(stack + "/embeddings/multiply_by_sqrt_depth")) return *scale != 0;
  return true;
}

// Layers STACK/layer_0, layer_1, … present in the file (at least layer_0, else it is missing).
int count_layers(const Ct2File& file, const std::string& stack) {
  int n = 0;
  while (file.find(stack + "/layer_" + std::to_string(n) + "/ffn/linear_0/weight") != nullptr) ++n;
  if (n == 0) file.variable(stack + "/layer_0/ffn/linear_0/weight", "first layer");  // throws: missing
  return n;
}

// ---- forward pass ----

// LN(x) per row, biased variance (CTranslate2 LayerNorm).
WideMatrix layer_norm(const WideMatrix& x, const Ct2LayerNorm& norm, double epsilon) {
  return attnviz::layer_norm(x, norm.gamma, norm.beta, epsilon);
}

// The float32 input of an attention block.
Matrix narrow(const WideMatrix& x) { return x.cast<Scalar>(); }

// act(h) element-wise (CTranslate2 ops/activation.cc).
void activate(WideMatrix& h, Ct2Activation activation) {
  constexpr double kGeluSigmoidScale = 1.702;          // x·sigmoid(1.702x) ≈ GELU
  const auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  switch (activation) {
    case Ct2Activation::Relu: h = h.cwiseMax(0.0); return;
    case Ct2Activation::GeluTanh: h = h.unaryExpr([](double v) { return gelu_tanh(v); }); return;
    case Ct2Activation::Swish: h = h.unaryExpr([&](double v) { return v * sigmoid(v); }); return;
    case Ct2Activation::Gelu: h = h.unaryExpr([](double v) { return gelu_erf(v); }); return;
    case Ct2Activation::GeluSigmoid: h = h.unaryExpr([&](double v) { return v * sigmoid(kGeluSigmoidScale * v); }); return;
    case Ct2Activation::Tanh: h = h.unaryExpr([](double v) { return std::tanh(v); }); return;
  }
}

// FFN(h) = act(h·W1 + b1)·W2 + b2 (h is LN(x) in a pre-norm model, x in a post-norm one).
WideMatrix feed_forward(const WideMatrix& x, const Ct2FeedForward& f, Ct2Activation activation) {
  return mlp(x, f.w1, f.b1, [activation](WideMatrix h) { activate(h, activation); return h; }, f.w2, f.b2);
}

// One residual sublayer f with its layer norm: x += f(LN(x)) (pre-norm) or x = LN(x + f(x))
// (post-norm), as CTranslate2's MultiHeadAttention and FeedForwardNetwork apply theirs.
template <typename Sublayer>
void residual(const Ct2Transformer& model, WideMatrix& x, const Ct2LayerNorm& norm, Sublayer&& f) {
  residual_sublayer(x, model.pre_norm ? NormPlacement::Pre : NormPlacement::Post,
                    [&](const WideMatrix& v) { return layer_norm(v, norm, model.layer_norm_epsilon); }, f);
}

void feed_forward_sublayer(const Ct2Transformer& model, WideMatrix& x, const Ct2FeedForward& f) {
  residual(model, x, f.norm, [&](const WideMatrix& h) { return feed_forward(h, f, model.activation); });
}

// E[ids] · sqrt(d_model) + PE(first + 1 …): CTranslate2's position table starts at 1.
WideMatrix embed(const Ct2Transformer& model, const Matrix& table, const Matrix& learned,
                 const std::vector<std::int32_t>& ids, long first) {
  const long n = static_cast<long>(ids.size());
  WideMatrix x(n, model.d_model);
  const double scale = model.scale_embeddings ? std::sqrt(static_cast<double>(model.d_model)) : 1.0;
  for (long i = 0; i < n; ++i) x.row(i) = table.row(ids[static_cast<std::size_t>(i)]).cast<double>() * scale;
  if (learned.size() != 0) {
    if (first + n > learned.rows()) {
      throw InputError::inconsistent(model.file, "position " + std::to_string(first + n - 1) +
                                                     " is beyond the learned position table's " +
                                                     std::to_string(learned.rows()) + " rows");
    }
    return x + learned.middleRows(first, n).cast<double>();
  }
  std::vector<long long> positions(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) positions[static_cast<std::size_t>(i)] = first + i + 1;
  return x + sinusoidal_encoding_halves(positions, model.d_model).cast<double>();
}

AttentionResult attend(const Ct2Transformer& model, const AttentionLayer& layer, const Matrix& x_q,
                       const Matrix& x_kv, const MaskMatrix& allowed, const std::string& what,
                       const AttentionWants& wants = AttentionWants{false, true}) {
  AttentionResult result = multi_head_attention(layer, x_q, x_kv, allowed, AttentionWants{wants.scores, true, wants.value_vectors});
  if (!result.overflow.empty()) {
    throw InputError::inconsistent(model.file, what + ": " + result.overflow +
                                                   " float32 (|x| > 3.4e38, or NaN): its weights or its input hold NaN or too large values");
  }
  return result;
}

// The gain of the norm that made an attention block's input, to fold into its weights (explain):
// a pre-norm block reads LN(x), whose gain γ scales it; a post-norm block reads x itself.
Vector input_gain(const Ct2Transformer& model, const Ct2LayerNorm& norm) {
  return model.pre_norm ? Vector(norm.gamma.cast<Scalar>()) : Vector();
}

void probe_block(const BlockProbe* probe, const char* stack, const char* kind, int layer, const AttentionLayer& attention,
                 const Matrix& x_q, const Matrix& x_kv, const MaskMatrix& allowed, Vector query_gain, Vector key_gain) {
  if (probe == nullptr) return;
  (*probe)(BlockInputs{layer, stack, kind, LayerInputs{&attention, &x_q, &x_kv, &allowed, nullptr, std::nullopt}, std::move(query_gain),
                       std::move(key_gain)});
}

std::string block_name(const std::string& stack, int layer, const std::string& kind) {
  return stack + " layer " + std::to_string(layer) + " " + kind + "-attention";
}

WideMatrix project_logits(const Ct2Transformer& model, const WideMatrix& y) {
  WideMatrix logits = (model.decoder_norm ? layer_norm(y, *model.decoder_norm, model.layer_norm_epsilon) : y) *
                      model.projection;
  logits.rowwise() += model.projection_bias.transpose();
  if (!logits.allFinite()) {
    throw InputError::inconsistent(model.file, "the decoder's logits are not finite (NaN or infinite): the output "
                                               "projection, its bias, the final layer norm or a layer's feed-forward "
                                               "holds NaN or too large values");
  }
  return logits;
}

}  // namespace

Ct2Transformer load_ct2_transformer(const Ct2File& file, double layer_norm_epsilon) {
  refuse_unsupported(file);
  Ct2Transformer model;
  model.file = file.path();
  model.spec_name = file.spec_name();
  model.binary_version = file.binary_version();
  model.spec_revision = file.spec_revision();
  model.layer_norm_epsilon = layer_norm_epsilon;
  const int encoder_heads = heads_of(file, "encoder");
  const int decoder_heads = heads_of(file, "decoder");
  if (encoder_heads != decoder_heads) {
    throw InputError::inconsistent(file.path(), "encoder has " + std::to_string(encoder_heads) + " heads, decoder " +
                                                    std::to_string(decoder_heads) + ": expected the same");
  }
  model.num_heads = encoder_heads;
  model.scale_embeddings = scales_embeddings(file, "encoder");
  for (const char* key : {"pre_norm", "activation", "scale_embeddings"}) {
    const auto encoder_value = setting(file, "encoder", key), decoder_value = setting(file, "decoder", key);
    if (encoder_value.value_or(-1) != decoder_value.value_or(-1)) {
      throw InputError::inconsistent(file.path(), std::string("encoder/") + key + " and decoder/" + key +
                                                      " differ: one setting for both stacks is supported");
    }
  }
  model.pre_norm = setting(file, "encoder", "pre_norm").value_or(1) != 0;
  model.activation = static_cast<Ct2Activation>(setting(file, "encoder", "activation").value_or(0));

  Loader load(file);
  const std::string source_name = embeddings_name(file, "encoder");
  const Ct2Variable& source = file.variable(source_name, "source embeddings");
  if (source.shape.size() != 2 || source.shape[1] < 4 || source.shape[1] % 2 != 0) {
    throw InputError::inconsistent(file.path(), "variable " + source_name +
                                                    ": expected shape [source vocabulary, d_model] with d_model even "
                                                    "and at least 4, got " + source.shape_text());
  }
  load.d_model = model.d_model = static_cast<long>(source.shape[1]);
  if (model.d_model % model.num_heads != 0) {
    throw InputError::inconsistent(file.path(), "d_model " + std::to_string(model.d_model) + " is not a multiple of " +
                                                    std::to_string(model.num_heads) + " heads");
  }
  model.source_embeddings = load.matrix(source_name, source.shape[0], model.d_model, "source embeddings");
  const std::string target_name = embeddings_name(file, "decoder");
  const Ct2Variable& target = file.variable(target_name, "target embeddings");
  const std::int64_t target_vocabulary = target.shape.empty() ? 0 : target.shape[0];
  model.target_embeddings = load.matrix(target_name, target_vocabulary, model.d_model, "target embeddings");
  model.source_positions = load.positions("encoder");
  model.target_positions = load.positions("decoder");

  const int encoder_layers = count_layers(file, "encoder");
  for (int i = 0; i < encoder_layers; ++i) {
    const std::string scope = "encoder/layer_" + std::to_string(i);
    Ct2EncoderLayer layer;
    layer.self_norm = load.norm(scope + "/self_attention/layer_norm");
    layer.self_attention = load.self_attention(scope + "/self_attention", model.num_heads);
    layer.ffn = load.ffn(scope + "/ffn");
    model.encoder.push_back(std::move(layer));
  }
  if (file.find("encoder/layer_norm/gamma") != nullptr) model.encoder_norm = load.norm("encoder/layer_norm");

  const int decoder_layers = count_layers(file, "decoder");
  for (int i = 0; i < decoder_layers; ++i) {
    const std::string scope = "decoder/layer_" + std::to_string(i);
    Ct2DecoderLayer layer;
    layer.self_norm = load.norm(scope + "/self_attention/layer_norm");
    layer.self_attention = load.self_attention(scope + "/self_attention", model.num_heads);
    layer.cross_norm = load.norm(scope + "/attention/layer_norm");
    layer.cross_attention = load.cross_attention(scope + "/attention", model.num_heads);
    layer.ffn = load.ffn(scope + "/ffn");
    model.decoder.push_back(std::move(layer));
  }
  if (file.find("decoder/layer_norm/gamma") != nullptr) model.decoder_norm = load.norm("decoder/layer_norm");
  model.projection = load.matrix("decoder/projection/weight", target_vocabulary, model.d_model, "output projection")
                         .transpose()
                         .cast<double>();
  model.projection_bias =
      load.vector("decoder/projection/bias", target_vocabulary, "output projection bias").cast<double>();
  return model;
}

// Hands the residual entering a self-attention block (x, before the sublayer adds to it) to the
// capture, with the block's LayerNorm when it follows the sum (post-norm).
void capture_residual(const Ct2Transformer& model, const Ct2Capture& capture, const WideMatrix& x, const Ct2LayerNorm& norm) {
  if (capture.wants.value_vectors && capture.residual) capture.residual(narrow(x), model.pre_norm ? nullptr : &norm);
}

Matrix ct2_encode(const Ct2Transformer& model, const std::vector<std::int32_t>& source_ids,
                  const Ct2AttentionHook& hook, const Ct2Capture& capture, const BlockProbe* probe) {
  WideMatrix x = embed(model, model.source_embeddings, model.source_positions, source_ids, 0);  // [S, d]
  for (int i = 0; i < static_cast<int>(model.encoder.size()); ++i) {
    const Ct2EncoderLayer& layer = model.encoder[static_cast<std::size_t>(i)];
    residual(model, x, layer.self_norm, [&](const WideMatrix& h) {
      const Matrix input = narrow(h);
      probe_block(probe, "encoder", "self", i, layer.self_attention, input, input, MaskMatrix(), input_gain(model, layer.self_norm), {});
      AttentionResult self =
          attend(model, layer.self_attention, input, input, MaskMatrix(), block_name("encoder", i, "self"), capture.wants);
      capture_residual(model, capture, x, layer.self_norm);
      if (hook) hook("encoder", "self", i, self);
      return WideMatrix(self.output.cast<double>());
    });
    feed_forward_sublayer(model, x, layer.ffn);
  }
  return narrow(model.encoder_norm ? layer_norm(x, *model.encoder_norm, model.layer_norm_epsilon) : x);
}

WideMatrix ct2_decoder_logits(const Ct2Transformer& model, const Matrix& memory,
                              const std::vector<std::int32_t>& input_ids, const Ct2AttentionHook& hook,
                              const Ct2Capture& capture, const BlockProbe* probe) {
  WideMatrix y = embed(model, model.target_embeddings, model.target_positions, input_ids, 0);  // [T, d]
  const MaskMatrix causal = build_mask(y.rows(), y.rows(), true, {});
  for (int i = 0; i < static_cast<int>(model.decoder.size()); ++i) {
    const Ct2DecoderLayer& layer = model.decoder[static_cast<std::size_t>(i)];
    if (capture.decoder_residual) capture.decoder_residual(i, y);
    residual(model, y, layer.self_norm, [&](const WideMatrix& h) {
      const Matrix input = narrow(h);
      probe_block(probe, "decoder", "self", i, layer.self_attention, input, input, causal, input_gain(model, layer.self_norm), {});
      AttentionResult self =
          attend(model, layer.self_attention, input, input, causal, block_name("decoder", i, "self"), capture.wants);
      capture_residual(model, capture, y, layer.self_norm);
      if (hook) hook("decoder", "self", i, self);
      return WideMatrix(self.output.cast<double>());
    });
    residual(model, y, layer.cross_norm, [&](const WideMatrix& h) {
      const Matrix queries = narrow(h);
      // The keys and values read the encoder's output M = LN_enc(x): its gain, when it has one.
      probe_block(probe, "decoder", "cross", i, layer.cross_attention, queries, memory, MaskMatrix(),
                  input_gain(model, layer.cross_norm),
                  model.encoder_norm ? Vector(model.encoder_norm->gamma.cast<Scalar>()) : Vector());
      AttentionResult cross =
          attend(model, layer.cross_attention, queries, memory, MaskMatrix(), block_name("decoder", i, "cross"), capture.wants);
      if (hook) hook("decoder", "cross", i, cross);
      return WideMatrix(cross.output.cast<double>());
    });
    feed_forward_sublayer(model, y, layer.ffn);
  }
  if (capture.decoder_residual) capture.decoder_residual(static_cast<int>(model.decoder.size()), y);
  return project_logits(model, y);
}

std::vector<std::int32_t> ct2_greedy_decode(const Ct2Transformer& model, const Matrix& memory,
                                            std::int32_t start_id, std::int32_t end_id, int max_steps) {
  // Per layer, the self-attention input of every position so far (LN(y) pre-norm, y post-norm):
  // the keys and values of the next position's self-attention, which needs no mask since a
  // query sees itself and the past.
  std::vector<Matrix> past(model.decoder.size(), Matrix(0, model.d_model));
  std::vector<std::int32_t> generated;
  std::int32_t token = start_id;
  for (long step = 0; step < max_steps; ++step) {
    WideMatrix y = embed(model, model.target_embeddings, model.target_positions, {token}, step);  // [1, d]
    for (std::size_t i = 0; i < model.decoder.size(); ++i) {
      const Ct2DecoderLayer& layer = model.decoder[i];
      const int index = static_cast<int>(i);
      residual(model, y, layer.self_norm, [&](const WideMatrix& h) {
        past[i].conservativeResize(step + 1, Eigen::NoChange);
        past[i].row(step) = narrow(h).row(0);
        return WideMatrix(attend(model, layer.self_attention, narrow(h), past[i], MaskMatrix(),
                                 block_name("decoder", index, "self"))
                              .output.cast<double>());
      });
      residual(model, y, layer.cross_norm, [&](const WideMatrix& h) {
        return WideMatrix(attend(model, layer.cross_attention, narrow(h), memory, MaskMatrix(),
                                 block_name("decoder", index, "cross"))
                              .output.cast<double>());
      });
      feed_forward_sublayer(model, y, layer.ffn);
    }
    Eigen::Index best = 0;
    project_logits(model, y).row(0).maxCoeff(&best);
    token = static_cast<std::int32_t>(best);
    generated.push_back(token);
    if (token == end_id) break;
  }
  return generated;
}

}  // namespace attnviz
