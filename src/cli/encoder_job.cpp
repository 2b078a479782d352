#include "cli/encoder_job.hpp"

#include <filesystem>
#include <memory>

#include "analysis/measures.hpp"
#include "core/error.hpp"
#include "model/gguf_encoder.hpp"
#include "model/hf_encoder.hpp"
#include "model/model_session.hpp"
#include "model/tokenizers/hf_tokenizer.hpp"
#include "model/tokenizers/tokenizer_file.hpp"
#include "model/tokenizers/tokenizer_fit.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

namespace {

std::vector<std::int32_t> encoder_input_ids(const Options& o, const Vocabulary* vocab) {
  if (o.text && o.token_ids) throw UsageError::bad_option("--text", "give --text or --token-ids, not both");
  if (o.token_ids) {
    if (o.no_bos) throw UsageError::bad_option("--no-bos", "goes with --text (--token-ids are used exactly as given)");
    return std::vector<std::int32_t>(o.token_ids->begin(), o.token_ids->end());
  }
  if (!o.text) throw UsageError::bad_option("--model", "needs the text to run: --text \"...\" or --token-ids 2,1037,3");
  if (!vocab) throw InputError::inconsistent(o.model, "the file has no tokenizer (tokenizer.ggml.tokens); pass --token-ids");
  return tokenize(*vocab, *o.text, !o.no_bos, !o.no_parse_special);
}

ModelSummary summary_of(const EncoderConfig& c) {
  ModelSummary m;
  m.file = c.file;
  m.architecture = c.architecture;
  m.name = c.name;
  m.num_layers = c.num_layers;
  m.num_heads = m.num_kv_heads = c.num_heads;
  m.d_model = c.d_model;
  m.d_k = c.d_model / c.num_heads;
  m.context_length = c.n_positions;
  m.activation = gelu_name(c.gelu);
  return m;
}

}  // namespace

bool is_encoder_model(const Options& options) {
  std::error_code ec;
  if (options.model.empty()) return false;
  if (std::filesystem::is_directory(options.model, ec)) return is_hf_encoder_folder(options.model);
  return is_gguf_encoder(GgufFile(options.model));
}

