#include "cli/model_job.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model/ct2_model.hpp"
#include "model/gguf_decoder.hpp"
#include "model/hf_decoder.hpp"
#include "model/hf_tokenizer.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "model/vocabulary.hpp"

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
  if (o.scores || o.outputs) throw UsageError::bad_option(o.scores ? "--scores" : "--outputs", "is not available with --model yet");
}

void refuse_model_options(const Options& o) {
  const char* given = o.text ? "--text" : o.token_ids ? "--token-ids" : o.generate >= 0 ? "--generate"
                      : o.layers != "all" ? "--layers" : o.logits ? "--logits" : o.no_bos ? "--no-bos"
                      : o.source_tokens ? "--source-tokens" : o.target_tokens ? "--target-tokens"
                      : o.rollout ? "--rollout" : !o.census.empty() ? "--census" : nullptr;
  if (given) throw UsageError::bad_option(given, "needs --model");
}

std::vector<std::int32_t> input_ids(const Options& o, const Vocabulary* vocab) {
  if (o.text && o.token_ids) throw UsageError::bad_option("--text", "give --text or --token-ids, not both");
  if (o.token_ids) {
    if (o.no_bos) throw UsageError::bad_option("--no-bos", "goes with --text (--token-ids are used exactly as given)");
    return std::vector<std::int32_t>(o.token_ids->begin(), o.token_ids->end());
  }
  if (!o.text) throw UsageError::bad_option("--model", "needs the text to run: --text \"...\" or --token-ids 1,403,407");
  if (!vocab) throw InputError::inconsistent(o.model, "the file has no tokenizer (tokenizer.ggml.tokens); pass --token-ids");
  return tokenize(*vocab, *o.text, !o.no_bos);
}

ModelSummary summary_of(const DecoderConfig& c) {
  ModelSummary m;
  m.file = c.file;
  m.architecture = c.architecture;
  m.name = c.name;
  m.num_layers = c.num_layers;
  m.num_heads = c.num_heads;
  m.num_kv_heads = c.num_kv_heads;
  m.d_model = c.d_model;
  m.d_k = c.d_k;
  m.context_length = c.context_length;
  m.rope = c.rope;
  m.rope_scaling = c.rope_scaling;
  m.partial_rotary_factor = c.partial_rotary_factor;
  return m;
}

// Bytes the forward pass holds at once: the embedding table (and the output table), one
// layer's weights in float32, the activations, and one layer's attention weights (h·n²)
// together with its scores.
double forward_bytes(const DecoderModel& model, double n) {
  const DecoderConfig& c = model.config();
  const double activations = 4.0 * n * (6.0 * static_cast<double>(c.d_model) + 3.0 * static_cast<double>(c.d_ff));
  const double attention = 4.0 * 3.0 * c.num_heads * n * n;
  return model.layer_float_bytes() + activations + attention;
}

// The token names of a Hugging Face folder's tokenizer.json (model.vocab and added_tokens), as
// a vocabulary that only names tokens (pieces "" where it has none), for runs by --token-ids,
// where the tokenizer need not be one attnviz can run. Its model is "gpt2" when the file's
// decoder is ByteLevel (GPT-2, LLaMA 3, Qwen 2: the pieces spell bytes), else "". nullopt
// without a tokenizer.json.
std::optional<Vocabulary> hf_token_names(const std::string& folder, long n_vocab) {
  const fs::path path = fs::path(folder) / "tokenizer.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  const nlohmann::json tokenizer = read_json_file(path.string());
  Vocabulary names;
  names.source = path.string();
  const nlohmann::json* decoder = tokenizer.contains("decoder") ? &tokenizer["decoder"] : nullptr;
  if (decoder && decoder->is_object() && decoder->value("type", nlohmann::json()) == "ByteLevel") names.model = "gpt2";
  names.pieces.resize(static_cast<std::size_t>(n_vocab));
  names.types.assign(static_cast<std::size_t>(n_vocab), TokenType::Normal);
  auto put = [&](const std::string& piece, long id, TokenType type) {
    if (id < 0 || id >= n_vocab) return;
    names.pieces[static_cast<std::size_t>(id)] = piece;
    names.types[static_cast<std::size_t>(id)] = type;
  };
  if (tokenizer.contains("model") && tokenizer["model"].contains("vocab") && tokenizer["model"]["vocab"].is_object())
    for (const auto& [piece, id] : tokenizer["model"]["vocab"].items())
      if (id.is_number_integer()) put(piece, id.get<long>(), TokenType::Normal);
  // Added tokens hold their text as it is, not spelt in the byte alphabet.
  if (tokenizer.contains("added_tokens") && tokenizer["added_tokens"].is_array())
    for (const auto& added : tokenizer["added_tokens"])
      if (added.is_object() && added.contains("content") && added.contains("id") && added["content"].is_string() && added["id"].is_number_integer())
        put(added["content"].get<std::string>(), added["id"].get<long>(),
            added.value("special", false) == true ? TokenType::Control : TokenType::UserDefined);
  return names;
}

