#include "records/safetensors_dump.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "io/safetensors_sniff.hpp"
#include "model/formats/safetensors_file.hpp"
#include "records/measure_fields.hpp"
#include "records/record_json.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;
using Shape = std::vector<std::int64_t>;

constexpr const char* kModelFormat = "\"attnviz.model_attention\"";
constexpr const char* kLayerFormat = "\"attnviz.attention\"";

// The run's members a model dump's __metadata__ holds (model_dump_header) and the top-level
// fields written as tensors (add_field, finish).
const std::set<std::string> kRunMembers = {"format", "version", "model", "tokens", "token_ids", "token_texts", "text",
                                           "prompt_length", "generated_text", "source_tokens", "source_text",
                                           "target_tokens"};
const std::set<std::string> kRunTensors = {"last_logits", "rollout_residual", "rollout", "alti_rollout", "attention_flow"};
// What follows a block's attention name (".attn.") or its block name ("blocks.L.").
const std::set<std::string> kAttentionTensors = {"hook_pattern", "hook_attn_scores", "hook_z", "output", "norms",
                                                 "value_norms", "layer_norms", "alti"};
const std::set<std::string> kBlockTensors = {"hook_attn_out", "hook_cross_attn_out", "hook_resid_pre", "hook_resid_mid",
                                             "hook_resid_post", "hook_mlp_out"};

Shape shape_of(const Matrix& m) { return {m.rows(), m.cols()}; }

// h matrices [n_q, n_k] as one tensor [h, n_q, n_k], head after head.
void add_stack(SafetensorsWriter& file, const std::string& name, const std::vector<Matrix>& heads) {
  file.begin(name, "F32", {static_cast<std::int64_t>(heads.size()), heads.front().rows(), heads.front().cols()});
  for (const Matrix& m : heads) file.write(m.data(), static_cast<std::size_t>(m.size()) * sizeof(float));
}

// TransformerLens's hook_z: [position, head, d_head], from the record's h × [n_q, d_v].
void add_z(SafetensorsWriter& file, const std::string& name, const std::vector<Matrix>& heads) {
  const long n = heads.front().rows(), d = heads.front().cols();
  file.begin(name, "F32", {n, static_cast<std::int64_t>(heads.size()), d});
  std::vector<float> row(heads.size() * static_cast<std::size_t>(d));
  for (long i = 0; i < n; ++i) {
    for (std::size_t h = 0; h < heads.size(); ++h)
      std::memcpy(row.data() + h * static_cast<std::size_t>(d), heads[h].row(i).data(), static_cast<std::size_t>(d) * sizeof(float));
    file.write(row.data(), row.size() * sizeof(float));
  }
}

void add_matrix(SafetensorsWriter& file, const std::string& name, const Matrix& m) {
  if (m.size() != 0) file.add(name, shape_of(m), m.data());
}

// The record's matrices under `attention` ("blocks.2.attn") and `block` ("blocks.2", or "" for
// a layer without a number). The output goes to `output_name` when given.
void add_record(SafetensorsWriter& file, const AttentionRecord& r, const std::string& attention, const std::string& block,
                const std::string& output_name = "") {
  if (!r.weights.empty()) add_stack(file, attention + ".hook_pattern", r.weights);  // else written head by head
  if (!r.scores.empty()) add_stack(file, attention + ".hook_attn_scores", r.scores);
  if (!r.head_outputs.empty()) add_z(file, attention + ".hook_z", r.head_outputs);
  const std::string out = (block.empty() ? "" : block + ".") + (r.mode == "cross" ? "hook_cross_attn_out" : "hook_attn_out");
  add_matrix(file, output_name.empty() ? out : output_name, r.output);
  if (!r.norms.empty()) add_stack(file, attention + ".norms", r.norms);
  add_matrix(file, attention + ".value_norms", r.value_norms);
  add_matrix(file, attention + ".layer_norms", r.layer_norms);
  add_matrix(file, attention + ".alti", r.alti);
}