ModelRunInfo run_encoder_model(const Options& o, const BlockSink& sink, std::vector<std::string>& warnings, double memory_budget,
                               const KeptBytes& kept, ModelProbe* probe) {
  if (o.generate >= 0)
    throw UsageError::bad_option("--generate", o.model + " is an encoder (bert): its attention is bidirectional and it predicts "
                                               "no next token, so there is nothing to continue");
  if (o.logits) throw UsageError::bad_option("--logits", o.model + " is an encoder (bert): it has no output logits");
  std::unique_ptr<Vocabulary> vocab;
  std::unique_ptr<EncoderModel> loaded;
  std::error_code ec;
  if (std::filesystem::is_directory(o.model, ec)) {
    loaded = std::make_unique<EncoderModel>(encoder_from_hf_folder(o.model));
    const std::filesystem::path tokenizer = std::filesystem::path(o.model) / "tokenizer.json";
    if (!o.tokenizer.empty()) vocab = std::make_unique<Vocabulary>(vocabulary_from_file(o.tokenizer));
    else if (std::filesystem::exists(tokenizer, ec)) vocab = std::make_unique<Vocabulary>(vocabulary_from_tokenizer_json(tokenizer.string()));
    else if (o.text)
      throw UsageError::bad_option("--text", o.model + " has no tokenizer.json to split the text with; give one with --tokenizer "
                                             "FILE (a tokenizer.json, or a GGUF of the same model), or pass --token-ids");
  } else {
    auto file = std::make_shared<const GgufFile>(o.model);
    if (!o.tokenizer.empty()) vocab = std::make_unique<Vocabulary>(vocabulary_from_file(o.tokenizer));
    else if (file->has("tokenizer.ggml.tokens")) vocab = std::make_unique<Vocabulary>(vocabulary_from_gguf(*file));
    loaded = std::make_unique<EncoderModel>(encoder_from_gguf(file));
  }
  if (o.exact_matmul) loaded->set_quantized_matmul(false);
  const EncoderModel& model = *loaded;
  if (vocab && o.text && (std::filesystem::is_directory(o.model, ec) || !o.tokenizer.empty()))
    require_tokenizer_fits(*vocab, model.config().n_vocab, o.model);
  if (vocab && o.text) warnings.insert(warnings.end(), vocab->warnings.begin(), vocab->warnings.end());
  const EncoderConfig& c = model.config();
  warnings.insert(warnings.end(), c.warnings.begin(), c.warnings.end());
  if (probe && probe->check) probe->check(summary_of(c));  // before --layers, which the probe's caller chose
  ModelRunInfo info;
  info.model = summary_of(c);
  info.model.matmul = model.matmul();
  info.token_ids = encoder_input_ids(o, vocab.get());
  if (info.token_ids.empty()) throw UsageError::bad_option("--text", "gives no tokens (an empty text with --no-bos): nothing to run");
  // --max-tokens keeps [CLS] first and [SEP] last around the last tokens of the text.
  const bool framed = o.text && !o.no_bos;
  if (const std::string cut = keep_last_tokens(info.token_ids, o.max_tokens, framed, framed && vocab && vocab->sep.has_value(),
                                               o.text ? "--text" : "--token-ids");
      !cut.empty())
    warnings.push_back(cut);
  // As a decoder's: --token-ids named for the user's ids, the tokenizer for the ids of a text.
  check_ids_in_model(DecoderInput{o.model, o.text, o.token_ids, o.no_bos, !o.no_parse_special, o.tokenizer, o.max_tokens}, vocab.get(),
                     info.token_ids, c.n_vocab);
  if (o.text && vocab)
    if (const std::string unread = unread_text_warning(*vocab, info.token_ids, "--text"); !unread.empty()) warnings.push_back(unread);
  info.prompt_length = static_cast<int>(info.token_ids.size());
  EncoderRequest request;
  request.token_ids = info.token_ids;
  if (o.token_types) request.token_types.assign(o.token_types->begin(), o.token_types->end());
  request.layers = parse_layer_selection(o.layers, c.num_layers);
  for (const std::int32_t id : info.token_ids) {
    const bool named = vocab && id >= 0 && static_cast<std::size_t>(id) < vocab->size();
    info.tokens.push_back(named ? vocab->pieces[static_cast<std::size_t>(id)] : vocab ? unnamed_token_label(id) : std::to_string(id));
  }
  if (vocab) {
    for (const std::int32_t id : info.token_ids)
      if (id >= 0 && static_cast<std::size_t>(id) < vocab->size()) info.token_texts.push_back(token_display_text(*vocab, id));
      else info.token_texts.push_back(info.tokens[info.token_texts.size()]);
    info.text = decode(*vocab, info.token_ids);
  }
  request.tokens = info.tokens;
  request.sink = &sink;
  request.value_vectors = measure_needs_value_vectors(o.measure);
  const long n = static_cast<long>(info.token_ids.size());
  const int selected = request.layers.all() ? c.num_layers : static_cast<int>(request.layers.count());
  const double activations = 8.0 * static_cast<double>(n) * (6.0 * static_cast<double>(c.d_model) + 2.0 * static_cast<double>(c.d_ff));
  const double attention = 4.0 * 3.0 * c.num_heads * static_cast<double>(n) * static_cast<double>(n);
  // --measure: one layer's f^h(x_j) (h × n × d_model float32) with its float64 copies, and the
  // norms (h·n² + n²) or ALTI's map beside the weights, as for decoders (model_job.cpp).
  const double measure = request.value_vectors ? 3.0 * 4.0 * c.num_heads * static_cast<double>(n) * static_cast<double>(c.d_model) +
                                                     4.0 * (c.num_heads + 1.0) * static_cast<double>(n) * static_cast<double>(n)
                                               : 0.0;
  const double needed = model.layer_float_bytes() + activations + attention + measure + (kept ? kept(n, selected, c.num_heads) : 0.0);
  if (needed > memory_budget)
    throw LimitError::memory("the forward pass over " + std::to_string(n) + " tokens", needed, memory_budget, "--max-memory MIB");
  if (probe && probe->block) request.probe = &probe->block;
  model.forward(request);
  if (probe && probe->want_output) {
    probe->output = model.output_weights();
    if (vocab) probe->output->pieces = vocab->pieces;
  }
  return info;
}

}  // namespace attnviz
