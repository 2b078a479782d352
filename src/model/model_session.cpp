#include "model/model_session.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/gguf_decoder.hpp"
#include "model/families/local_rope.hpp"
#include "model/hf_decoder.hpp"
#include "model/tokenizers/hf_end_tokens.hpp"
#include "model/tokenizers/hf_tokenizer.hpp"
#include "model/tokenizers/tokenizer_file.hpp"
#include "model/tokenizers/tokenizer_fit.hpp"

namespace attnviz {

namespace fs = std::filesystem;

std::vector<std::int32_t> decoder_input_ids(const DecoderInput& o, const Vocabulary* vocab) {
  if (o.text && o.token_ids) throw UsageError::bad_option("--text", "give --text or --token-ids, not both");
  if (o.token_ids) {
    if (o.no_bos) throw UsageError::bad_option("--no-bos", "goes with --text (--token-ids are used exactly as given)");
    return std::vector<std::int32_t>(o.token_ids->begin(), o.token_ids->end());
  }
  if (!o.text) throw UsageError::bad_option("--model", "needs the text to run: --text \"...\" or --token-ids 1,403,407");
  if (!vocab) throw InputError::inconsistent(o.model, "the file has no tokenizer (tokenizer.ggml.tokens); pass --token-ids");
  return tokenize(*vocab, *o.text, !o.no_bos, o.parse_special);
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
  if (c.block.positions != PositionKind::Rope) m.rope.reset();
  m.sliding_window = c.sliding_window;
  m.attention_scale = c.attention_scale;
  m.attention_softcap = c.attention_softcap;
  m.final_softcap = c.final_softcap;
  if (c.block.ffn != FeedForwardKind::SwiGlu) m.activation = gelu_name(c.gelu);
  m.no_rope_layers = c.no_rope_layers;
  m.embedding_multiplier = c.embedding_multiplier;
  m.residual_multiplier = c.residual_multiplier;
  m.logit_divisor = c.logit_divisor;
  if (c.local_rope) {
    m.local_rope_theta = c.local_rope->theta;
    m.local_rope_scaling = rope_scaling_text(*c.local_rope);
  }
  return m;
}

double decoder_forward_bytes(const DecoderModel& model, double n, int held_heads) {
  const DecoderConfig& c = model.config();
  const double activations = 4.0 * n * (6.0 * static_cast<double>(c.d_model) + 3.0 * static_cast<double>(c.d_ff));
  const double attention = 4.0 * 3.0 * (held_heads > 0 ? held_heads : c.num_heads) * n * n;
  return model.layer_float_bytes() + activations + attention;
}

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

LoadedDecoder load_decoder_model(const DecoderInput& o) {
  LoadedDecoder loaded;
  if (is_hf_model_folder(o.model)) {
    loaded.model = std::make_unique<DecoderModel>(decoder_from_hf_folder(o.model));
    const fs::path tokenizer = fs::path(o.model) / "tokenizer.json";
    std::error_code ec;
    if (!o.tokenizer.empty()) {
      loaded.vocab = std::make_unique<Vocabulary>(vocabulary_from_file(o.tokenizer));
      require_tokenizer_fits(*loaded.vocab, loaded.model->config().n_vocab, o.model);
    } else if (o.text) {
      if (!fs::exists(tokenizer, ec))
        throw UsageError::bad_option("--text", o.model + " has no tokenizer.json to split the text with; give one with "
                                               "--tokenizer FILE (a tokenizer.json, or a GGUF of the same model), or pass --token-ids");
      loaded.vocab = std::make_unique<Vocabulary>(vocabulary_from_tokenizer_json(tokenizer.string()));
      require_tokenizer_fits(*loaded.vocab, loaded.model->config().n_vocab, o.model);
    } else {
      loaded.names = hf_token_names(o.model, loaded.model->config().n_vocab);
    }
    loaded.end_tokens = hf_end_tokens(o.model);
    return loaded;
  }
  auto file = std::make_shared<const GgufFile>(o.model);
  loaded.model = std::make_unique<DecoderModel>(decoder_from_gguf(file));
  if (!o.tokenizer.empty()) {
    loaded.vocab = std::make_unique<Vocabulary>(vocabulary_from_file(o.tokenizer));
    require_tokenizer_fits(*loaded.vocab, loaded.model->config().n_vocab, o.model);
    loaded.end_tokens = end_tokens(*loaded.vocab);
  } else if (file->has("tokenizer.ggml.tokens")) {
    loaded.vocab = std::make_unique<Vocabulary>(vocabulary_from_gguf(*file));
    loaded.end_tokens = end_tokens(*loaded.vocab);
  }
  return loaded;
}

void name_tokens(const Vocabulary* names, ModelRunInfo& info) {
  const bool texts = names && !names->model.empty();
  for (const std::int32_t id : info.token_ids) {
    const auto index = static_cast<std::size_t>(id);
    const bool named = names && index < names->pieces.size() && !names->pieces[index].empty();
    const std::string unnamed = names ? unnamed_token_label(id) : std::to_string(id);
    info.tokens.push_back(named ? names->pieces[index] : unnamed);
    if (texts) info.token_texts.push_back(named ? token_display_text(*names, id) : unnamed);
  }
}

void check_ids_in_model(const DecoderInput& o, const Vocabulary* vocab, const std::vector<std::int32_t>& ids, long n_vocab) {
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

std::string decoder_token_label(const Vocabulary* names, std::int32_t id) {
  const auto index = static_cast<std::size_t>(id);
  if (!names || index >= names->pieces.size() || names->pieces[index].empty()) return std::to_string(id);
  return pieces_are_byte_level(*names) ? token_display_text(*names, id) : names->pieces[index];
}

std::string keep_last_tokens(std::vector<std::int32_t>& ids, long max_tokens, bool keep_first, bool keep_last,
                             const std::string& what) {
  const std::size_t n = ids.size();
  if (max_tokens <= 0 || n <= static_cast<std::size_t>(max_tokens)) return "";
  const std::size_t pinned = (keep_first ? 1 : 0) + (keep_last ? 1 : 0);
  if (static_cast<std::size_t>(max_tokens) <= pinned)
    throw UsageError::bad_option("--max-tokens", std::to_string(max_tokens) + " leaves no token of the text beside the " +
                                                     (pinned == 2 ? "first and last special tokens" : "BOS token") + " kept");
  const std::size_t middle = static_cast<std::size_t>(max_tokens) - pinned;
  std::vector<std::int32_t> kept;
  if (keep_first) kept.push_back(ids.front());
  const std::size_t end = keep_last ? n - 1 : n;
  kept.insert(kept.end(), ids.begin() + static_cast<std::ptrdiff_t>(end - middle), ids.begin() + static_cast<std::ptrdiff_t>(end));
  if (keep_last) kept.push_back(ids.back());
  ids = std::move(kept);
  return what + ": " + std::to_string(n) + " tokens, cut to the last " + std::to_string(max_tokens) + " by --max-tokens" +
         (keep_first ? " (the first token, " + std::string(keep_last ? "and the last, kept" : "BOS, kept") + ")" : "");
}

std::vector<ChatTurnSpan> chat_turn_spans(const DecoderInput& o, const Vocabulary& vocab,
                                          const std::vector<std::int32_t>& ids, std::string& note) {
  std::vector<ChatTurnSpan> turns;
  int first = 0;
  for (std::size_t k = 0; k < o.chat_turn_ends.size() && o.text; ++k) {
    const auto& [role, text_end] = o.chat_turn_ends[k];
    const std::vector<std::int32_t> through = tokenize(vocab, o.text->substr(0, text_end), !o.no_bos, o.parse_special);
    const int end = static_cast<int>(through.size());
    if (through.size() > ids.size() || !std::equal(through.begin(), through.end(), ids.begin()) || end < first) {
      note = "the turns are not marked: the tokens of the text through turn " + std::to_string(k) + " (" + role +
             ") do not begin the prompt's tokens";
      return {};
    }
    turns.push_back(ChatTurnSpan{role, first, end});
    first = end;
  }
  return turns;
}

ModelRunInfo start_decoder_run(const LoadedDecoder& loaded, const DecoderInput& o, int generate,
                               std::vector<std::string>& warnings) {
  const Vocabulary* vocab = loaded.vocab.get();
  const DecoderConfig& c = loaded.model->config();
  ModelRunInfo info;
  info.model = summary_of(c);
  info.model.matmul = loaded.model->matmul();
  info.token_ids = decoder_input_ids(o, vocab);
  warnings.insert(warnings.end(), c.warnings.begin(), c.warnings.end());
  if (o.text && vocab) warnings.insert(warnings.end(), vocab->warnings.begin(), vocab->warnings.end());
  if (info.token_ids.empty())
    throw UsageError::bad_option("--text", "gives no tokens (an empty text with --no-bos): nothing to run");
  // The BOS (or template's first token) the tokenizer put first stays first when --max-tokens cuts.
  const bool bos_first = o.text && !o.no_bos && vocab &&
                         ((vocab->add_bos && vocab->bos && info.token_ids.front() == *vocab->bos) ||
                          (!vocab->hf.prefix.empty() && info.token_ids.front() == vocab->hf.prefix.front()));
  info.chat_turns_note = o.chat_turns_note;
  if (vocab && !o.chat_turn_ends.empty()) info.chat_turns = chat_turn_spans(o, *vocab, info.token_ids, info.chat_turns_note);
  if (const std::string cut = keep_last_tokens(info.token_ids, o.max_tokens, bos_first, false, o.text ? "--text" : "--token-ids");
      !cut.empty()) {
    warnings.push_back(cut);
    if (!info.chat_turns.empty()) info.chat_turns_note = "the turns are not marked: --max-tokens cut the conversation";
    info.chat_turns.clear();
  }
  check_ids_in_model(o, vocab, info.token_ids, c.n_vocab);
  if (o.text && vocab)
    if (const std::string unread = unread_text_warning(*vocab, info.token_ids, "--text"); !unread.empty()) warnings.push_back(unread);
  info.prompt_length = static_cast<int>(info.token_ids.size());
  const long total = static_cast<long>(info.token_ids.size()) + std::max(generate, 0);
  if (c.context_length > 0 && total > c.context_length)
    throw UsageError::bad_option(o.text ? "--text" : "--token-ids",
                                 std::to_string(total) + " tokens" + (generate > 0 ? " with the continuation" : "") +
                                     " exceed the model's context length of " + std::to_string(c.context_length) +
                                     "; --max-tokens " + std::to_string(std::max(1L, c.context_length - std::max(generate, 0))) +
                                     " keeps the last tokens that fit");
  return info;
}

void describe_tokens(const Vocabulary* names, const Vocabulary* vocab, ModelRunInfo& info) {
  name_tokens(names, info);
  if (!vocab) return;
  const bool starts_with_bos = vocab->bos && !info.token_ids.empty() && info.token_ids.front() == *vocab->bos;
  info.text = decode(*vocab, std::vector<std::int32_t>(info.token_ids.begin() + (starts_with_bos ? 1 : 0), info.token_ids.end()));
  info.generated_text = decode(*vocab, std::vector<std::int32_t>(info.token_ids.begin() + info.prompt_length, info.token_ids.end()));
}

ModelRunInfo run_decoder_request(const LoadedDecoder& loaded, const DecoderRunRequest& r, const BlockSink& sink,
                                 std::vector<std::string>& warnings, const KeptBytes& kept, ModelProbe* probe,
                                 const HeadSink* heads) {
  const DecoderInput& o = r.input;
  const DecoderModel& model = *loaded.model;
  const Vocabulary* vocab = loaded.vocab.get();
  const DecoderConfig& c = model.config();
  if (probe && probe->check) probe->check(summary_of(c));  // before --layers, which the probe's caller chose
  const LayerSelection layers = parse_layer_selection(r.layers, c.num_layers);
  if (r.alti && c.block.post_attention_norm)
    throw UsageError::bad_option("--measure", "alti: " + o.model + " (" + c.architecture + ") normalises each attention output "
                                 "before it joins the residual stream (a post-attention norm), so the block's update is no "
                                 "sum of per-token terms and ALTI does not apply; use --measure norms");

  ModelRunInfo info = start_decoder_run(loaded, o, r.generate, warnings);
  const long total = static_cast<long>(info.token_ids.size()) + std::max(r.generate, 0);
  const int selected = layers.all() ? c.num_layers : static_cast<int>(layers.count());
  const double sink_bytes = kept ? kept(total, selected, c.num_heads) : 0.0;
  // Greedy decoding holds every layer's keys and values (cache_bytes) beside one layer's
  // weights; they are freed before the forward pass whose layers fill the sink.
  const double cache_bytes = r.generate > 0 ? model.cache_bytes(static_cast<double>(total)) : 0.0;
  // --measure: one layer's f^h(x_j) (h × n × d_model float32) with its float64 copies, and the
  // norms (h·n² + n²) or ALTI's map beside the weights.
  const double n = static_cast<double>(total);
  const double measure_bytes =
      r.value_vectors
          ? 3.0 * 4.0 * c.num_heads * n * static_cast<double>(c.d_model) + 4.0 * (c.num_heads + 1.0) * n * n
          : 0.0;
  // Head by head (not with --measure, whose norms read a whole layer): only one head.
  const HeadSink* head_sink = heads != nullptr && !r.value_vectors ? heads : nullptr;
  const double needed = decoder_forward_bytes(model, n, head_sink != nullptr ? 1 : c.num_heads) + measure_bytes +
                        std::max(sink_bytes, cache_bytes);
  if (needed > r.memory_budget)
    throw LimitError::memory("the forward pass over " + std::to_string(total) + " tokens" +
                                 (cache_bytes > sink_bytes ? " and the continuation's key/value cache"
                                  : sink_bytes > 0 ? " and what is kept across its layers (the dump's text, the report's values, overview maps, rollout, chosen heads)"
                                                   : ""),
                             needed, r.memory_budget, "--max-memory MIB");

  info.model.end_tokens = loaded.end_tokens;
  if (r.generate > 0) model.generate(info.token_ids, r.generate, loaded.end_tokens);
  const Vocabulary* names = vocab ? vocab : loaded.names ? &*loaded.names : nullptr;
  describe_tokens(names, vocab, info);
  ForwardRequest request;
  request.token_ids = info.token_ids;
  // Byte-level pieces ("Ġ", "ä½") are an encoding, not text: their labels are the texts.
  request.tokens = names && pieces_are_byte_level(*names) ? info.token_texts : info.tokens;
  request.layers = layers;
  // Pictures mark where the prompt ends (issue 23): each block says how long it was.
  const BlockSink marked = [&sink, &info](AttentionBlock&& block) {
    if (info.prompt_length < static_cast<int>(info.token_ids.size())) block.record.prompt_length = info.prompt_length;
    sink(std::move(block));
  };
  request.sink = &marked;
  AttentionBlock marked_shell;  // the block each head comes with, its prompt marked as above
  const HeadSink marked_heads = [&](const AttentionBlock& block, int head, Matrix& weights) {
    if (head == 0) {
      marked_shell = block;
      if (info.prompt_length < static_cast<int>(info.token_ids.size())) marked_shell.record.prompt_length = info.prompt_length;
    }
    (*head_sink)(marked_shell, head, weights);
  };
  if (head_sink != nullptr) request.head_sink = &marked_heads;
  request.logits = r.logits;  // only dump --logits writes them; the output layer is skipped otherwise
  request.wants = AttentionWants{r.scores, r.outputs, r.value_vectors};
  request.activations = r.activations;
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

}  // namespace attnviz