// Nested JSON lists of numbers (or one number) as a flat list and its shape.
void flatten(const json& value, std::size_t depth, Shape& shape, std::vector<double>& out) {
  if (value.is_number()) {
    if (depth != shape.size()) throw std::invalid_argument("ragged lists");
    out.push_back(value.get<double>());
    return;
  }
  if (!value.is_array()) throw std::invalid_argument("not a number or a list of numbers");
  if (depth == shape.size()) shape.push_back(static_cast<std::int64_t>(value.size()));
  else if (shape[depth] != static_cast<std::int64_t>(value.size())) throw std::invalid_argument("ragged lists");
  for (const json& item : value) flatten(item, depth + 1, shape, out);
}

std::string block_header(const AttentionBlock& block) {
  return record_header_json(block.record, "\"stack\": " + json(block.stack).dump() + ", \"kind\": " + json(block.kind).dump() + ",");
}

}  // namespace

std::string hook_block_name(const AttentionBlock& block, bool encoder_decoder) {
  return (encoder_decoder ? block.stack + "." : std::string()) + "blocks." + std::to_string(block.layer);
}

std::string hook_attention_name(const AttentionBlock& block, bool encoder_decoder) {
  return hook_block_name(block, encoder_decoder) + (block.kind == "cross" ? ".cross_attn" : ".attn");
}

SafetensorsDumpWriter::SafetensorsDumpWriter(const std::string& temporary, std::string target, bool encoder_decoder)
    : file_(temporary, std::move(target)), encoder_decoder_(encoder_decoder) {}

void SafetensorsDumpWriter::plan(long tokens, int blocks) {
  planned_tokens_ = tokens;
  planned_blocks_ = blocks;
}

// The header holds each block's header (its tokens, mostly) and tensor entries, and the run's
// tokens a few times over (tokens, token_texts, text): room for that, a quarter more, is kept
// before the data. A header that still outgrows it moves the data once (SafetensorsWriter).
void SafetensorsDumpWriter::reserve_for(const AttentionBlock& first) {
  if (reserved_) return;
  reserved_ = true;
  constexpr double kEntryBytes = 160, kEntriesPerBlock = 14;
  const double block = static_cast<double>(block_header(first).size()) + kEntriesPerBlock * kEntryBytes;
  const double blocks = planned_blocks_ > 0 ? planned_blocks_ : 64;
  const double run = 16384.0 + 4.0 * block;
  file_.reserve_header(static_cast<std::uint64_t>(1.25 * (run + blocks * block)));
}

void SafetensorsDumpWriter::add(const AttentionBlock& block) {
  reserve_for(block);
  const std::string attention = hook_attention_name(block, encoder_decoder_);
  const std::string prefix = hook_block_name(block, encoder_decoder_);
  const BlockActivations& a = block.activations;
  // hook_attn_out is what joins the residual stream. --outputs' `output` (concat·W_O + b_O) is
  // that, except behind a post-attention norm (Gemma): then it keeps its JSON name, `output`.
  const bool same_output = a.attn_out.size() == 0 || block.record.output.size() == 0 ||
                           (a.attn_out.rows() == block.record.output.rows() && a.attn_out.cols() == block.record.output.cols() &&
                            std::memcmp(a.attn_out.data(), block.record.output.data(), a.attn_out.size() * sizeof(float)) == 0);
  add_record(file_, block.record, attention, prefix, same_output ? "" : attention + ".output");
  add_matrix(file_, prefix + ".hook_resid_pre", a.resid_pre);
  add_matrix(file_, prefix + ".hook_resid_mid", a.resid_mid);
  add_matrix(file_, prefix + ".hook_resid_post", a.resid_post);
  add_matrix(file_, prefix + ".hook_mlp_out", a.mlp_out);
  if (!same_output || block.record.output.size() == 0) add_matrix(file_, prefix + ".hook_attn_out", a.attn_out);
  metadata_[attention] = block_header(block);
  ++blocks_;
}

void SafetensorsDumpWriter::add_head(const AttentionBlock& block, int head, const Matrix& weights) {
  if (head == 0) {
    reserve_for(block);
    const AttentionRecord& r = block.record;
    file_.begin(hook_attention_name(block, encoder_decoder_) + ".hook_pattern", "F32",
                {r.num_heads, static_cast<std::int64_t>(r.query_tokens.size()), static_cast<std::int64_t>(r.key_tokens.size())});
  }
  file_.write(weights.data(), static_cast<std::size_t>(weights.size()) * sizeof(float));
}

