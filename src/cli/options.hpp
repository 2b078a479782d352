// Everything a run can be asked to do, as a plain struct: filled by command_line.cpp from
// CLI11, or directly by tests. No CLI11 here.
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace attnviz {

/// The subcommands.
enum class Command { Dump, Heatmaps, Render, Compare, Tokenize, Explain };

/// A head of a whole model as compare --heads names it: L<layer>H<head>, both from 0, and for an
/// encoder-decoder model its block ("enc.L0H3": encoder self-attention, "dec.L0H3": decoder
/// self-attention, "cross.L0H3": decoder cross-attention; see model_run.hpp block_names).
struct LayerHead {
  int layer = 0, head = 0;
  std::string block;  ///< "" (plain L0H3), "enc", "dec" or "cross"
  friend bool operator==(const LayerHead&, const LayerHead&) = default;
};

/// Options of every subcommand; each field's meaning is its --help text (command_line.cpp).
struct Options {
  Command command = Command::Dump;

  // Inputs.
  std::string sentence;  ///< SENTENCE.json (or, for render/compare, an attention JSON)
  std::string weights;   ///< WEIGHTS.json; empty = the sentence file (compare: a second attention JSON)
  std::string source;    ///< --source: keys/values for cross-attention
  std::string output;    ///< -o: a file (dump, compare) or a folder (heatmaps, render); dump: "-" = stdout

  // Whole models (--model replaces SENTENCE/WEIGHTS).
  std::string model;                 ///< --model FILE.gguf, or a folder (CTranslate2, safetensors)
  std::optional<std::string> text;   ///< --text (UTF-8)
  std::optional<std::vector<int>> token_ids;  ///< --token-ids, used as given
  bool no_bos = false;
  int generate = -1;                 ///< --generate N; -1 = not given
  std::string layers = "all";        ///< --layers all|2|0,3|1-4
  bool logits = false;               ///< dump: last_logits
  std::optional<std::string> source_tokens;  ///< CTranslate2: space-separated source tokens
  std::optional<std::string> target_tokens;  ///< CTranslate2: forced target tokens
  std::vector<LayerHead> layer_heads;  ///< compare --heads L0H3,L4H1 (enc.L0H3, dec.L0H3, cross.L0H3)
  bool rollout = false;              ///< --rollout: attention rollout (dump field, rollout.png)
  double rollout_residual = 0.5;     ///< --rollout-residual: α in Â = (1 − α)·mean_h(A) + α·I
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

  // Pictures.
  std::string cmap;                  ///< "" = viridis (compare's differences: rdbu)
  std::string scale = "fixed";      ///< fixed | head | shared
  int cols = 0;                      ///< 0 = near-square grid
  int max_size_px = 4096;
  bool annotate = false;
  std::vector<std::string> fonts;    ///< empty = the default font
  /// Where characters no label font has are looked for: unset = the installed fonts (fontconfig);
  /// set = only these files (no flag: tests pin their fonts so, whatever the machine has).
  std::optional<std::vector<std::string>> fallback_fonts;
  std::vector<std::string> formats = {"png"};  ///< --format: any of png, svg, html, each once

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

  // Resources.
  int threads = 0;                   ///< 0 = all cores
  bool profile = false;
  double max_memory_mib = 0;         ///< 0 = the default budget (half of physical memory)
};

}  // namespace attnviz
