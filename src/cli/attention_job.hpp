// From the options of `dump`, `heatmaps` and `compare` to an AttentionRecord: load and
// validate the inputs, apply position encodings and masks, check the memory budget,
// compute every head. Does not write or draw anything.
#pragma once

#include <string>
#include <vector>

#include "attention/attention_record.hpp"
#include "cli/options.hpp"
#include "cli/profile.hpp"
#include "io/json_file.hpp"
#include "records/input_schema.hpp"

namespace attnviz {

/// Bytes the run may use: --max-memory MiB, or by default half of physical memory.
double memory_budget_bytes(const Options& options);

/// One layer run's inputs, loaded, checked and made ready for multi_head_attention: position
/// encodings added, the causal/padding mask and RoPE decided from the files and the flags.
struct PreparedLayer {
  InputBundle in;
  std::optional<RopeSettings> rope;
  std::optional<RopeRequest> rope_request;  ///< rope with the queries' and keys' positions
  bool causal = false;
  MaskMatrix allowed;                       ///< [n_q, n_k]
};

/// The first half of compute_record: loads and prepares the files named in `options` (the same
/// errors, warnings and memory check), without computing attention.
PreparedLayer prepare_layer(const Options& options, std::vector<std::string>& warnings, PhaseTimer* timer = nullptr,
                            InputTexts texts = {});

/// Loads the files named in `options`, computes every head and returns the record, with
/// user-facing warnings (fully masked rows) appended to `warnings`. With a timer, the
/// loading ends the "load" phase (the caller laps "compute").
/// Inputs already read by the caller (e.g. a pipe it looked into) come in `texts`.
/// Throws InputError, UsageError (option combinations) or LimitError (memory budget).
AttentionRecord compute_record(const Options& options, std::vector<std::string>& warnings,
                               PhaseTimer* timer = nullptr, InputTexts texts = {});

}  // namespace attnviz