void SafetensorsDumpWriter::add_field(const std::string& name, const std::string& json_text) {
  Shape shape;
  std::vector<double> values;
  flatten(json::parse(json_text), 0, shape, values);
  file_.add(name, shape, values.data());
}

void SafetensorsDumpWriter::finish(const ModelRunInfo& info, bool logits) {
  if (logits) file_.add("last_logits", {static_cast<std::int64_t>(info.last_logits.size())}, info.last_logits.data());
  for (auto& [name, text] : model_dump_header(info)) metadata_[name] = std::move(text);
  file_.finish(metadata_);
}

void write_record_safetensors(const AttentionRecord& record, const std::string& temporary, const std::string& target) {
  SafetensorsWriter file(temporary, target);
  const std::string header = record_header_json(record);
  file.reserve_header(4096 + 2 * header.size());
  const std::string block = record.layer ? "blocks." + std::to_string(*record.layer) : std::string();
  const std::string module = record.mode == "cross" ? "cross_attn" : "attn";
  add_record(file, record, block.empty() ? module : block + "." + module, block.empty() ? "" : block);
  std::map<std::string, std::string> metadata;
  const json members = json::parse(header);
  for (const auto& [name, value] : members.items()) metadata[name] = value.dump(-1, ' ', false, json::error_handler_t::replace);
  file.finish(metadata);
}

FileText read_dump_text(const std::string& path, double memory_budget_bytes) {
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  const auto size = regular ? std::filesystem::file_size(path, ec) : 0;
  char head[9] = {};
  if (regular && !ec && size >= sizeof head) {
    std::ifstream in(path, std::ios::binary);
    in.read(head, sizeof head);
    std::uint64_t n = 0;
    std::memcpy(&n, head, 8);
    if (in.gcount() == sizeof head && head[8] == '{' && n >= 2 && n <= size - 8) {
      // The tensors are copied out of the mapping into matrices: the file's size again.
      if (memory_budget_bytes > 0 && static_cast<double>(size) > memory_budget_bytes)
        throw LimitError::memory("reading " + path + " (" + std::to_string(size) + " bytes of tensors)", static_cast<double>(size),
                                 memory_budget_bytes, "--max-memory MIB");
      FileText mapped = FileText::map(path, size, 0);
      if (!mapped.mapped()) throw InputError::unreadable(path, "the file could not be mapped");
      return mapped;
    }
  }
  return read_input_text(path, memory_budget_bytes);
}

bool is_safetensors_text(const FileText& text) { return looks_like_safetensors(text.view(), text.view().size()); }

