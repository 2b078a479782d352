#include "cli/attention_job.hpp"

#include <unistd.h>

#include "analysis/measures.hpp"
#include "attention/attention.hpp"
#include "attention/mask.hpp"
#include "attention/positional.hpp"
#include "core/counted.hpp"
#include "core/error.hpp"
#include "records/input_schema.hpp"
#include "records/record_json.hpp"

namespace attnviz {

namespace {

constexpr double kBytesPerMiB = 1024.0 * 1024.0;
constexpr double kDefaultMemoryFraction = 0.5;

void check_options(const Options& options) {
  if (options.causal && options.no_causal) throw UsageError::bad_option("--no-causal", "contradicts --causal: give one");
  if (options.causal && !options.source.empty()) {
    throw UsageError::bad_option("--causal", "applies to self-attention; cross-attention (--source) has no causal mask");
  }
  if (options.flow) throw UsageError::bad_option("--flow", "needs a whole model: --model FILE (flow runs through every layer)");
  if (options.positional != "none" && options.positional != "sinusoidal") {
    throw UsageError::bad_option("--positional", "expected none or sinusoidal, got \"" + options.positional + "\"");
  }
}

// Settings from the weights file, overridden by --rope/--rope-theta/--rope-dim.
std::optional<RopeSettings> rope_settings(const Options& options, const WeightsFile& weights) {
  if (options.rope == "none") {
    if (options.rope_theta || options.rope_dim) {
      throw UsageError::bad_option(options.rope_theta ? "--rope-theta" : "--rope-dim",
                                   "sets RoPE, but --rope none turns it off");
    }
    // The file's scaling would be dropped in silence: refused as a flag that sets RoPE is.
    if (!weights.rope_scaling_pointer.empty()) {
      throw UsageError::bad_option("--rope", "none turns RoPE off, but " + weights.file + " " +
                                                 weights.rope_scaling_pointer +
                                                 " scales it (drop the scaling from the file, or leave --rope none out)");
    }
    return std::nullopt;
  }
  std::optional<RopeSettings> rope = weights.rope;
  if (options.rope == "interleaved" || options.rope == "half") {
    if (!rope) rope = RopeSettings{};
    rope->style = options.rope == "half" ? RopeStyle::Half : RopeStyle::Interleaved;
  } else if (!options.rope.empty()) {
    throw UsageError::bad_option("--rope", "expected interleaved, half or none, got \"" + options.rope + "\"");
  }
  if ((options.rope_theta || options.rope_dim) && !rope) {
    throw UsageError::bad_option(options.rope_theta ? "--rope-theta" : "--rope-dim",
                                 "needs --rope STYLE (the weights file has no rope block)");
  }
  if (!rope) {
    if (!weights.rope_scaling_pointer.empty() && options.rope != "none")
      throw InputError::inconsistent(weights.file, weights.rope_scaling_pointer +
                                                       ": scales RoPE, but the file has no rope block and no --rope "
                                                       "turns RoPE on (add \"rope\", or run with --rope STYLE)");
    return std::nullopt;
  }
  rope->linear_factor = weights.rope_linear_factor;  // also when --rope, not the file, turned RoPE on
  if (options.rope_theta) {
    if (!(*options.rope_theta > 0)) throw UsageError::bad_option("--rope-theta", "must be positive");
    rope->theta = *options.rope_theta;
  }
  if (options.rope_dim) rope->dim = *options.rope_dim;
  const long d_k = weights.layer.d_k();
  if (rope->dim == 0 && d_k % 2 != 0) {
    const std::string problem = "RoPE rotates pairs of dimensions, but d_k = " + std::to_string(d_k) +
                                " is odd: rotate part of each head with an even rope dim";
    if (weights.rope && options.rope.empty()) throw InputError::inconsistent(weights.file, "/rope: " + problem);
    throw UsageError::bad_option("--rope", problem + " (--rope-dim N)");
  }
  if (rope->dim == 0) rope->dim = d_k;
  std::string problem;
  if (rope->dim % 2 != 0 || rope->dim < 2) {
    problem = "must be even and at least 2 (pairs of dimensions rotate), got " + std::to_string(rope->dim);
  } else if (rope->dim > d_k) {
    problem = std::to_string(rope->dim) + " is more than d_k = " + std::to_string(d_k);
  }
  if (!problem.empty()) {
    // A bad flag is a usage error; a bad file is an input error naming the file's field.
    if (options.rope_dim) throw UsageError::bad_option("--rope-dim", problem);
    throw InputError::bad_value(weights.file, "/rope/dim", "an even number from 2 to d_k = " + std::to_string(d_k),
                                std::to_string(rope->dim));
  }
  return rope;
}

// --causal and --no-causal override the weights file's "causal"; a file that asks for a causal
// mask cannot be run as cross-attention, which has none.
bool causal_mask(const Options& options, const InputBundle& in) {
  if (options.causal || options.no_causal) return options.causal;
  const bool causal = in.weights.causal.value_or(false);
  if (causal && in.source)
    throw InputError::inconsistent(in.weights.file, "/causal: true (a causal self-attention layer), but --source " +
                                                        in.source->file + " asks for cross-attention, which has no "
                                                        "causal mask; drop --source, or pass --no-causal");
  return causal;
}

// ALTI adds the residual r_j to T_j(x_j): the layer's output must live in its input's space,
// which only a self-attention layer with W_O back to d_model has (issue 20 §1).
void check_alti_layer(const InputBundle& in) {
  const std::string& file = in.weights.file;
  if (in.source)
    throw UsageError::bad_option("--measure", "alti needs the residual stream of a self-attention layer; --source " +
                                                  in.source->file + " makes this cross-attention (ALTI+ is not implemented)");
  const AttentionLayer& layer = in.weights.layer;
  if (layer.w_o.size() == 0)
    throw InputError::missing_field(file, "/W_O", "the output projection: --measure alti adds each head's f(x) = v·W_O to the "
                                                  "residual, and this layer file has no W_O");
  const long d_in = in.queries.embeddings.cols();
  if (layer.w_o.cols() != d_in)
    throw InputError::inconsistent(file, "/W_O is [" + std::to_string(layer.w_o.rows()) + ", " + std::to_string(layer.w_o.cols()) +
                                             "], so the layer writes " + std::to_string(layer.w_o.cols()) +
                                             " values per token, but its input has d_model " + std::to_string(d_in) +
                                             ": --measure alti needs the output in the input's space to add the residual");
}

void add_positional(Sentence& sentence) {
  sentence.embeddings += sinusoidal_encoding(sentence.positions, sentence.embeddings.cols());
}

// Peak bytes of the job: weights (and scores) of every head, head outputs with their concat
// and W_O output when asked, projections and, for `dump`, the JSON text, which is built in
// memory before the atomic write.
double estimate_bytes(const InputBundle& in, const Options& options) {
  const double n_q = static_cast<double>(in.queries.tokens.size());
  const double n_k = static_cast<double>(in.keys().tokens.size());
  const AttentionLayer& layer = in.weights.layer;
  const double per_head = n_q * n_k;
  const double stacks = options.scores ? 2.0 : 1.0;
  double numbers = layer.num_heads * per_head * stacks;  // kept, and written by dump
  double scratch = 0;                                      // computed, not written
  if (measure_needs_value_vectors(options.measure)) {  // f^h(x_j), norms or ALTI's per-query T
    const double d_out = static_cast<double>(layer.w_o.size() != 0 ? layer.w_o.cols() : layer.num_heads * layer.d_v());
    numbers += options.measure == "norms" ? layer.num_heads * (per_head + n_k) + per_head : per_head;
    if (measure_needs_head_products(options.measure, options.command == Command::Dump))
      scratch += layer.num_heads * n_k * d_out * 2.0 + n_k * d_out * 2.0;  // and float64 copies
    else  // pictures of norms: V and its float64 copy (head_value_norms), no f
      scratch += 3.0 * n_k * static_cast<double>(layer.num_kv_heads * layer.d_v());
  }
  if (options.outputs) {
    const double h_d_v = static_cast<double>(layer.num_heads * layer.d_v());
    numbers += n_q * h_d_v + n_q * static_cast<double>(layer.w_o.cols());  // head outputs, W_O output
    scratch += n_q * h_d_v;                                                  // their concat
  }
  const double projections =
      (n_q * layer.w_q.cols() + n_k * (layer.w_k.cols() + layer.w_v.cols())) * sizeof(Scalar);
  const double text = options.command == Command::Dump ? numbers * kMaxDumpBytesPerNumber : 0.0;
  return (numbers + scratch + per_head) * sizeof(Scalar) + projections + text;
}

std::string fully_masked_warning(const AttentionRecord& record, long query) {
  const std::string heads =
      record.head_name(0) + (record.num_heads > 1 ? "–" + record.head_name(record.num_heads - 1) : "");
  return "query " + std::to_string(query) + " \"" + record.query_tokens[query] +
         "\": every key is masked (causal/padding), so its weights are all zero in every head (" + heads + ")";
}

}  // namespace

double memory_budget_bytes(const Options& options) {
  if (options.max_memory_mib > 0) return options.max_memory_mib * kBytesPerMiB;
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  return physical * kDefaultMemoryFraction;
}

PreparedLayer prepare_layer(const Options& options, std::vector<std::string>& warnings, PhaseTimer* timer,
                            InputTexts texts) {
  check_options(options);
  PreparedLayer p{load_inputs({options.sentence, options.weights, options.source}, memory_budget_bytes(options), std::move(texts)),
                  std::nullopt, std::nullopt, false, MaskMatrix()};
  InputBundle& in = p.in;
  if (timer != nullptr) timer->lap("load");
  const double needed = estimate_bytes(in, options);
  const double budget = memory_budget_bytes(options);
  if (needed > budget) {
    throw LimitError::memory("attention weights for " + counted(in.weights.layer.num_heads, "head") + " x " +
                                 std::to_string(in.queries.tokens.size()) + " x " +
                                 std::to_string(in.keys().tokens.size()) + " tokens",
                             needed, budget, "--max-memory MIB");
  }
  if (options.measure == "alti") check_alti_layer(in);
  p.rope = rope_settings(options, in.weights);
  p.causal = causal_mask(options, in);
  warnings.insert(warnings.end(), in.warnings.begin(), in.warnings.end());
  if (options.positional == "sinusoidal") {
    add_positional(in.queries);
    if (in.source) add_positional(*in.source);
  }
  const Sentence& keys = in.keys();
  p.allowed = build_mask(static_cast<long>(in.queries.tokens.size()), static_cast<long>(keys.tokens.size()), p.causal,
                         keys.attention_mask);
  if (p.rope) p.rope_request = RopeRequest{*p.rope, in.queries.positions, keys.positions};
  return p;
}

AttentionRecord compute_record(const Options& options, std::vector<std::string>& warnings, PhaseTimer* timer,
                               InputTexts texts) {
  PreparedLayer prepared = prepare_layer(options, warnings, timer, std::move(texts));
  const InputBundle& in = prepared.in;
  const std::optional<RopeSettings>& rope = prepared.rope;
  const bool causal = prepared.causal;
  const Sentence& keys = in.keys();
  const AttentionLayer& layer = in.weights.layer;
  const MaskMatrix& allowed = prepared.allowed;
  const std::optional<RopeRequest>& rope_request = prepared.rope_request;
  // norms outside dump: ‖f^h(x_j)‖ through W_O's Gram matrices after the weights, not f itself.
  const bool head_norms_only = options.measure == "norms" && !measure_needs_head_products(options.measure, options.command == Command::Dump);
  AttentionResult result = multi_head_attention(
      layer, in.queries.embeddings, keys.embeddings, allowed,
      {options.scores, options.outputs, measure_needs_value_vectors(options.measure) && !head_norms_only}, rope_request);
  AttentionRecord record;
  if (result.overflow.empty() && head_norms_only) {
    record.weights = std::move(result.weights);
    if (!add_head_norms(layer, keys.embeddings, record)) {
      result.overflow = "the value vectors f(x) = (X·W_V + b_V)·W_O of a head overflow";
      result.overflow_spares_weights = true;
    }
    result.weights = std::move(record.weights);
  }
  if (!result.overflow.empty()) {
    throw InputError::inconsistent(in.weights.file, result.overflow + " float32 (|x| > 3.4e38) with these "
                                                    "embeddings and weights; " +
                                                        (result.overflow_spares_weights
                                                             ? (options.outputs ? std::string("only --outputs needs it, the attention "
                                                                                              "weights do not: run without --outputs")
                                                                                : "only --measure " + options.measure +
                                                                                      " needs it, the attention weights do not: "
                                                                                      "run with --measure weights")
                                                             : std::string("no weights can be computed")));
  }

  record.mode = in.source ? "cross" : "self";
  record.model = !in.weights.model.empty() ? in.weights.model : in.queries.model;
  record.layer = in.weights.layer_index ? in.weights.layer_index : in.queries.layer;
  record.query_tokens = in.queries.tokens;
  record.key_tokens = keys.tokens;
  record.num_heads = layer.num_heads;
  record.num_kv_heads = layer.num_kv_heads;
  record.d_model = in.queries.embeddings.cols();
  record.d_k = layer.d_k();
  record.d_v = layer.d_v();
  record.scale = layer.logit_scale();
  record.causal = causal;
  record.positional = options.positional;
  record.rope = rope;
  record.key_mask = keys.attention_mask;
  record.query_mask = in.queries.attention_mask;
  record.fully_masked_rows = result.fully_masked_rows;
  record.weights = std::move(result.weights);
  record.scores = std::move(result.scores);
  record.head_outputs = std::move(result.head_outputs);
  record.output = std::move(result.output);
  if (!head_norms_only)
    add_measure(options.measure, result.value_vectors, AltiInputs{&in.queries.embeddings, layer.b_o, std::nullopt}, record);
  record.inputs = {options.sentence};
  if (!options.weights.empty()) record.inputs.push_back(options.weights);
  if (!options.source.empty()) record.inputs.push_back(options.source);
  for (long query : record.fully_masked_rows) warnings.push_back(fully_masked_warning(record, query));
  return record;
}

}  // namespace attnviz