// config.json's eos_token_id (a token id, or the first of a list; null or absent: none, as
// LlamaConfig allows), for --generate.
std::optional<std::int32_t> hf_eos_token(const std::string& folder) {
  const std::string path = (fs::path(folder) / "config.json").string();
  const nlohmann::json config = read_json_file(path);
  require_object(JsonSource{config, path});
  const auto found = config.find("eos_token_id");
  if (found == config.end() || found->is_null()) return std::nullopt;
  const bool list = found->is_array() && !found->empty();
  const nlohmann::json& eos = list ? found->front() : *found;
  return static_cast<std::int32_t>(read_integer(eos, path, list ? "/eos_token_id/0" : "/eos_token_id", 0, std::numeric_limits<std::int32_t>::max()));
}

// The decoder of --model: a GGUF file (with its vocabulary) or a Hugging Face folder.
struct LoadedDecoder {
  std::unique_ptr<DecoderModel> model;
  std::unique_ptr<Vocabulary> vocab;     // GGUF files with tokenizer.ggml.tokens, tokenizer.json for --text
  std::optional<Vocabulary> names;       // Hugging Face folders run by --token-ids: hf_token_names
};

LoadedDecoder load_decoder(const Options& o) {
  LoadedDecoder loaded;
  if (is_hf_model_folder(o.model)) {
    loaded.model = std::make_unique<DecoderModel>(decoder_from_hf_folder(o.model));
    const fs::path tokenizer = fs::path(o.model) / "tokenizer.json";
    std::error_code ec;
    if (o.text) {
      if (!fs::exists(tokenizer, ec))
        throw UsageError::bad_option("--text", o.model + " has no tokenizer.json to split the text with; pass --token-ids");
      loaded.vocab = std::make_unique<Vocabulary>(vocabulary_from_tokenizer_json(tokenizer.string()));
      loaded.vocab->eos = hf_eos_token(o.model);
    } else {
      loaded.names = hf_token_names(o.model, loaded.model->config().n_vocab);
    }
    return loaded;
  }
  auto file = std::make_shared<const GgufFile>(o.model);
  loaded.model = std::make_unique<DecoderModel>(decoder_from_gguf(file));
  if (file->has("tokenizer.ggml.tokens")) loaded.vocab = std::make_unique<Vocabulary>(vocabulary_from_gguf(*file));
  return loaded;
}

// info.tokens (the pieces) and info.token_texts of info.token_ids from `names` (a tokenizer,
// or hf_token_names): a token it does not name is shown as its id. Without names, every token
// is its id and there are no texts; a tokenizer.json that is not byte-level gives no texts
// either (attnviz does not know its decoder).
void name_tokens(const Vocabulary* names, ModelRunInfo& info) {
  const bool texts = names && !names->model.empty();
  for (const std::int32_t id : info.token_ids) {
    const auto index = static_cast<std::size_t>(id);
    const bool named = names && index < names->pieces.size() && !names->pieces[index].empty();
    info.tokens.push_back(named ? names->pieces[index] : std::to_string(id));
    if (texts) info.token_texts.push_back(named ? token_display_text(*names, id) : std::to_string(id));
  }
}

