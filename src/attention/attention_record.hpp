// AttentionRecord: one layer's per-head attention for one input, with everything needed to
// draw or compare it. `dump` writes it, `render` and `compare` read it back, and `heatmaps`
// builds it in memory: one structure for every path. No JSON here (record_json does that).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/rope.hpp"
#include "core/types.hpp"

namespace attnviz {

/// Per-head attention weights with their tokens and provenance. Invariants (established by
/// the producer and checked by read_record): weights has num_heads matrices of
/// [query_tokens.size(), key_tokens.size()], entries in [0, 1], rows summing to 1 except
/// fully masked rows (all zero).
struct AttentionRecord {
  std::string mode = "self";   ///< "self" or "cross"
  std::string model;           ///< display name, may be empty
  std::optional<int> layer;    ///< layer index from 0, if known
  Tokens query_tokens;         ///< row labels
  Tokens key_tokens;           ///< column labels
  int num_heads = 0;
  int num_kv_heads = 0;        ///< 0 when unknown (a record from another tool)
  long d_model = 0, d_k = 0, d_v = 0;  ///< 0 when unknown
  double scale = 0;            ///< logit scale used; 0 when unknown
  bool causal = false;
  /// W > 0: a sliding-window layer, where query i also may not see keys j ≤ i − W (rows and
  /// columns are positions 0 … n−1 of one sequence; Mistral, Gemma 2/3); 0 = none.
  long sliding_window = 0;
  /// c > 0: the scores were soft-capped c·tanh(s/c) before the softmax (Gemma 2); 0 = none.
  double logit_softcap = 0;
  std::string positional = "none";     ///< "none" or "sinusoidal"
  std::optional<RopeSettings> rope;    ///< what was applied, if anything
  /// A NoPE layer of a model whose other layers turn RoPE (SmolLM3's every 4th, Granite with
  /// rope.scaling.finetuned false): rope is absent here because the model skips it, not
  /// because it has none.
  bool no_rope = false;
  std::vector<std::uint8_t> key_mask;    ///< n_k, 1 = real key, 0 = padding; empty = all real
  std::vector<std::uint8_t> query_mask;  ///< n_q, 1 = real query token; empty = all real
  std::vector<long> fully_masked_rows;   ///< queries whose every key is masked (all heads)
  std::vector<Matrix> weights;           ///< num_heads × [n_q, n_k]
  std::vector<Matrix> scores;            ///< num_heads × [n_q, n_k], -inf where masked; optional
  std::vector<Matrix> head_outputs;      ///< num_heads × [n_q, d_v]; optional
  Matrix output;                         ///< [n_q, d_out] after W_O; optional
  // --measure norms (analysis/value_norms.hpp) and alti (analysis/alti.hpp); each optional.
  std::vector<Matrix> norms;             ///< num_heads × [n_q, n_k]: ‖α^h_ij f^h(x_j)‖₂
  Matrix value_norms;                    ///< [num_heads, n_k]: ‖f^h(x_j)‖₂
  Matrix layer_norms;                    ///< [n_q, n_k]: ‖Σ_h α^h_ij f^h(x_j)‖₂
  Matrix alti;                           ///< [n_q, n_k]: ALTI contributions, rows summing to 1
  std::vector<std::string> inputs;       ///< the files this came from
  int prompt_length = 0;                 ///< --generate: the prompt's tokens (BOS counted); queries and
                                         ///< keys from here on were generated. 0 = nothing generated

  /// The allowed-pairs mask implied by key_mask, causal and sliding_window: [n_q, n_k].
  MaskMatrix allowed() const;
  /// 1 where only the sliding window masks a pair (causal and padding allow it): [n_q, n_k];
  /// empty without a window. Pictures hatch these cells apart from causal ones.
  MaskMatrix outside_window() const;
  /// Numbers in its matrices (weights, scores, head outputs, output).
  double value_count() const;
  /// Bytes its matrices take plus one n_q × n_k mask: what stays in memory while its pictures
  /// are drawn.
  double memory_bytes() const;
  /// "L0H3" when the layer is known, else "H3" (TransformerLens naming, from 0).
  std::string head_name(int head) const;
};

}  // namespace attnviz
