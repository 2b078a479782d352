#include "cli/model_job.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "analysis/measures.hpp"
#include "cli/encoder_job.hpp"
#include "core/error.hpp"
#include "core/heap_reuse.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "model/ct2_model.hpp"
#include "model/gguf_decoder.hpp"
#include "model/hf_decoder.hpp"
#include "model/hf_encoder.hpp"
#include "model/tokenizers/hf_end_tokens.hpp"
#include "model/tokenizers/hf_tokenizer.hpp"
#include "model/tokenizers/tokenizer_file.hpp"
#include "model/tokenizers/tokenizer_fit.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

// Options of the single-layer path that mean nothing for a whole model.
void refuse_layer_options(const Options& o) {
  if (!o.sentence.empty())
    throw UsageError::bad_option("--model", "replaces SENTENCE and WEIGHTS; give one or the other (got " + o.sentence + ")");
  if (!o.source.empty()) throw UsageError::bad_option("--source", "is for single layers; with --model the model's own inputs are used");
  if (o.causal || o.no_causal)
    throw UsageError::bad_option(o.causal ? "--causal" : "--no-causal",
                                 "is for single layers; a decoder model applies its own causal mask");
  if (!o.rope.empty() || o.rope_theta || o.rope_dim)
    throw UsageError::bad_option("--rope", "is for single layers; a model file carries its own RoPE settings");
  if (o.positional != "none") throw UsageError::bad_option("--positional", "is for single layers");
}

void refuse_model_options(const Options& o) {
  const char* given = o.text ? "--text" : o.token_ids ? "--token-ids" : o.generate >= 0 ? "--generate"
                      : o.layers != "all" ? "--layers" : o.logits ? "--logits" : o.no_bos ? "--no-bos"
                      : o.source_tokens ? "--source-tokens" : o.target_tokens ? "--target-tokens"
                      : o.rollout ? "--rollout" : !o.census.empty() ? "--census" : o.flow ? "--flow"
                      : o.token_types ? "--token-types" : o.exact_matmul ? "--exact-matmul"
                      : !o.activations.empty() ? "--activations"
                      : o.text_file ? "--text-file" : !o.tokenizer.empty() ? "--tokenizer" : o.max_tokens > 0 ? "--max-tokens"
                      : o.no_parse_special ? "--no-parse-special" : nullptr;
  if (given) throw UsageError::bad_option(given, "needs --model");
}

// The library's view of the decoder options: the model, --text / --token-ids, --no-bos.
DecoderInput decoder_input(const Options& o) {
  return DecoderInput{o.model,     o.text,       o.token_ids,      o.no_bos,         !o.no_parse_special,
                      o.tokenizer, o.max_tokens, o.chat_turn_ends, o.chat_turns_note};
}

void check_ids_in_model(const Options& o, const Vocabulary* vocab, const std::vector<std::int32_t>& ids, long n_vocab) {
  check_ids_in_model(decoder_input(o), vocab, ids, n_vocab);
}

// `load()`, the decoder of o.model. run_model sends encoders elsewhere; the commands that run a
// decoder themselves (attribute, census over a corpus) land here, where a BERT file's
// "architecture bert is not supported" would mislead: a model that fails to load as a decoder is
// asked whether it is an encoder (only then, so a decoder's file is not read twice).
template <typename Load>
auto as_decoder(const Options& o, Load&& load) -> decltype(load()) {
  try {
    return load();
  } catch (const InputError&) {
    if (is_encoder_model(o))
      throw UsageError::bad_option("--model", o.model + " is an encoder (bert): this command reads decoder-only models "
                                   "(dump, heatmaps and compare read encoders too)");
    throw;
  }
}

LoadedDecoder load_decoder(const Options& o) {
  LoadedDecoder loaded = as_decoder(o, [&] { return load_decoder_model(decoder_input(o)); });
  if (o.exact_matmul) loaded.model->set_quantized_matmul(false);
  return loaded;
}