// The ids must index the model's embedding. Ids given with --token-ids are the user's; ids the
// tokenizer made from --text that the model lacks mean its tokenizer and its weights disagree
// (a tokenizer.json or token list longer than the embedding table), which is the files' fault.
void check_ids_in_model(const Options& o, const Vocabulary* vocab, const std::vector<std::int32_t>& ids, long n_vocab) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int32_t id = ids[i];
    if (id >= 0 && id < n_vocab) continue;
    const std::string range = "(0-" + std::to_string(n_vocab - 1) + ")";
    if (o.token_ids || !vocab)
      throw UsageError::bad_option("--token-ids", "token id " + std::to_string(id) + " is outside the vocabulary " + range);
    const std::string piece = quoted_piece(vocab->pieces[static_cast<std::size_t>(id)]);
    throw InputError::inconsistent(vocabulary_name(*vocab), "--text gives token " + std::to_string(i) + " the id " + std::to_string(id) +
                                                                " (" + piece + "), but the model " + o.model + " has " +
                                                                std::to_string(n_vocab) + " token embeddings " + range +
                                                                ": its tokenizer and its weights disagree");
  }
}

ModelRunInfo run_decoder(const Options& o, const BlockSink& sink, std::vector<std::string>& warnings, double memory_budget,
                         const KeptBytes& kept, ModelProbe* probe) {
  const LoadedDecoder loaded = load_decoder(o);
  const DecoderModel& model = *loaded.model;
  const Vocabulary* vocab = loaded.vocab.get();
  const DecoderConfig& c = model.config();
  if (probe && probe->check) probe->check(summary_of(c));  // before --layers, which the probe's caller chose
  const LayerSelection layers = parse_layer_selection(o.layers, c.num_layers);

  ModelRunInfo info;
  info.model = summary_of(c);
  info.token_ids = input_ids(o, vocab);
  warnings.insert(warnings.end(), c.warnings.begin(), c.warnings.end());
  if (o.text && vocab) warnings.insert(warnings.end(), vocab->warnings.begin(), vocab->warnings.end());
  if (info.token_ids.empty())
    throw UsageError::bad_option("--text", "gives no tokens (an empty text with --no-bos): nothing to run");
  check_ids_in_model(o, vocab, info.token_ids, c.n_vocab);
  info.prompt_length = static_cast<int>(info.token_ids.size());
  const long total = static_cast<long>(info.token_ids.size()) + std::max(o.generate, 0);
  if (c.context_length > 0 && total > c.context_length)
    throw UsageError::bad_option(o.text ? "--text" : "--token-ids",
                                 std::to_string(total) + " tokens" + (o.generate > 0 ? " with the continuation" : "") +
                                     " exceed the model's context length of " + std::to_string(c.context_length));
  const int selected = layers.all() ? c.num_layers : static_cast<int>(layers.count());
  const double sink_bytes = kept ? kept(total, selected, c.num_heads) : 0.0;
  // Greedy decoding holds every layer's keys and values (cache_bytes) beside one layer's
  // weights; they are freed before the forward pass whose layers fill the sink.
  const double cache_bytes = o.generate > 0 ? model.cache_bytes(static_cast<double>(total)) : 0.0;
  const double needed = forward_bytes(model, static_cast<double>(total)) + std::max(sink_bytes, cache_bytes);
  if (needed > memory_budget)
    throw LimitError::memory("the forward pass over " + std::to_string(total) + " tokens" +
                                 (cache_bytes > sink_bytes ? " and the continuation's key/value cache"
                                  : sink_bytes > 0 ? " and what is kept across its layers (the dump's text, the report's values, overview maps, rollout, chosen heads)"
                                                   : ""),
                             needed, memory_budget, "--max-memory MIB");

  if (o.generate > 0) {
    const std::int32_t eos = vocab && vocab->eos ? *vocab->eos : -1;
    model.generate(info.token_ids, o.generate, eos);
  }
  const Vocabulary* names = vocab ? vocab : loaded.names ? &*loaded.names : nullptr;
  name_tokens(names, info);
  if (vocab) {
    const bool starts_with_bos = vocab->bos && !info.token_ids.empty() && info.token_ids.front() == *vocab->bos;
    info.text = decode(*vocab, std::vector<std::int32_t>(info.token_ids.begin() + (starts_with_bos ? 1 : 0), info.token_ids.end()));
    info.generated_text = decode(*vocab, std::vector<std::int32_t>(info.token_ids.begin() + info.prompt_length, info.token_ids.end()));
  }
  ForwardRequest request;
  request.token_ids = info.token_ids;
  // Byte-level pieces ("Ġ", "ä½") are an encoding, not text: their labels are the texts.
  request.tokens = names && pieces_are_byte_level(*names) ? info.token_texts : info.tokens;
  request.layers = layers;
  request.sink = &sink;
  request.logits = o.logits;  // only dump --logits writes them; the output layer is skipped otherwise
  if (probe && probe->block) request.probe = &probe->block;
  info.last_logits = model.forward(request);
  if (probe && probe->want_output) {
    probe->output = model.output_weights();
    if (names) {
      // Byte-level pieces ("Ġthe") are an encoding: the lists show what each reads as, as labels do.
      const bool byte_level = pieces_are_byte_level(*names);
      for (std::size_t id = 0; id < names->pieces.size(); ++id)
        probe->output->pieces.push_back(byte_level ? token_display_text(*names, static_cast<std::int32_t>(id)) : names->pieces[id]);
    }
  }
  return info;
}

