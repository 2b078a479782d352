// The input contract (docs/input-files.md): sentence files and weights files, parsed and
// validated into structures whose invariants hold, so attention/ and render/ never see bad
// shapes. Does not compute attention or decide masks (attention/ and cli/ do).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "attention/rope.hpp"
#include "core/types.hpp"
#include "io/json_file.hpp"

namespace attnviz {

/// A sentence file: n tokens and their embeddings (the attention layer's input).
struct Sentence {
  std::string file;
  Tokens tokens;                             ///< n labels, UTF-8 as given
  Matrix embeddings;                         ///< [n, d_model]
  std::vector<std::uint8_t> attention_mask;  ///< n values, 1 = real, 0 = padding; empty = all real
  std::vector<long long> positions;          ///< n positions (explicit or 0 … n−1)
  std::string model;                         ///< optional display name
  std::optional<int> layer;                  ///< optional layer index (from 0)
};

/// A weights file: one attention layer, plus optional naming, mask and RoPE settings.
struct WeightsFile {
  std::string file;
  AttentionLayer layer;
  std::optional<RopeSettings> rope;  ///< the file's "rope" block, if any (linear_factor from its scaling)
  /// The file's RoPE linear scaling factor (1 = none) and where it was given ("/rope/scaling",
  /// "/rope_scaling"; "" = not given): it applies to RoPE whether the file or --rope turns it on.
  double rope_linear_factor = 1.0;
  std::string rope_scaling_pointer;
  std::optional<bool> causal;        ///< the file's "causal", if given (flags override it)
  std::string model;                 ///< optional display name
  std::optional<int> layer_index;    ///< optional layer index (from 0)
  std::string attention;             ///< "self", "cross" (keys from --source) or "" (not declared)
};

/// Which files make up one run. weights empty = the sentence file; source empty = self-attention.
struct InputPaths {
  std::string sentence;
  std::string weights;
  std::string source;
};

/// Everything one attention run needs, mutually consistent: W_Q rows = queries' d_model,
/// W_K/W_V rows = keys' d_model, and so on.
struct InputBundle {
  Sentence queries;
  std::optional<Sentence> source;  ///< keys/values for cross-attention
  WeightsFile weights;

  /// The sentence that supplies keys and values (source for cross-attention, else queries).
  const Sentence& keys() const { return source ? *source : queries; }

  /// One line per file that has members attnviz does not read (docs/input-files.md: they are
  /// named, never dropped in silence), for the CLI to print as warnings.
  std::vector<std::string> warnings;
};

/// Loads and validates every file of a run, reading each distinct file once (files already in
/// `texts`, e.g. a pipe the caller has looked into, are not read again).
/// Throws InputError naming the file, the JSON pointer, the expected and the found value (also
/// for a member that would change the maths but that attnviz does not implement, e.g.
/// "sliding_window", a RoPE scaling other than linear, a key inside the rope block it does not
/// know), or LimitError when a file is too large to parse within `memory_budget_bytes` (0 = no limit).
InputBundle load_inputs(const InputPaths& paths, double memory_budget_bytes = 0, InputTexts texts = {});

}  // namespace attnviz