namespace {

// A float32 tensor as h matrices [rows, cols] (shape [h, rows, cols]), or as one matrix (shape
// [rows, cols]); shapes checked by the caller against the tokens.
void require_f32(const SafetensorsTensor& t, std::size_t dims, const std::string& path, const char* meaning) {
  if (t.dtype != "F32")
    throw InputError::bad_value(path, t.name, std::string("float32 (F32) ") + meaning, "dtype " + t.dtype);
  if (t.shape.size() != dims) {
    std::string found = "[";
    for (std::size_t i = 0; i < t.shape.size(); ++i) found += (i ? ", " : "") + std::to_string(t.shape[i]);
    throw InputError::shape_mismatch(path, t.name, std::to_string(dims) + " dimensions: " + meaning, "shape " + found + "]");
  }
}

Matrix tensor_matrix(const SafetensorsTensor& t, const std::string& path, const char* meaning, long rows, long cols) {
  require_f32(t, 2, path, meaning);
  if (t.shape[0] != rows || t.shape[1] != cols)
    throw InputError::shape_mismatch(path, t.name, "[" + std::to_string(rows) + ", " + std::to_string(cols) + "] (" + meaning + ")",
                                     "[" + std::to_string(t.shape[0]) + ", " + std::to_string(t.shape[1]) + "]");
  Matrix m(rows, cols);
  std::memcpy(m.data(), t.data, t.bytes);
  return m;
}

std::vector<Matrix> tensor_stack(const SafetensorsTensor& t, const std::string& path, const char* meaning) {
  require_f32(t, 3, path, meaning);
  std::vector<Matrix> heads;
  const std::uint64_t head_bytes = static_cast<std::uint64_t>(t.shape[1] * t.shape[2]) * sizeof(float);
  for (std::int64_t h = 0; h < t.shape[0]; ++h) {
    heads.emplace_back(t.shape[1], t.shape[2]);
    std::memcpy(heads.back().data(), t.data + static_cast<std::uint64_t>(h) * head_bytes, head_bytes);
  }
  return heads;
}

// The measures under `attention` (norms come together, as in the JSON dump), shapes checked
// against the record, then their values (check_measure_values).
void read_measures(const SafetensorsFile& file, const std::string& attention, AttentionRecord& r) {
  const std::string& path = file.path();
  const long n_q = static_cast<long>(r.query_tokens.size()), n_k = static_cast<long>(r.key_tokens.size());
  const SafetensorsTensor* norms = file.find(attention + ".norms");
  const SafetensorsTensor* value_norms = file.find(attention + ".value_norms");
  const SafetensorsTensor* layer_norms = file.find(attention + ".layer_norms");
  if (norms || value_norms || layer_norms) {
    for (const auto& [tensor, name] : {std::pair{norms, ".norms"}, {value_norms, ".value_norms"}, {layer_norms, ".layer_norms"}})
      if (!tensor) throw InputError::missing_field(path, attention + name, "written with the other norms (--measure norms)");
    r.norms = tensor_stack(*norms, path, "[head, query, key] norms");
    const std::string per_head = std::to_string(n_q) + " query tokens x " + std::to_string(n_k) + " key tokens";
    if (static_cast<int>(r.norms.size()) != r.num_heads)
      throw InputError::shape_mismatch(path, norms->name, std::to_string(r.num_heads) + " heads, as the weights",
                                       std::to_string(r.norms.size()));
    for (const Matrix& m : r.norms) require_shape(m, n_q, n_k, path, norms->name, per_head);
    r.value_norms = tensor_matrix(*value_norms, path, "[head, key] value norms", r.num_heads, n_k);
    r.layer_norms = tensor_matrix(*layer_norms, path, "[query, key] layer norms", n_q, n_k);
  }
  if (const SafetensorsTensor* alti = file.find(attention + ".alti")) r.alti = tensor_matrix(*alti, path, "[query, key] ALTI", n_q, n_k);
  check_measure_values(r, path, attention + ".");
}

json metadata_json(const SafetensorsFile& file, const std::string& key) {
  const std::string& text = file.metadata().at(key);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw InputError::bad_value(file.path(), "__metadata__/" + key, "JSON text (a safetensors dump's metadata values are JSON)",
                                "\"" + text.substr(0, 60) + "\"");
  }
}

// The attention name a tensor belongs to ("blocks.2.attn" of "blocks.2.attn.hook_pattern"), or
// "" when the name is not one of a block's.
bool is_block_tensor(const std::string& name, const std::set<std::string>& attentions) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  const std::string head = name.substr(0, dot), tail = name.substr(dot + 1);
  if (kAttentionTensors.count(tail)) return attentions.count(head) > 0;
  if (!kBlockTensors.count(tail)) return false;
  return attentions.count(head + ".attn") > 0 || attentions.count(head + ".cross_attn") > 0;
}

void warn_unknown(const SafetensorsFile& file, const std::set<std::string>& attentions, const std::set<std::string>& members,
                  std::vector<std::string>& warnings) {
  std::vector<std::string> unknown;
  for (const auto& [key, value] : file.metadata())
    if (!members.count(key) && !attentions.count(key)) unknown.push_back("__metadata__ " + key);
  for (const auto& [name, tensor] : file.tensors())
    if (!kRunTensors.count(name) && !is_block_tensor(name, attentions)) unknown.push_back("tensor " + name);
  if (unknown.empty()) return;
  std::string list;
  for (const std::string& u : unknown) list += (list.empty() ? "" : ", ") + u;
  warnings.push_back(file.path() + ": not part of a safetensors dump (docs/output-formats.md), ignored: " + list);
}

// The attention names of a model dump's blocks: metadata keys other than the run's, in the
// order of their weights in the file (the order the run computed them).
std::vector<std::string> block_keys(const SafetensorsFile& file) {
  std::vector<std::pair<const std::uint8_t*, std::string>> keys;
  for (const auto& [key, value] : file.metadata()) {
    if (kRunMembers.count(key)) continue;
    const SafetensorsTensor* weights = file.find(key + ".hook_pattern");
    if (weights) keys.emplace_back(weights->data, key);
    else if (key.size() > 5 && (key.ends_with(".attn") || key.ends_with(".cross_attn")))
      throw InputError::missing_field(file.path(), key + ".hook_pattern", "the block's [head, query, key] weights (its header is in __metadata__)");
  }
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> names;
  for (auto& [data, key] : keys) names.push_back(std::move(key));
  return names;
}