ModelRunInfo run_loaded_decoder(const LoadedDecoder& loaded, const Options& o, const BlockSink& sink,
                                std::vector<std::string>& warnings, double memory_budget, const KeptBytes& kept,
                                ModelProbe* probe = nullptr, const HeadSink* heads = nullptr) {
  DecoderRunRequest request;
  request.input = decoder_input(o);
  request.layers = o.layers;
  request.generate = o.generate;
  request.logits = o.logits;
  request.scores = o.scores;
  // --activations z is the heads' outputs, which --outputs keeps.
  request.outputs = o.outputs || std::find(o.activations.begin(), o.activations.end(), "z") != o.activations.end();
  request.activations = ActivationWants::of(o.activations);
  request.value_vectors = measure_needs_value_vectors(o.measure);
  request.alti = o.measure == "alti";
  request.memory_budget = memory_budget;
  return run_decoder_request(loaded, request, sink, warnings, kept, probe, heads);
}

ModelRunInfo run_decoder(const Options& o, const BlockSink& sink, std::vector<std::string>& warnings, double memory_budget,
                         const KeptBytes& kept, ModelProbe* probe, const HeadSink* heads) {
  return run_loaded_decoder(load_decoder(o), o, sink, warnings, memory_budget, kept, probe, heads);
}

// A CTranslate2 encoder-decoder: the source from --source-tokens or --text, the target decoded
// greedily (at most --generate tokens, default 256) or forced by --target-tokens.
ModelRunInfo run_encoder_decoder(const Options& o, const BlockSink& sink, std::vector<std::string>& warnings,
                                 double memory_budget, ModelProbe* probe) {
  if (o.token_ids) throw UsageError::bad_option("--token-ids", "is for decoder-only models; give --source-tokens or --text");
  if (o.no_bos) throw UsageError::bad_option("--no-bos", "is for decoder-only models (the model's config frames the source)");
  if (!o.activations.empty())
    throw UsageError::bad_option("--activations", o.model + " is an encoder-decoder (CTranslate2) model: activations are "
                                                  "written for decoder-only models so far");
  if (!o.tokenizer.empty() || o.max_tokens > 0)
    throw UsageError::bad_option(o.max_tokens > 0 ? "--max-tokens" : "--tokenizer",
                                 "is for decoder-only and encoder models; a CTranslate2 model's source is given as tokens or characters");
  if (o.target_tokens && o.generate >= 0)
    throw UsageError::bad_option("--generate", "caps greedy decoding; --target-tokens forces the translation instead");
  Ct2Request request;
  request.model_dir = o.model;
  request.source_tokens = o.source_tokens;
  request.text = o.text;
  request.target_tokens = o.target_tokens;
  if (o.generate >= 0) request.max_generate = o.generate;
  request.layers = parse_layer_selection(o.layers, 0);
  request.want_last_logits = o.logits;
  request.wants = AttentionWants{o.scores, o.outputs, measure_needs_value_vectors(o.measure)};
  request.memory_budget_bytes = memory_budget;
  request.probe = probe;
  return run_ct2_model(request, sink, warnings);
}

// The warning for --exact-matmul on a model whose products it does not change.
std::string exact_matmul_ignored(const std::string& model) {
  return "--exact-matmul: " + model + " has no quantized or half-precision weights that attnviz multiplies as llama.cpp "
         "(only GGUF decoders and BERT encoders with weights other than f32): ignored";
}

}  // namespace

bool is_model_run(const Options& options) { return !options.model.empty(); }

bool is_encoder_decoder_model(const Options& options) {
  std::error_code ec;
  return fs::is_directory(options.model, ec) && fs::exists(fs::path(options.model) / "model.bin", ec);
}

void check_layer_run_options(const Options& options) {
  refuse_model_options(options);
  if (options.sentence.empty()) throw UsageError::bad_option("SENTENCE", "required (or --model FILE with --text)");
}


// --measure: each block's norms or ALTI from what the forward pass handed on, which is then let
// go, before `sink` takes the block; `layer_norms` (a dump's) keeps the layer's norms too.
static BlockSink measured_sink(const Options& options, const BlockSink& sink, std::vector<std::string>& warnings, bool layer_norms) {
  return [&options, &sink, &warnings, layer_norms](AttentionBlock&& block) {
    if (!block.value_vectors.empty()) {
      if (options.measure != "alti" || block.kind == "self")
        add_measure(options.measure, block.value_vectors, AltiInputs{&block.residual, block.b_o, block.post_norm}, block.record,
                    layer_norms);
      else if (std::find(warnings.begin(), warnings.end(), kNoCrossAlti) == warnings.end())
        warnings.push_back(kNoCrossAlti);
      block.value_vectors.clear();
      block.residual = Matrix();
    }
    sink(std::move(block));
  };
}

