// A decoder-only model's run prepared below the command line (issue 25: library work a second
// front end needs): loading a GGUF file or Hugging Face folder with its tokenizer, the input ids
// from a text or given ids, the checks that the ids fit the model, the token labels, the model's
// summary and the memory its forward pass holds. Takes a plain DecoderInput, not the CLI's
// Options (cli/model_job translates); messages name the CLI's flags, as the CLI shows them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/block_probe.hpp"
#include "model/decoder_model.hpp"
#include "model/model_run.hpp"
#include "model/tokenizers/vocabulary.hpp"

namespace attnviz {

/// What a decoder run reads: the model (a GGUF file or a Hugging Face folder) and its input,
/// a text (--text, BOS added unless no_bos, special tokens written in it read as such unless
/// parse_special is false: tokenize()) or ids used as given (--token-ids).
struct DecoderInput {
  std::string model;
  std::optional<std::string> text;
  std::optional<std::vector<int>> token_ids;
  bool no_bos = false;
  bool parse_special = true;  ///< false: --no-parse-special
  std::string tokenizer;      ///< --tokenizer FILE: a tokenizer.json or GGUF replacing the model's own ("" = its own)
  long max_tokens = 0;        ///< --max-tokens N: keep the last N tokens (BOS kept first); 0 = all
  /// A chat conversation's turns in `text`: each role and the byte offset where its rendering ends.
  std::vector<std::pair<std::string, std::size_t>> chat_turn_ends = {};
  std::string chat_turns_note = {};  ///< why chat_turn_ends is empty for a conversation ("" otherwise)
};

/// The decoder of a DecoderInput: the model, its tokenizer, the token names of a folder run by ids.
struct LoadedDecoder {
  std::unique_ptr<DecoderModel> model;
  std::unique_ptr<Vocabulary> vocab;     ///< GGUF files with tokenizer.ggml.tokens, tokenizer.json for --text
  std::optional<Vocabulary> names;       ///< Hugging Face folders run by --token-ids: hf_token_names
  std::vector<std::int32_t> end_tokens;  ///< what --generate stops at, with --text or --token-ids
};

/// Loads input.model: a Hugging Face folder (with its tokenizer.json when input.text is given,
/// checked against the model's embeddings by require_tokenizer_fits, whose warning joins the
/// vocabulary's; else its token names) or a GGUF file (with its vocabulary when it has one).
/// Throws UsageError naming --text for a folder without tokenizer.json, InputError as the readers.
LoadedDecoder load_decoder_model(const DecoderInput& input);

/// The ids to run: input.token_ids as given, or input.text tokenized by `vocab` (BOS unless
/// no_bos). Throws UsageError for both or neither given, --no-bos with ids; InputError when a
/// text meets a model without a tokenizer.
std::vector<std::int32_t> decoder_input_ids(const DecoderInput& input, const Vocabulary* vocab);

/// The ids must index the model's n_vocab embeddings. Throws UsageError naming --token-ids for
/// ids the user gave; InputError naming the tokenizer for ids it made from the text (its
/// tokenizer and its weights disagree).
void check_ids_in_model(const DecoderInput& input, const Vocabulary* vocab, const std::vector<std::int32_t>& ids, long n_vocab);

/// --max-tokens: cuts `ids` to its last `max_tokens` ids, the first id (BOS, CLS) kept in front
/// with `keep_first` and the last (SEP) kept at the end with `keep_last`; `what` names the input
/// ("--text"). Returns a warning saying what was cut, or "" when nothing was (max_tokens ≤ 0 or
/// not exceeded). Throws UsageError when max_tokens leaves no room beside the kept ids.
std::string keep_last_tokens(std::vector<std::int32_t>& ids, long max_tokens, bool keep_first, bool keep_last,
                             const std::string& what);

/// The tokens each turn of input.chat_turn_ends spans among `ids` (input.text's ids, before any
/// cut): turn k ends at the count of the ids of the text through its end, which must begin `ids`
/// (they do where turns end at special tokens, as chat templates make them). Empty, with `note`
/// saying why, when they do not.
std::vector<ChatTurnSpan> chat_turn_spans(const DecoderInput& input, const Vocabulary& vocab,
                                          const std::vector<std::int32_t>& ids, std::string& note);

/// The start every decoder run shares (run_decoder_request, and the commands that run a loaded
/// decoder themselves): info.model from the model (summary and matmul), info.token_ids from
/// `input` (decoder_input_ids), the model's and, for a text, the tokenizer's warnings appended to
/// `warnings`, info.prompt_length, and a conversation's info.chat_turns (chat_turn_spans). Throws UsageError for no tokens and for more than the
/// context length with `generate` tokens to come (≤ 0: none), check_ids_in_model's errors for
/// ids the model lacks.
ModelRunInfo start_decoder_run(const LoadedDecoder& loaded, const DecoderInput& input, int generate,
                               std::vector<std::string>& warnings);

/// info.tokens and info.token_texts (name_tokens), and with a tokenizer the decoded info.text
/// (without a leading BOS) and info.generated_text (the tokens past info.prompt_length).
void describe_tokens(const Vocabulary* names, const Vocabulary* vocab, ModelRunInfo& info);

/// The model dump's `model` block of a decoder's settings.
ModelSummary summary_of(const DecoderConfig& c);

/// Bytes a decoder's forward pass over `tokens` tokens holds at once: the embedding table (and
/// the output table), one layer's float32 weights, the activations, and one layer's attention
/// weights (h·n²) together with its scores; with `held_heads` > 0, only that many heads' weights
/// (a pass that hands them on head by head holds only the heads in flight).
double decoder_forward_bytes(const DecoderModel& model, double tokens, int held_heads = 0);

/// The token names of a Hugging Face folder's tokenizer.json (model.vocab and added_tokens), as
/// a vocabulary that only names tokens (pieces "" where it has none), for runs by --token-ids,
/// where the tokenizer need not be one attnviz can run. Its model is "gpt2" when the file's
/// decoder is ByteLevel (GPT-2, LLaMA 3, Qwen 2: the pieces spell bytes), else "". nullopt
/// without a tokenizer.json.
std::optional<Vocabulary> hf_token_names(const std::string& folder, long n_vocab);

/// info.tokens (the pieces) and info.token_texts of info.token_ids from `names` (a tokenizer,
/// or hf_token_names): a token it does not name is shown as its id. Without names, every token
/// is its id and there are no texts; a tokenizer.json that is not byte-level gives no texts
/// either (attnviz does not know its decoder).
void name_tokens(const Vocabulary* names, ModelRunInfo& info);

/// How a decoder's pictures label token `id`: its text for byte-level vocabularies, else its
/// piece, or the id when `names` is null or names it not.
std::string decoder_token_label(const Vocabulary* names, std::int32_t id);


/// What the library is asked to compute in one decoder run (what heatmaps, dump and compare ask of a
/// --model): the input, which layers to capture (--layers syntax: "all", "2", "0,3", "1-4"), how
/// many tokens to generate greedily first (≤ 0: none), the last logits, scores and head outputs,
/// the value vectors that --measure norms|alti read, and the memory budget in bytes.
struct DecoderRunRequest {
  DecoderInput input;
  std::string layers = "all";
  int generate = 0;
  bool logits = false, scores = false, outputs = false;
  bool value_vectors = false;  ///< hand each block's f^h(x_j), residual and b_O on (analysis/value_norms, alti)
  bool alti = false;           ///< ALTI will be computed: refused for post-attention-norm families
  ActivationWants activations; ///< --activations: each selected block's residual stream and sublayer outputs
  double memory_budget = 0;    ///< bytes; the run is refused (LimitError) if its estimate exceeds it
};

/// Bytes a sink keeps across blocks (an overview's maps, a rollout's R, the dump's text), estimated
/// from the run's shape before the forward pass: tokens, selected layers, heads per layer.
using KeptBytes = std::function<double(long tokens, int layers, int heads)>;

/// One decoder run of `loaded`: the input's ids checked against the model, the memory estimate
/// (forward pass, what `kept` says the sink keeps, the key/value cache of greedy generation, the
/// value vectors) checked against r.memory_budget before any work (LimitError), generation, then
/// one forward pass whose selected blocks go to `sink` (or head by head to `heads`, when given and
/// no value vectors are asked for), each marked with the prompt's length when tokens were
/// generated. `probe`, when given, sees the model's shape, the blocks' inputs and the output
/// weights. Throws UsageError for input the request cannot run (empty, past the context, ALTI on
/// a post-norm family), InputError for ids the model lacks.
ModelRunInfo run_decoder_request(const LoadedDecoder& loaded, const DecoderRunRequest& r, const BlockSink& sink,
                                 std::vector<std::string>& warnings, const KeptBytes& kept = {},
                                 ModelProbe* probe = nullptr, const HeadSink* heads = nullptr);

}  // namespace attnviz