// A CTranslate2 encoder-decoder: the source from --source-tokens or --text, the target decoded
// greedily (at most --generate tokens, default 256) or forced by --target-tokens.
ModelRunInfo run_encoder_decoder(const Options& o, const BlockSink& sink, std::vector<std::string>& warnings,
                                 double memory_budget, ModelProbe* probe) {
  if (o.token_ids) throw UsageError::bad_option("--token-ids", "is for decoder-only models; give --source-tokens or --text");
  if (o.no_bos) throw UsageError::bad_option("--no-bos", "is for decoder-only models (the model's config frames the source)");
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
  request.memory_budget_bytes = memory_budget;
  request.probe = probe;
  return run_ct2_model(request, sink, warnings);
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


ModelRunInfo run_model(const Options& options, const BlockSink& sink, std::vector<std::string>& warnings,
                       double memory_budget, const KeptBytes& kept, ModelProbe* probe) {
  refuse_layer_options(options);
  if (is_encoder_decoder_model(options)) return run_encoder_decoder(options, sink, warnings, memory_budget, probe);
  if (options.source_tokens || options.target_tokens)
    throw UsageError::bad_option(options.source_tokens ? "--source-tokens" : "--target-tokens",
                                 "is for encoder-decoder (CTranslate2) models; " + options.model + " is a decoder-only model");
  std::error_code ec;
  if (fs::is_directory(options.model, ec) && !is_hf_model_folder(options.model)) {
    throw InputError::inconsistent(options.model, "is a folder with neither a CTranslate2 model.bin nor a Hugging Face config.json + "
                                                  "model.safetensors (GGUF models are single files)");
  }
  return run_decoder(options, sink, warnings, memory_budget, kept, probe);
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

std::string tokenize_report(const Options& options, std::vector<std::string>& warnings) {
  const Vocabulary vocab = tokenizer_of(options.model);
  warnings.insert(warnings.end(), vocab.warnings.begin(), vocab.warnings.end());
  const std::vector<std::int32_t> ids = tokenize(vocab, options.text.value_or(""), !options.no_bos);
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

}  // namespace attnviz
