// Everything a run can be asked to do, as a plain struct: filled by command_line.cpp from
// CLI11, or directly by tests. No CLI11 here.
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "render/picture_settings.hpp"

namespace attnviz {

/// The subcommands.
enum class Command { Dump, Heatmaps, Render, Compare, Tokenize, Attribute, Census, Explain, Serve };

/// A head of a whole model as compare --heads names it: L<layer>H<head>, both from 0, and for an
/// encoder-decoder model its block ("enc.L0H3": encoder self-attention, "dec.L0H3": decoder
/// self-attention, "cross.L0H3": decoder cross-attention; see model_run.hpp block_names).
struct LayerHead {
  int layer = 0, head = 0;
  std::string block;  ///< "" (plain L0H3), "enc", "dec" or "cross"
  friend bool operator==(const LayerHead&, const LayerHead&) = default;
};

/// Options of every subcommand; each field's meaning is its --help text (command_line.cpp). The
/// picture options (with --measure, --rollout, --flow and --threads) are ModelPictureSettings', which
/// render/'s figures take.
struct Options : ModelPictureSettings {
  Command command = Command::Dump;

  // Inputs.
  std::string sentence;  ///< SENTENCE.json (or, for render/compare, an attention JSON)
  std::string weights;   ///< WEIGHTS.json; empty = the sentence file (compare: a second attention JSON)
  std::string source;    ///< --source: keys/values for cross-attention
  std::string output;    ///< -o: a file (dump, compare) or a folder (heatmaps, render); dump: "-" = stdout

  // Whole models (--model replaces SENTENCE/WEIGHTS).
  std::string model;                 ///< --model FILE.gguf, or a folder (CTranslate2, safetensors)
  std::optional<std::string> text;   ///< --text / -p (UTF-8); "-" = standard input (text_input.hpp)
  std::optional<std::string> text_file;  ///< -f / --text-file FILE ("-" = standard input), read into text
  std::string tokenizer;             ///< --tokenizer FILE: a tokenizer.json or a GGUF whose vocabulary to use
  std::optional<std::vector<int>> token_ids;  ///< --token-ids, used as given
  /// --chat TEXT (a user turn) and --chat-role ROLE=TEXT, in the order given: rendered through the
  /// model's chat template into `text` (cli/chat_prompt).
  std::vector<std::pair<std::string, std::string>> chat_turns;
  std::string messages_file;          ///< --messages FILE.json: OpenAI-style [{"role", "content"}, ...]
  bool add_generation_prompt = true;  ///< --add-generation-prompt / --no-add-generation-prompt
  std::string chat_prompt;            ///< what the chat template rendered ("" without --chat/--messages)
  std::string host = "127.0.0.1";     ///< serve --host
  int port = 8765;                    ///< serve --port (0: any free port, printed)
  int queue = 8;                      ///< serve --queue: runs that may wait while one runs
  /// Each turn of the conversation in `text`: its role and the byte offset where its rendering
  /// ends (cli/chat_prompt); empty without a conversation or when they cannot be placed, and then
  /// chat_turns_note says why.
  std::vector<std::pair<std::string, std::size_t>> chat_turn_ends;
  std::string chat_turns_note;
  std::optional<std::vector<int>> token_types;  ///< --token-types: BERT's segment per token (default all 0)
  bool no_bos = false;
  bool no_parse_special = false;     ///< --no-parse-special: special tokens' text in --text read as plain text
  bool exact_matmul = false;         ///< --exact-matmul: GGUF weights decoded to float32, no activation rounding
  int generate = -1;                 ///< --generate N; -1 = not given
  std::string layers = "all";        ///< --layers all|2|0,3|1-4
  bool logits = false;               ///< dump: last_logits
  std::optional<std::string> source_tokens;  ///< CTranslate2: space-separated source tokens
  std::optional<std::string> target_tokens;  ///< CTranslate2: forced target tokens
  std::vector<LayerHead> layer_heads;  ///< compare --heads L0H3,L4H1 (enc.L0H3, dec.L0H3, cross.L0H3)
  std::string census;                ///< compare --model --census FILE.csv|FILE.json

  // Attention.
  bool causal = false;     ///< --causal: causal mask, whatever the weights file says
  bool no_causal = false;  ///< --no-causal: no causal mask, whatever the weights file says
  std::string positional = "none";  ///< "none" or "sinusoidal"
  std::string rope;                 ///< "" = as the weights file says, "none", "interleaved", "half"
  std::optional<double> rope_theta;
  std::optional<long> rope_dim;
  bool scores = false;
  bool outputs = false;

  // Dump.
  std::string dump_format;               ///< --format json|safetensors; "" = by -o's extension (.safetensors, else JSON)
  std::vector<std::string> activations;  ///< --activations: hook points (kActivationNames), in the order given

  // Pictures (besides PictureSettings' cmap, scale, cols, max_size_px, annotate, fonts, formats).
  bool exclude_sink = false;         ///< --exclude-sink: ranges without key 0 and queries 0–3 (head|layer|shared)
  std::string rows = "all";          ///< --rows all | generated (with --generate: the generated tokens' rows)

  // Compare.
  std::vector<int> heads;            ///< empty = all heads
  bool average = false;
  std::string stats;                 ///< --stats FILE.json or FILE.csv

  // Explain.
  std::string explain_head;          ///< --head: H or H3 (one layer), L2H5 / cross.L2H5 (a model)
  std::optional<long> query;         ///< --query: the query explained; unset = the last

  // Tokenize.
  bool table = false;  ///< a table with a header row instead of one JSON document (the command
                       ///< line's choice when stdout is a terminal and --json is not given)

  // Attribute (issue 20 §3).
  std::optional<std::string> target;      ///< --target: the token as text, tokenized exactly as written
  std::optional<long long> target_id;     ///< --target-id
  std::optional<long long> position;      ///< --position: 0-based, BOS at 0; unset = the last

  // Census over a corpus (census --corpus, issue 22).
  std::string corpus;                ///< --corpus FILE: .jsonl or text, one text per line
  std::string corpus_format;         ///< --corpus-format text|jsonl; "" = by the name
  bool skip_bad_lines = false;       ///< --skip-bad-lines: skip and count bad lines
  long limit = -1;                   ///< --limit N: the first N texts; -1 = all
  long max_tokens = 0;               ///< --max-tokens N: truncate each text; 0 = the model's context
  bool no_truncate = false;          ///< --no-truncate: refuse a longer text instead
  double sink_epsilon = 0.3;         ///< --sink-epsilon: ε of sink_rate (Gu et al. 2025)
  int shard_index = 0, shard_count = 1;  ///< --shard K/N: texts K, K+N, K+2N, …
  std::vector<std::string> merge;    ///< --merge DIR…: census outputs to combine
  bool resume = false;               ///< --resume: continue DIR/texts.jsonl
  std::string progress = "none";     ///< "bar" (a terminal), "lines" (one line every 10 s) or "none" (--quiet)

  // Resources.
  bool profile = false;
  double max_memory_mib = 0;         ///< 0 = the default budget (half of physical memory)
};

}  // namespace attnviz
