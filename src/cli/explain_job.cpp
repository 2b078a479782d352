#include "cli/explain_job.hpp"

#include <filesystem>
#include <optional>
#include <ostream>
#include <regex>
#include <utility>

#include "analysis/explanation.hpp"
#include "cli/attention_job.hpp"
#include "cli/model_job.hpp"
#include "cli/run.hpp"
#include "cli/stale_outputs.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "model/block_probe.hpp"
#include "records/explain_json.hpp"
#include "render/circuits_figure.hpp"
#include "render/explain_page.hpp"
#include "render/neuron_figure.hpp"
#include "render/picture_fonts.hpp"
#include "render/picture_formats.hpp"
#include "render/png.hpp"

namespace attnviz {

namespace {

constexpr const char* kLayerHeadForms = "a head of the layer: H (e.g. 3) or H3";
constexpr const char* kModelHeadForms =
    "L<layer>H<head> (e.g. L2H5), for encoder-decoder models enc.L2H5, dec.L2H5 or cross.L2H5";

// One layer's inputs owned, copied out of a model's forward pass while they were alive.
struct OwnedLayer {
  AttentionLayer layer;
  Matrix x_q, x_kv;
  MaskMatrix allowed;
  std::optional<RopeRequest> rope;
  std::optional<Scalar> soft_cap;
  Vector query_gain, key_gain;
  LayerInputs inputs() const { return {&layer, &x_q, &x_kv, &allowed, &rope, soft_cap}; }
};

std::string range_text(long count) { return count == 1 ? "0" : "0-" + std::to_string(count - 1); }

void check_head(const LayerHead& head, int num_heads, const std::string& given) {
  if (head.head >= num_heads)
    throw UsageError::bad_option("--head", given + ": head " + std::to_string(head.head) + " does not exist (the layer has " +
                                               std::to_string(num_heads) + " heads, " + range_text(num_heads) + ")");
}

// --query I (default: the last query); refused past the text or on a row whose every key is
// masked, which has no weights to explain.
long choose_query(const Options& options, const Tokens& queries, const MaskMatrix& allowed) {
  const long n_q = static_cast<long>(queries.size());
  const long query = options.query.value_or(n_q - 1);
  if (query < 0 || query >= n_q)
    throw UsageError::bad_option("--query", std::to_string(query) + " is past the text: it has " + std::to_string(n_q) +
                                                " query tokens (" + range_text(n_q) + ")");
  if (allowed.size() != 0 && allowed.row(query).cast<int>().sum() == 0)
    throw UsageError::bad_option("--query", std::to_string(query) + " (\"" + queries[static_cast<std::size_t>(query)] +
                                                "\"): every key is masked (causal/padding), so the row has no weights to explain");
  return query;
}

std::string title_of(const Explanation& e) {
  return (e.model.empty() ? std::string() : e.model + " ") + e.head_name;
}

// The layer's head names: "L0H0", … (or "H0", … when the layer's index is unknown).
std::vector<std::string> layer_head_labels(const Explanation& e) {
  const std::string prefix = e.head_name.substr(0, e.head_name.rfind('H'));
  std::vector<std::string> labels;
  for (std::size_t h = 0; h < e.layer_circuits.size(); ++h) labels.push_back(prefix + "H" + std::to_string(h));
  return labels;
}

// explain.png and circuits.png (png), their .svg (svg), explain.html (html: every query of the
// head, from `all_views`).
void add_pictures(const Options& options, const Explanation& e, const std::vector<std::optional<NeuronView>>& all_views,
                  OutputSet& files) {
  const FontSet fonts = picture_fonts(options);
  const std::filesystem::path folder(options.output);
  const std::string query = e.query_tokens[static_cast<std::size_t>(e.view.query)];
  const NeuronFigureRequest neuron{title_of(e) + " \u00B7 query " + std::to_string(e.view.query) + " \u201C" + query + "\u201D",
                                   query, e.key_tokens, &e.view, options.max_size_px};
  const CircuitsFigureRequest circuits{title_of(e) + ": QK and OV circuits beside the layer's other heads",
                                       layer_head_labels(e), &e.layer_circuits, e.view.head, &e.qk_top_tokens, e.folded};
  if (wants_format(options, "png")) {
    files.add((folder / "explain.png").string(), encode_png(render_neuron_figure(neuron, fonts).image));
    files.add((folder / "circuits.png").string(), encode_png(render_circuits_figure(circuits, fonts).image));
  }
  if (wants_format(options, "svg")) {
    files.add((folder / "explain.svg").string(), svg_document({neuron_figure_svg(neuron, fonts)}));
    files.add((folder / "circuits.svg").string(), svg_document({circuits_figure_svg(circuits, fonts)}));
  }
  if (wants_format(options, "html"))
    files.add((folder / "explain.html").string(),
              explain_page_html(ExplainPage{title_of(e), e.query_tokens, e.key_tokens, all_views, e.view.query}));
}

// The head's neuron view at every query (nullopt where every key is masked), for explain.html.
std::vector<std::optional<NeuronView>> every_query(const LayerInputs& in, int head) {
  std::vector<std::optional<NeuronView>> views;
  for (long i = 0; i < in.x_q->rows(); ++i) {
    const bool fully_masked = in.allowed != nullptr && in.allowed->size() != 0 && in.allowed->row(i).cast<int>().sum() == 0;
    views.push_back(fully_masked ? std::nullopt : std::optional<NeuronView>(neuron_view(in, head, i)));
  }
  return views;
}

void write_outputs(const Options& options, const Explanation& e, const std::vector<std::optional<NeuronView>>& all_views,
                   PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  OutputSet files;
  files.create_directory(options.output);
  files.add((std::filesystem::path(options.output) / "explain.json").string(), explanation_to_json(e));
  add_pictures(options, e, all_views, files);
  files.protect(input_files(options));
  timer.lap("render");
  commit_folder(files, options.output, warnings);
  timer.lap("write");
  std::string names = "explain.json";
  for (const std::string& path : files.paths()) {
    const std::string name = std::filesystem::path(path).filename().string();
    if (name != "explain.json") names += ", " + name;
  }
  out << "wrote " << names << " to " << options.output << "/ (" << e.head_name << ", query " << e.view.query << " \""
      << e.query_tokens[static_cast<std::size_t>(e.view.query)] << "\")\n";
}

// An explanation with, for explain.html, the head's view at every query.
struct ExplainRun {
  Explanation e;
  std::vector<std::optional<NeuronView>> all_views;
};

ExplainRun explain_layer(const Options& options, std::vector<std::string>& warnings, PhaseTimer& timer) {
  const LayerHead head = parse_explain_head(options.explain_head, false);
  const PreparedLayer p = prepare_layer(options, warnings, &timer);
  const AttentionLayer& layer = p.in.weights.layer;
  check_head(head, layer.num_heads, options.explain_head);
  const long query = choose_query(options, p.in.queries.tokens, p.allowed);
  if (layer.w_o.size() == 0)
    warnings.push_back(p.in.weights.file + " has no W_O: the scores, values and the head's output are explained, but "
                       "circuits.ov_singular_values, ov_eigenvalues and copying_score are null");
  const LayerInputs inputs{&layer, &p.in.queries.embeddings, &p.in.keys().embeddings, &p.allowed, &p.rope_request, std::nullopt};
  Explanation e = explain_head(inputs, head.head, query, CircuitContext{});
  const std::optional<int> index = p.in.weights.layer_index ? p.in.weights.layer_index : p.in.queries.layer;
  e.head_name = (index ? "L" + std::to_string(*index) : std::string()) + "H" + std::to_string(head.head);
  e.model = !p.in.weights.model.empty() ? p.in.weights.model : p.in.queries.model;
  e.query_tokens = p.in.queries.tokens;
  e.key_tokens = p.in.keys().tokens;
  return {std::move(e), wants_format(options, "html") ? every_query(inputs, head.head) : std::vector<std::optional<NeuronView>>()};
}

// The vocabulary side of the circuits for the explained block: a decoder's self-attention reads
// and predicts one vocabulary (W_E both sides, W_U: a copying score); an encoder-decoder's
// encoder reads source tokens, its cross-attention target queries over source keys, and neither
// has values from the vocabulary W_U predicts (no copying score).
// The tables are moved, not copied: a large model's are 0.5 GB each.
VocabularyCircuit block_vocabulary(OutputWeights&& w, const std::string& block) {
  if (block.empty() || block == "dec") return vocabulary_circuit(std::move(w.embedding), w.output, w.final_gain, std::move(w.pieces));
  if (block == "enc") return vocabulary_circuit(std::move(w.source_embedding), Matrix(), Vector(), std::move(w.source_pieces));
  VocabularyCircuit v = vocabulary_circuit(std::move(w.embedding), Matrix(), Vector(), std::move(w.pieces));
  set_key_vocabulary(v, std::move(w.source_embedding), std::move(w.source_pieces));
  return v;
}

// Refuses a head form that does not fit the model: a block name on a decoder-only model, none on
// an encoder-decoder.
void check_block(const LayerHead& head, const std::string& given, bool encoder_decoder) {
  if (!encoder_decoder && !head.block.empty())
    throw UsageError::bad_option("--head", given + ": the model is decoder-only; give L<layer>H<head> (e.g. L0H3)");
  if (encoder_decoder && head.block.empty())
    throw UsageError::bad_option("--head", given + ": the model is an encoder-decoder; name the block: enc." + given +
                                               " (encoder self-attention), dec." + given + " (decoder self-attention) or cross." +
                                               given + " (cross-attention)");
}

ExplainRun explain_model(const Options& options, std::vector<std::string>& warnings) {
  const LayerHead head = parse_explain_head(options.explain_head, true);
  check_block(head, options.explain_head, is_encoder_decoder_model(options));
  if (options.layers != "all") throw UsageError::bad_option("--layers", "is not for explain: --head names the layer (L2H5)");
  Options run = options;
  run.layers = std::to_string(head.layer);
  std::optional<OwnedLayer> captured;
  Tokens query_tokens, key_tokens;
  ModelProbe probe;
  probe.want_output = true;
  probe.check = [&](const ModelSummary& model) {
    if (head.layer >= model.num_layers)
      throw UsageError::bad_option("--head", options.explain_head + ": layer " + std::to_string(head.layer) +
                                                 " does not exist (the model has " + std::to_string(model.num_layers) +
                                                 " layers, " + range_text(model.num_layers) + ")");
    check_head(head, model.num_heads, options.explain_head);
  };
  const auto wanted = [&](int layer, const std::string& stack, const std::string& kind) {
    return layer == head.layer && (head.block.empty() || block_name(stack, kind) == head.block);
  };
  probe.block = [&](const BlockInputs& b) {
    if (!wanted(b.layer, b.stack, b.kind)) return;
    const LayerInputs& in = b.inputs;
    captured = OwnedLayer{*in.layer, *in.x_q, *in.x_kv, in.allowed ? *in.allowed : MaskMatrix(),
                          in.rope ? *in.rope : std::nullopt, in.soft_cap, b.query_gain, b.key_gain};
  };
  const BlockSink sink = [&](AttentionBlock&& block) {
    if (!wanted(block.layer, block.stack, block.kind)) return;
    query_tokens = block.record.query_tokens;
    key_tokens = block.record.key_tokens;
  };
  const ModelRunInfo info = run_model(run, sink, warnings, memory_budget_bytes(options), {}, &probe);
  if (!captured || !probe.output || query_tokens.empty())
    throw UsageError::bad_option("--head", options.explain_head + ": the model has no such block (its " +
                                               (head.block == "enc" ? "encoder" : "decoder") + " has fewer layers)");
  const long query = choose_query(options, query_tokens, captured->allowed);
  const VocabularyCircuit vocabulary = block_vocabulary(std::move(*probe.output), head.block);
  probe.output.reset();
  Explanation e = explain_head(captured->inputs(), head.head, query,
                               CircuitContext{captured->query_gain, captured->key_gain, &vocabulary});
  e.head_name = model_head_name(head.block, head.layer, head.head);
  e.model = info.model.name;
  e.query_tokens = query_tokens;
  e.key_tokens = key_tokens;
  return {std::move(e), wants_format(options, "html") ? every_query(captured->inputs(), head.head)
                                                      : std::vector<std::optional<NeuronView>>()};
}

}  // namespace

LayerHead parse_explain_head(const std::string& text, bool model) {
  static const std::regex kLayerHead(R"((?:(enc|dec|cross)\.)?L(\d{1,6})H(\d{1,6}))");
  static const std::regex kHead(R"(H?(\d{1,6}))");
  std::smatch m;
  LayerHead head;
  if (model && std::regex_match(text, m, kLayerHead)) {
    head.block = m[1].str();
    head.layer = std::stoi(m[2].str());
    head.head = std::stoi(m[3].str());
    return head;
  }
  if (!model && std::regex_match(text, m, kHead)) {
    head.head = std::stoi(m[1].str());
    return head;
  }
  if (text.empty()) throw UsageError::bad_option("--head", std::string("required: ") + (model ? kModelHeadForms : kLayerHeadForms));
  throw UsageError::bad_option("--head", "expected " + std::string(model ? kModelHeadForms : kLayerHeadForms) + ", got \"" +
                                             text + "\"" +
                                             (model ? " (with --model every head is named by its layer)"
                                                    : " (L<layer>H<head> names a head of a whole model: --model)"));
}

void run_explain(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  if (options.output.empty()) throw UsageError::bad_option("-o", "required: the folder for explain.json and the pictures");
  const bool model = is_model_run(options);
  if (model) timer.lap("load");  // a model is read layer by layer inside its forward pass: counted as compute
  const ExplainRun r = model ? explain_model(options, warnings) : explain_layer(options, warnings, timer);
  timer.lap("compute");
  write_outputs(options, r.e, r.all_views, timer, out, warnings);
}

}  // namespace attnviz