static ModelRunInfo run_model_once(const Options& options, const BlockSink& plain_sink, std::vector<std::string>& warnings,
                       double memory_budget, const KeptBytes& kept, ModelProbe* probe, const HeadSink* heads) {
  refuse_layer_options(options);
  const BlockSink measured = measured_sink(options, plain_sink, warnings, options.command == Command::Dump);
  // Each layer's activations, projections and attention weights (and the measure's temporaries)
  // are freed after it: kept in the heap, the next layer reuses them instead of faulting fresh
  // pages in (core/heap_reuse.hpp). On this project's machines a page fault is dear: a Q8_0
  // Qwen 2.5 0.5B shape at 512 tokens took 5.2 s with glibc's defaults, 2.2 s so (issue 39).
  keep_freed_memory_in_heap();
  const BlockSink& sink = measure_needs_value_vectors(options.measure) ? measured : plain_sink;
  if (is_encoder_decoder_model(options)) return run_encoder_decoder(options, sink, warnings, memory_budget, probe);
  if (options.source_tokens || options.target_tokens)
    throw UsageError::bad_option(options.source_tokens ? "--source-tokens" : "--target-tokens",
                                 "is for encoder-decoder (CTranslate2) models; " + options.model + " is a decoder-only model");
  if (is_encoder_model(options)) {
    // The BERT encoder hands on its attention weights, and for --measure norms|alti the value
    // vectors, residual and post-LN norm (issue 20); what else needs the values or the layer's
    // inputs is refused by name rather than drawn as plain weights.
    const std::string encoder = options.model + " is an encoder (bert): ";
    if (options.scores || options.outputs || options.flow || !options.activations.empty())
      throw UsageError::bad_option(options.scores ? "--scores" : options.outputs ? "--outputs" : options.flow ? "--flow" : "--activations",
                                   encoder + "not computed for encoders yet");
    return run_encoder_model(options, sink, warnings, memory_budget, kept, probe);
  }
  if (options.token_types)
    throw UsageError::bad_option("--token-types", "is for encoder models (bert); " + options.model + " is a decoder-only model");
  std::error_code ec;
  if (fs::is_directory(options.model, ec) && !is_hf_model_folder(options.model)) {
    throw InputError::inconsistent(options.model, "is a folder with neither a CTranslate2 model.bin nor a Hugging Face config.json + "
                                                  "model.safetensors (GGUF models are single files)");
  }
  return run_decoder(options, sink, warnings, memory_budget, kept, probe, heads);
}

ModelRunInfo run_model(const Options& options, const BlockSink& plain_sink, std::vector<std::string>& warnings,
                       double memory_budget, const KeptBytes& kept, ModelProbe* probe, const HeadSink* heads) {
  ModelRunInfo info = run_model_once(options, plain_sink, warnings, memory_budget, kept, probe, heads);
  info.chat_prompt = options.chat_prompt;
  // The flag changes only Q8_0 products (decoders and BERT from GGUF files): say when it did nothing.
  // The one place that says it (attribute, the other user of a loaded decoder, does not take the
  // flag: it always multiplies in float32).
  if (options.exact_matmul && info.model.matmul.empty())
    warnings.push_back(exact_matmul_ignored(options.model));
  return info;
}

DecoderRun prepare_decoder_run(const Options& o, std::vector<std::string>& warnings, const std::string& encoder_decoder_refusal) {
  refuse_layer_options(o);
  if (is_encoder_decoder_model(o)) throw UsageError::bad_option("--model", o.model + " is an encoder-decoder (CTranslate2) model: " + encoder_decoder_refusal);
  std::error_code ec;
  if (fs::is_directory(o.model, ec) && !is_hf_model_folder(o.model)) {
    throw InputError::inconsistent(o.model, "is a folder with neither a CTranslate2 model.bin nor a Hugging Face config.json + "
                                            "model.safetensors (GGUF models are single files)");
  }
  LoadedDecoder loaded = load_decoder(o);
  DecoderRun run;
  run.info = start_decoder_run(loaded, decoder_input(o), 0, warnings);  // the checks run_model makes
  run.model = std::move(loaded.model);
  run.vocab = std::move(loaded.vocab);
  run.token_list = std::move(loaded.names);
  run.names = run.vocab ? run.vocab.get() : run.token_list ? &*run.token_list : nullptr;
  describe_tokens(run.names, run.vocab.get(), run.info);
  for (const std::int32_t id : run.info.token_ids) run.labels.push_back(decoder_token_label(run.names, id));
  return run;
}


