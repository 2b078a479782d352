// Reading back a dump's measure fields (docs/output-formats.md, issue 20): `norms`,
// `value_norms`, `layer_norms` and `alti` of one layer, each optional, shapes checked against
// the weights already read. record_json writes them; render and compare draw them.
#pragma once

#include "attention/attention_record.hpp"
#include "io/json_reader.hpp"

namespace attnviz {

/// Fills record.norms [h][n_q][n_k], value_norms [h][n_k], layer_norms [n_q][n_k] and alti
/// [n_q][n_k] from `source` when present. Norms must be ≥ 0 and ALTI rows sums of 1 (or 0)
/// within kRecordRowSumTolerance; norms, value_norms and layer_norms come together. Requires
/// record.weights and tokens read. Throws InputError naming file, pointer, expected and found.
void read_measure_fields(const JsonSource& source, AttentionRecord& record);

/// The checks read_measure_fields makes on values, for measures read elsewhere (a safetensors
/// dump's tensors, shapes already checked): norms >= 0, ALTI rows. Messages name `file` and
/// `prefix` + the field ("blocks.2.attn.norms/3/0/1"). Throws InputError.
void check_measure_values(const AttentionRecord& record, const std::string& file, const std::string& prefix);

}  // namespace attnviz