ModelDump read_model(const SafetensorsFile& file, std::vector<std::string>& warnings) {
  const std::string& path = file.path();
  json root = json::object();
  for (const std::string& key : kRunMembers)
    if (file.metadata().count(key)) root[key] = metadata_json(file, key);
  ModelDump dump = read_model_dump_header(root, path, warnings);
  const std::vector<std::string> keys = block_keys(file);
  if (keys.empty()) throw InputError::missing_field(path, "blocks.0.attn.hook_pattern", "at least one attention block");
  for (const std::string& key : keys) {
    const std::string where = path + ": " + key;
    const json header = metadata_json(file, key);
    AttentionBlock block;
    read_block_kind(header, where, block);
    const SafetensorsTensor& weights = *file.find(key + ".hook_pattern");
    block.record = record_from_header(header, tensor_stack(weights, path, "[head, query, key] attention weights"), where,
                                      weights.name, warnings, {"stack", "kind"});
    read_measures(file, key, block.record);
    add_read_block(std::move(block), where, path, dump);
  }
  finish_read_dump(dump);
  warn_unknown(file, {keys.begin(), keys.end()}, kRunMembers, warnings);
  return dump;
}

AttentionRecord read_layer(const SafetensorsFile& file, std::vector<std::string>& warnings) {
  const std::string& path = file.path();
  json header = json::object();
  std::set<std::string> members;
  for (const auto& [key, value] : file.metadata()) {
    header[key] = metadata_json(file, key);
    members.insert(key);
  }
  std::string attention;
  for (const auto& [name, tensor] : file.tensors()) {
    if (name != "attn.hook_pattern" && name != "cross_attn.hook_pattern" && !name.ends_with(".attn.hook_pattern") &&
        !name.ends_with(".cross_attn.hook_pattern"))
      continue;
    if (!attention.empty())
      throw InputError::inconsistent(path, "holds two layers' weights (" + attention + ".hook_pattern and " + name +
                                               ") but its format is \"attnviz.attention\", one layer");
    attention = name.substr(0, name.size() - std::string(".hook_pattern").size());
  }
  if (attention.empty()) throw InputError::missing_field(path, "attn.hook_pattern", "the layer's [head, query, key] weights");
  const SafetensorsTensor& weights = *file.find(attention + ".hook_pattern");
  AttentionRecord record =
      record_from_header(header, tensor_stack(weights, path, "[head, query, key] attention weights"), path, weights.name, warnings);
  read_measures(file, attention, record);
  // record_from_header named unknown metadata; here only the tensors.
  std::set<std::string> attentions = {attention};
  std::vector<std::string> unknown;
  for (const auto& [name, tensor] : file.tensors())
    if (!is_block_tensor(name, attentions) && !kBlockTensors.count(name.substr(name.rfind('.') + 1))) unknown.push_back(name);
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& u : unknown) list += (list.empty() ? "" : ", ") + u;
    warnings.push_back(path + ": not part of a safetensors dump (docs/output-formats.md), ignored: tensor " + list);
  }
  return record;
}

}  // namespace

SafetensorsDump read_safetensors_dump(FileText text, const std::string& path, std::vector<std::string>& warnings) {
  const SafetensorsFile file(std::move(text), path);
  const auto format = file.metadata().find("format");
  if (format == file.metadata().end())
    throw InputError::missing_field(path, "__metadata__/format",
                                    std::string(kModelFormat) + " or " + kLayerFormat + " (a safetensors file attnviz dump wrote)");
  SafetensorsDump dump;
  if (format->second == kModelFormat) dump.model = read_model(file, warnings);
  else if (format->second == kLayerFormat) dump.record = read_layer(file, warnings);
  else
    throw InputError::bad_value(path, "__metadata__/format", std::string(kModelFormat) + " or " + kLayerFormat,
                                "'" + format->second.substr(0, 80) + "'");
  return dump;
}

}  // namespace attnviz