namespace {

// The vocabulary `tokenize` reads: a GGUF file's, or a Hugging Face folder's tokenizer.json.
Vocabulary tokenizer_of(const std::string& model) {
  std::error_code ec;
  if (!fs::is_directory(model, ec)) return vocabulary_from_gguf(GgufFile(model));
  const fs::path tokenizer = fs::path(model) / "tokenizer.json";
  if (!fs::exists(tokenizer, ec) && fs::exists(fs::path(model) / "model.bin", ec)) {
    // A new user tried the bundled translation model: its vocabularies are token lists with no
    // tokenizer; say how its source is given instead.
    throw InputError::inconsistent(model, "is a CTranslate2 translation model: it has token lists, no tokenizer (its "
                                          "source is given as tokens with --source-tokens, or as characters with --text "
                                          "for a character-level vocabulary); tokenize reads a GGUF file or a Hugging "
                                          "Face folder's tokenizer.json");
  }
  if (!fs::exists(tokenizer, ec))
    throw InputError::inconsistent(model, "is a folder without a tokenizer.json; tokenize reads a GGUF file or a Hugging "
                                          "Face folder's tokenizer.json");
  return vocabulary_from_tokenizer_json(tokenizer.string());
}

const char* kind_of(TokenType type) {
  switch (type) {
    case TokenType::Byte: return "byte";
    case TokenType::Control:
    case TokenType::UserDefined: return "special";
    case TokenType::Unknown: return "unknown";
    default: return "";
  }
}

std::string json_text(const nlohmann::ordered_json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

// A Hugging Face folder's token embeddings, read as heatmaps --model reads them (config.json,
// checked against the safetensors header; no weight is decoded). A model attnviz cannot read
// (an unsupported class) leaves the tokenizer usable: said in a warning, nullopt.
std::optional<long> hf_folder_vocab(const std::string& folder, std::vector<std::string>& warnings) {
  try {
    if (is_hf_encoder_folder(folder)) return encoder_from_hf_folder(folder).config().n_vocab;
    return decoder_from_hf_folder(folder).config().n_vocab;
  } catch (const InputError& e) {
    warnings.push_back(folder + ": the ids are not checked against the model's token embeddings, which attnviz cannot read: " +
                       e.what());
    return std::nullopt;
  }
}

std::string tokenize_report(const Options& options, std::vector<std::string>& warnings) {
  if (!options.text) throw UsageError::bad_option("--text", "required: the text to split (--text \"...\", or --text-file FILE)");
  Vocabulary vocab = options.tokenizer.empty() ? tokenizer_of(options.model) : vocabulary_from_file(options.tokenizer);
  // A tokenizer.json with more ids than the model has embeddings: refused, or named, as
  // heatmaps --model refuses or names it (the ids it gives are of no use to the model).
  const std::optional<long> n_vocab = is_hf_model_folder(options.model) ? hf_folder_vocab(options.model, warnings) : std::nullopt;
  if (n_vocab) require_tokenizer_fits(vocab, *n_vocab, options.model);
  warnings.insert(warnings.end(), vocab.warnings.begin(), vocab.warnings.end());
  const std::vector<std::int32_t> ids = tokenize(vocab, options.text.value_or(""), !options.no_bos, !options.no_parse_special);
  if (n_vocab) check_ids_in_model(options, &vocab, ids, *n_vocab);
  if (const std::string unread = unread_text_warning(vocab, ids, "--text"); !unread.empty()) warnings.push_back(unread);
  Tokens pieces, texts;
  for (const std::int32_t id : ids) {
    pieces.push_back(vocab.pieces[static_cast<std::size_t>(id)]);
    texts.push_back(token_display_text(vocab, id));
  }
  if (!options.table)
    return json_text(nlohmann::ordered_json{{"tokens", pieces}, {"token_ids", ids}, {"token_texts", texts}}) + "\n";
  std::string out = "index\tid\tpiece\ttext\tkind\n";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out += std::to_string(i) + "\t" + std::to_string(ids[i]) + "\t" + json_text(pieces[i]) + "\t\"" +
           piece_display(vocab, ids[i]) + "\"\t" + kind_of(token_type(vocab, ids[i])) + "\n";
  }
  return out;
}

std::string block_folder(const AttentionBlock& block, bool encoder_decoder) {
  const std::string layer = "layer_" + std::to_string(block.layer);
  if (!encoder_decoder) return layer;
  if (block.stack == "encoder") return "encoder/" + layer;
  return "decoder/" + layer + "/" + block.kind;
}

// The decoded weights a DecoderSession keeps across texts at most (beside the model's file).
constexpr double kKeptWeightsBytes = 64.0 * 1024 * 1024;

struct DecoderSession::Loaded {
  LoadedDecoder decoder;
};

DecoderSession::DecoderSession(const Options& options, bool needs_tokenizer) : options_(options) {
  refuse_layer_options(options_);
  if (is_encoder_decoder_model(options_))
    throw UsageError::bad_option("--model", options_.model + " is an encoder-decoder (CTranslate2) model; census --corpus runs "
                                                             "decoder-only models (GGUF, Hugging Face) so far");
  std::error_code ec;
  if (fs::is_directory(options_.model, ec) && !is_hf_model_folder(options_.model))
    throw InputError::inconsistent(options_.model, "is a folder with neither a CTranslate2 model.bin nor a Hugging Face config.json + "
                                                   "model.safetensors (GGUF models are single files)");
  options_.generate = -1;
  options_.token_ids.reset();
  if (needs_tokenizer) options_.text = std::string();
  loaded_ = std::make_unique<Loaded>(Loaded{load_decoder(options_)});
  // Every text runs every layer: a small model's weights are decoded once, not per text (~10%
  // of a stories260K census went to decoding and transposing them again).
  loaded_->decoder.model->keep_decoded_weights(kKeptWeightsBytes);
  summary_ = summary_of(loaded_->decoder.model->config());
}

DecoderSession::~DecoderSession() = default;

long DecoderSession::n_vocab() const { return loaded_->decoder.model->config().n_vocab; }

std::vector<std::int32_t> DecoderSession::tokenize(const std::string& text) const {
  const Vocabulary* vocab = loaded_->decoder.vocab.get();
  if (!vocab) throw InputError::inconsistent(options_.model, "the model has no tokenizer to split the corpus's texts; give token_ids (JSONL)");
  return attnviz::tokenize(*vocab, text, !options_.no_bos, !options_.no_parse_special);
}

ModelRunInfo DecoderSession::run(const std::vector<std::int32_t>& ids, const BlockSink& sink, std::vector<std::string>& warnings,
                                 double memory_budget, const HeadSink* heads) const {
  Options o = options_;
  o.text.reset();
  o.no_bos = false;
  o.token_ids = std::vector<int>(ids.begin(), ids.end());
  return run_loaded_decoder(loaded_->decoder, o, sink, warnings, memory_budget, {}, nullptr, heads);
}

ModelRunInfo DecoderSession::run(const Options& request, const BlockSink& sink, std::vector<std::string>& warnings,
                                 double memory_budget, const KeptBytes& kept) const {
  if (request.model != options_.model)
    throw UsageError::bad_option("--model", request.model + " is not the session's model, " + options_.model);
  refuse_layer_options(request);
  // As a dump has them (layer_norms too): serve answers a run as `dump --model` does.
  const BlockSink measured = measured_sink(request, sink, warnings, true);
  ModelRunInfo info = run_loaded_decoder(loaded_->decoder, request, measure_needs_value_vectors(request.measure) ? measured : sink,
                                         warnings, memory_budget, kept);
  info.chat_prompt = request.chat_prompt;
  return info;
}

const Vocabulary* DecoderSession::vocabulary() const { return loaded_->decoder.vocab.get(); }

}  // namespace attnviz
