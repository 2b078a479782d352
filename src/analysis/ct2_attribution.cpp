#include "analysis/ct2_attribution.hpp"

#include <cassert>
#include <cmath>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/parallel_for.hpp"
#include "core/product_threads.hpp"

namespace attnviz {

namespace {

// One head of one block to zero in a rerun.
struct Ablated {
  std::string stack, kind;  // "encoder"/"decoder", "self"/"cross"
  int layer = 0, head = 0;
};

const AttentionLayer& block_weights(const Ct2Transformer& model, const std::string& stack, const std::string& kind, int layer) {
  if (stack == "encoder") return model.encoder[static_cast<std::size_t>(layer)].self_attention;
  const Ct2DecoderLayer& d = model.decoder[static_cast<std::size_t>(layer)];
  return kind == "self" ? d.self_attention : d.cross_attention;
}

// The block's output with head h's z^h = 0: concat (z^h columns zeroed)·W_O + b_O, the product
// model/head_ablation's zeroed rows of W_O give.
void zero_head(const AttentionLayer& layer, AttentionResult& r, int head) {
  const long d_v = layer.d_v();
  Matrix concat(r.head_outputs.front().rows(), layer.num_heads * d_v);  // [n, h·d_v]
  for (int h = 0; h < layer.num_heads; ++h)
    concat.middleCols(h * d_v, d_v) = h == head ? Matrix::Zero(concat.rows(), d_v) : r.head_outputs[static_cast<std::size_t>(h)];
  r.output = concat * layer.w_o;
  if (layer.b_o.size()) r.output.rowwise() += layer.b_o.transpose();
}

// log softmax(row)[index] in double, the max subtracted first.
double log_softmax_row(const WideMatrix& logits, long row, std::int32_t index) {
  const double top = logits.row(row).maxCoeff();
  return logits(row, index) - top - std::log((logits.row(row).array() - top).exp().sum());
}

// [h, d_model]: each head's write z^h W_O^h at row p.
Matrix head_writes(const AttentionLayer& layer, const AttentionResult& r, long p) {
  const long d_v = layer.d_v();
  Matrix writes(layer.num_heads, layer.w_o.cols());
  for (int h = 0; h < layer.num_heads; ++h)
    writes.row(h) = r.head_outputs[static_cast<std::size_t>(h)].row(p) * layer.w_o.middleRows(h * d_v, d_v);
  return writes;
}

// What the clean pass records at position p: per decoder layer the residual entering it (and
// after the last), the self- and cross-attention updates as added, and each head's write.
struct CleanPass {
  std::vector<WideVector> residual;  // [layers + 1]
  std::vector<Vector> self_update, cross_update;
  std::vector<Matrix> self_writes, cross_writes;  // [layer] × [h, d_model]
  WideMatrix logits;                               // [p + 1, vocabulary]
};

CleanPass clean_pass(const Ct2Transformer& model, const Matrix& memory, const std::vector<std::int32_t>& ids, long p) {
  CleanPass pass;
  Ct2Capture capture;
  capture.decoder_residual = [&](int, const WideMatrix& y) { pass.residual.push_back(y.row(p).transpose()); };
  const Ct2AttentionHook hook = [&](const std::string&, const std::string& kind, int layer, AttentionResult& r) {
    const AttentionLayer& weights = block_weights(model, "decoder", kind, layer);
    (kind == "self" ? pass.self_writes : pass.cross_writes).push_back(head_writes(weights, r, p));
    (kind == "self" ? pass.self_update : pass.cross_update).push_back(r.output.row(p).transpose());
  };
  pass.logits = ct2_decoder_logits(model, memory, ids, hook, capture);
  return pass;
}

// LN_dec at y_p with its statistic fixed (none: the identity).
FinalNormTrace final_norm_at(const Ct2Transformer& model, const WideVector& y) {
  FinalNormTrace norm;
  if (!model.decoder_norm) {
    norm.gain = Vector::Ones(y.size());
    return norm;
  }
  const double mean = y.mean();
  norm.centre = true;
  norm.scale = 1.0 / std::sqrt((y.array() - mean).square().mean() + model.layer_norm_epsilon);
  norm.gain = model.decoder_norm->gamma.cast<Scalar>();
  norm.bias = model.decoder_norm->beta.cast<Scalar>();
  return norm;
}

// The residual at p taken apart into a ResidualTrace (decoder self-attention heads as its heads).
ResidualTrace decoder_trace(const Ct2Transformer& model, const CleanPass& pass, std::int32_t token) {
  ResidualTrace trace;
  const double scale = model.scale_embeddings ? std::sqrt(static_cast<double>(model.d_model)) : 1.0;
  const WideVector embedding = model.target_embeddings.row(token).transpose().cast<double>() * scale;
  trace.embedding = embedding.cast<Scalar>();
  trace.position = (pass.residual.front() - embedding).cast<Scalar>();
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    const Ct2DecoderLayer& layer = model.decoder[l];
    trace.head_writes.push_back(pass.self_writes[l]);
    trace.attn_bias.push_back(layer.self_attention.b_o);
    trace.attn_updates.push_back(pass.self_update[l]);
    const WideVector mlp = pass.residual[l + 1] - pass.residual[l] - pass.self_update[l].cast<double>() -
                           pass.cross_update[l].cast<double>() - layer.ffn.b2;
    trace.mlp_writes.push_back(mlp.cast<Scalar>());
    trace.mlp_bias.push_back(layer.ffn.b2.cast<Scalar>());
  }
  trace.final_residual = pass.residual.back().cast<Scalar>();
  trace.final_norm = final_norm_at(model, pass.residual.back());
  return trace;
}

// Every head of every block, encoder first, then per decoder layer self and cross.
std::vector<Ablated> every_head(const Ct2Transformer& model) {
  std::vector<Ablated> heads;
  for (int l = 0; l < static_cast<int>(model.encoder.size()); ++l)
    for (int h = 0; h < model.num_heads; ++h) heads.push_back({"encoder", "self", l, h});
  for (const char* kind : {"self", "cross"})
    for (int l = 0; l < static_cast<int>(model.decoder.size()); ++l)
      for (int h = 0; h < model.num_heads; ++h) heads.push_back({"decoder", kind, l, h});
  return heads;
}

// log p(target) at p with one head zeroed.
double ablated_log_prob(const Ct2Transformer& model, const Ct2AttributionRequest& request, const Matrix& clean_memory,
                        const std::vector<std::int32_t>& ids, const Ablated& a, std::int32_t target) {
  const Ct2AttentionHook hook = [&](const std::string& stack, const std::string& kind, int layer, AttentionResult& r) {
    if (stack == a.stack && kind == a.kind && layer == a.layer) zero_head(block_weights(model, stack, kind, layer), r, a.head);
  };
  const Matrix memory = a.stack == "encoder" ? ct2_encode(model, request.source_ids, hook) : clean_memory;
  const WideMatrix logits = ct2_decoder_logits(model, memory, ids, a.stack == "decoder" ? hook : Ct2AttentionHook());
  return log_softmax_row(logits, logits.rows() - 1, target);
}

// [layers][heads] tables of every_head()'s order, filled from `changes`.
void fill_ablation(const Ct2Transformer& model, const std::vector<double>& changes, HeadAttribution& a) {
  const auto table = [&](std::size_t first, std::size_t layers) {
    std::vector<std::vector<double>> t(layers);
    for (std::size_t l = 0; l < layers; ++l)
      t[l].assign(changes.begin() + static_cast<long>(first + l * static_cast<std::size_t>(model.num_heads)),
                  changes.begin() + static_cast<long>(first + (l + 1) * static_cast<std::size_t>(model.num_heads)));
    return t;
  };
  const std::size_t heads = static_cast<std::size_t>(model.num_heads), enc = model.encoder.size(), dec = model.decoder.size();
  a.encoder_decoder->ablation_encoder = table(0, enc);
  a.ablation = table(enc * heads, dec);
  a.encoder_decoder->ablation_cross = table((enc + dec) * heads, dec);
}

void ablate_every_head(const Ct2Transformer& model, const Ct2AttributionRequest& request, const Matrix& memory,
                       const std::vector<std::int32_t>& ids, int threads, HeadAttribution& a) {
  const std::vector<Ablated> heads = every_head(model);
  std::vector<double> changes(heads.size());
  std::vector<std::exception_ptr> errors(heads.size());
  // Each rerun is independent; the model is only read. Eigen's global thread count is set to 1
  // before the threads start (its products then run on their own thread, and nothing writes it).
  const ProductThreads one_thread(0);
  parallel_for_blocks(heads.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      try {
        changes[i] = ablated_log_prob(model, request, memory, ids, heads[i], a.target_id) - a.log_prob;
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  fill_ablation(model, changes, a);
}

double encoder_decoder_total(const HeadAttribution& a) {
  const EncoderDecoderAttribution& e = *a.encoder_decoder;
  double sum = a.dla.total() + e.dla_output_bias;
  for (const std::vector<double>& layer : e.dla_cross) sum += std::accumulate(layer.begin(), layer.end(), 0.0);
  return std::accumulate(e.dla_cross_bias.begin(), e.dla_cross_bias.end(), sum);
}

}  // namespace

std::string ct2_attribution_refusal(const Ct2Transformer& model) {
  if (model.pre_norm) return "";
  return "a post-norm model (pre_norm 0, x = LN(x + f(x))) is not attributed: each sublayer's LayerNorm rescales "
         "everything written before it, so the decoder's residual is not a sum of the heads' writes";
}

HeadAttribution attribute_ct2_heads(const Ct2Transformer& model, const Ct2AttributionRequest& request, int threads) {
  assert(ct2_attribution_refusal(model).empty());
  const long n = static_cast<long>(request.decoder_ids.size());
  HeadAttribution a;
  a.position = request.position < 0 ? n - 1 : request.position;
  assert(a.position >= 0 && a.position < n);
  const std::vector<std::int32_t> ids(request.decoder_ids.begin(), request.decoder_ids.begin() + a.position + 1);
  const Matrix memory = ct2_encode(model, request.source_ids);
  const CleanPass pass = clean_pass(model, memory, ids, a.position);
  const long p = a.position;
  Eigen::Index top = 0;
  pass.logits.row(p).maxCoeff(&top);
  a.target_id = request.target ? *request.target : static_cast<std::int32_t>(top);
  a.logit = pass.logits(p, a.target_id);
  a.log_prob = log_softmax_row(pass.logits, p, a.target_id);

  const ResidualTrace trace = decoder_trace(model, pass, ids.back());
  const Vector u = model.projection.col(a.target_id).cast<Scalar>();
  a.dla = direct_logit_attribution(trace, u);
  EncoderDecoderAttribution& e = a.encoder_decoder.emplace();
  const Eigen::VectorXd w = logit_direction(trace.final_norm, u);
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    std::vector<double> layer;
    for (Eigen::Index h = 0; h < pass.cross_writes[l].rows(); ++h) layer.push_back(pass.cross_writes[l].row(h).cast<double>().dot(w));
    e.dla_cross.push_back(std::move(layer));
    e.dla_cross_bias.push_back(model.decoder[l].cross_attention.b_o.cast<double>().dot(w));
  }
  e.dla_output_bias = model.projection_bias(a.target_id);
  e.source_ids = request.source_ids;
  const double total = encoder_decoder_total(a);
  if (std::abs(total - a.logit) > kAttributionTolerance * std::max(1.0, std::abs(a.logit)))
    throw std::logic_error(model.file + ": the direct logit attribution adds up to " + std::to_string(total) + ", not to the logit " +
                           std::to_string(a.logit));
  if (request.ablation) ablate_every_head(model, request, memory, ids, threads, a);
  return a;
}

}  // namespace attnviz
