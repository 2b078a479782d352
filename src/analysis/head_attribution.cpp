#include "analysis/head_attribution.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>

#include "core/parallel_for.hpp"
#include "core/product_threads.hpp"

namespace attnviz {

double log_softmax_at(const std::vector<float>& logits, std::int32_t index) {
  assert(index >= 0 && static_cast<std::size_t>(index) < logits.size());
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (const float z : logits) sum += std::exp(static_cast<double>(z) - max);
  return static_cast<double>(logits[static_cast<std::size_t>(index)]) - max - std::log(sum);
}

namespace {

// The shares must add up to the logit; if they do not, the forward pass did something the trace
// does not record (a family's extra norm or bias), and the numbers would be wrong in silence.
void require_shares_add_up(const HeadAttribution& a, const std::string& model) {
  const double total = a.dla.total();
  if (std::abs(total - a.logit) <= kAttributionTolerance * std::max(1.0, std::abs(a.logit))) return;
  throw std::logic_error(model + ": the direct logit attribution adds up to " + std::to_string(total) + ", not to the logit " +
                         std::to_string(a.logit) + ": this model family's forward pass is not fully traced");
}

// log p(target) − clean for head `head` of layer `layer` zeroed, rerun from the residual entering it.
double ablated_change(const DecoderModel& model, const Matrix& layer_input, int layer, int head, std::int32_t target,
                      double clean) {
  const HeadAblation ablation{layer, {head}};
  ForwardRequest rerun;
  rerun.start_residual = &layer_input;
  rerun.start_layer = layer;
  rerun.ablation = &ablation;
  rerun.last_row_only = true;
  return log_softmax_at(model.forward(rerun), target) - clean;
}

}  // namespace

HeadAttribution attribute_heads(const DecoderModel& model, const HeadAttributionRequest& request) {
  const DecoderConfig& c = model.config();
  const long n = static_cast<long>(request.token_ids.size());
  HeadAttribution a;
  a.position = request.position < 0 ? n - 1 : request.position;
  assert(a.position >= 0 && a.position < n);
  // Eigen's threads for the many small products of the reruns: on stories260K libgomp's waiting
  // threads made the 120 layer reruns take 1.3–2.7 s on a busy 2-core machine instead of 85 ms
  // (scripts/bench/RESULTS.md, "Head attribution").
  const ProductThreads threads(2.0 * static_cast<double>(a.position + 1) * static_cast<double>(c.d_model) * static_cast<double>(c.d_ff));
  ResidualTrace trace;
  trace.keep_layer_inputs = request.ablation;
  ForwardRequest clean;
  clean.token_ids.assign(request.token_ids.begin(), request.token_ids.begin() + a.position + 1);
  clean.trace = &trace;
  const std::vector<float> logits = model.forward(clean);
  a.target_id = request.target ? *request.target
                               : static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  assert(a.target_id >= 0 && a.target_id < c.n_vocab);
  const Vector u = model.output_row(a.target_id);
  a.logit = logits[static_cast<std::size_t>(a.target_id)];
  if (trace.final_softcap > 0) {
    // The cap is not linear: the shares explain the logit before it (as TransformerLens's
    // logit_attrs do), which the trace recomputes; the model's capped logit stands beside it.
    a.logit_capped = a.logit;
    a.logit = traced_logit(trace, u);
  }
  a.log_prob = log_softmax_at(logits, a.target_id);
  a.dla = direct_logit_attribution(trace, u);
  require_shares_add_up(a, c.file);
  if (!request.ablation) return a;
  // The L·h reruns are independent: blocks of them on request.threads threads, each product on
  // one (Eigen's global thread count set to 1 before the threads start, so that nothing writes it
  // while they run).
  const std::size_t heads = static_cast<std::size_t>(c.num_heads), reruns = static_cast<std::size_t>(c.num_layers) * heads;
  std::vector<double> changes(reruns);
  std::vector<std::exception_ptr> errors(reruns);
  const ProductThreads one_thread(0);
  parallel_for_blocks(reruns, request.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const int l = static_cast<int>(i / heads), h = static_cast<int>(i % heads);
      try {
        changes[i] = ablated_change(model, trace.layer_inputs[static_cast<std::size_t>(l)], l, h, a.target_id, a.log_prob);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  for (std::size_t l = 0; l < static_cast<std::size_t>(c.num_layers); ++l)
    a.ablation.emplace_back(changes.begin() + static_cast<long>(l * heads), changes.begin() + static_cast<long>((l + 1) * heads));
  return a;
}

}  // namespace attnviz
