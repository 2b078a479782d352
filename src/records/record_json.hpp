// The attention JSON format ("attnviz.attention" v1, docs/output-formats.md): writing an
// AttentionRecord, and reading one back — from attnviz or from another tool — with the same
// validation as every input. Does not compute or draw anything.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "attention/attention_record.hpp"
#include "io/file_text.hpp"

namespace attnviz {

/// Serialises `record` as JSON text. Floats use the shortest decimal form that reads back as
/// the same float32 (std::to_chars), so a dump round-trips exactly. Masked score entries
/// (-inf) are written as null, as documented; weights never contain null, NaN or infinity.
std::string record_to_json(const AttentionRecord& record);

/// Appends record_to_json(record) to `out` without its final line break, with `prefix` (JSON
/// members and their commas, e.g. a model dump's "stack" and "kind") right after the opening
/// brace. Reserves the room the text can take first, so `out` grows at most once.
void append_record_json(const AttentionRecord& record, std::string_view prefix, std::string& out);

/// Every member a single-layer dump (and each `layers[]` entry of a model dump) can have, each
/// documented in docs/output-formats.md "Single-layer dumps" (tests/dump_members_test.cpp checks both).
std::set<std::string> record_members_written();

/// Most bytes of dump text per number: the longest shortest-round-trip float32
/// ("-1.00211145e-36", 15 characters) and its comma. The memory guard counts this much text
/// per number for `dump`; record_to_json reserves it (with the lines and header) up front.
inline constexpr double kMaxDumpBytesPerNumber = 16.0;

/// Tolerance on row sums and entries of weights read from a file (float16 exports need ~1e-3).
inline constexpr double kRecordRowSumTolerance = 1e-3;

/// Reads an attention JSON file (a dump, or weights exported elsewhere in the same layout:
/// `weights` [h][n_q][n_k] plus `query_tokens`/`key_tokens`, or `tokens` for both).
/// Validates shapes against the tokens, that entries lie in [0, 1] and every row sums to 1
/// within kRecordRowSumTolerance (an all-zero row counts as fully masked), and that masked
/// cells hold 0; the header members it reads or shows (format and version when given, mode,
/// model, layer, causal, scale, rope with its scaling) must have their documented types and
/// values. Throws InputError naming file, JSON pointer, expected and found.
/// Reads `path` within `memory_budget_bytes` (0 = no limit; checked before reading, as for
/// every input). Also throws LimitError. Members that are not fields of the format
/// (docs/output-formats.md) are named in one line appended to `warnings`.
AttentionRecord read_record(const std::string& path, double memory_budget_bytes, std::vector<std::string>& warnings);

/// read_record on text already read from `path` (see json_file.hpp's InputTexts).
AttentionRecord read_record(const FileText& text, const std::string& path, std::vector<std::string>& warnings);

/// read_record on a JSON object already parsed (one layer of a model dump); `path` names it
/// in messages, e.g. "dump.json: /layers/3". `extra_members` are fields the caller reads
/// (a model dump layer's stack and kind): not warned about.
AttentionRecord record_from_json(const nlohmann::json& object, const std::string& path,
                                 std::vector<std::string>& warnings, const std::set<std::string>& extra_members = {});

/// Appends `m` [rows, cols] as JSON lists, one row a line, each float32 in its shortest form
/// that reads back the same (as record_to_json writes matrices).
void append_matrix_json(const Matrix& m, std::string& out);

/// The record's header as record_to_json writes it (every field but the matrices, "scale"
/// included), one JSON object, with `prefix` after the opening brace as append_record_json.
/// What a safetensors dump keeps beside its tensors (records/safetensors_dump).
std::string record_header_json(const AttentionRecord& record, std::string_view prefix = "");

/// record_from_json on a header (record_header_json's fields) and weights read elsewhere (a
/// safetensors dump's tensor `weights_name`, named in messages): h × [n_q, n_k] checked against
/// the tokens, then every check of record_from_json. Throws InputError.
AttentionRecord record_from_header(const nlohmann::json& header, std::vector<Matrix> weights, const std::string& path,
                                   const std::string& weights_name, std::vector<std::string>& warnings,
                                   const std::set<std::string>& extra_members = {});

/// True when `text` (read from `path`) holds attention weights (a `weights` field and no
/// `embeddings`) rather than a sentence or weights file. Throws InputError when it is not JSON.
bool is_record_text(const FileText& text, const std::string& path);

}  // namespace attnviz
