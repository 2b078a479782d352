#include "records/record_json.hpp"

#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "core/counted.hpp"
#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "records/measure_fields.hpp"

namespace attnviz {

using nlohmann::json;

namespace {

constexpr int kFormatVersion = 1;
constexpr const char* kFormatName = "attnviz.attention";
constexpr double kMaskedWeightTolerance = 1e-6;

// Appends matrices as nested JSON lists, one matrix row per line, floats via to_chars. Each
// matrix is written through a pointer into room made for it at once (issue 11: appending number
// by number to the string was a quarter of a model dump's formatting time).
class NumberWriter {
 public:
  explicit NumberWriter(std::string& out) : out_(out) {}

  void scalar(Scalar x) {
    char buffer[kNumberBytes];
    out_.append(buffer, write(buffer, x));
  }

  void matrix(const Matrix& m, const char* indent) {
    const std::size_t indent_bytes = std::strlen(indent);
    const std::size_t start = out_.size();
    const auto rows = static_cast<std::size_t>(m.rows()), cols = static_cast<std::size_t>(m.cols());
    out_.resize(start + 2 + rows * (indent_bytes + 4 + cols * (kNumberBytes + 1)));  // the most it can take
    char* p = out_.data() + start;
    *p++ = '[';
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      if (r != 0) *p++ = ',';
      *p++ = '\n';
      p = std::copy_n(indent, indent_bytes, p);
      *p++ = '[';
      for (Eigen::Index c = 0; c < m.cols(); ++c) {
        if (c != 0) *p++ = ',';
        p = write(p, m(r, c));
      }
      *p++ = ']';
    }
    *p++ = ']';
    out_.resize(static_cast<std::size_t>(p - out_.data()));
  }

  void matrices(const std::vector<Matrix>& ms) {
    out_ += "[";
    for (std::size_t h = 0; h < ms.size(); ++h) {
      out_ += h == 0 ? "\n    " : ",\n    ";
      matrix(ms[h], "      ");
    }
    out_ += "]";
  }

 private:
  // Room for one number: the longest shortest-round-trip float32 (15 characters) or "null".
  static constexpr std::size_t kNumberBytes = 15;

  // Writes x at `to` (kNumberBytes available) and returns the end.
  static char* write(char* to, Scalar x) {
    if (!std::isfinite(x)) return std::copy_n("null", 4, to);  // only masked scores (-inf), documented as null
    const auto [end, error] = std::to_chars(to, to + kNumberBytes, x);
    if (error != std::errc()) throw std::logic_error("a float32 took more than 15 characters");
    return end;
  }

  std::string& out_;
};

// The RoPE that was applied; "scaling" only when positions were scaled, so dumps of unscaled
// RoPE read as before.
json rope_json(const std::optional<RopeSettings>& rope) {
  if (!rope) return nullptr;
  json out = {{"style", rope_style_name(rope->style)}, {"theta", rope->theta}, {"dim", rope->dim}};
  if (rope->linear_factor != 1.0) out["scaling"] = {{"type", "linear"}, {"factor", rope->linear_factor}};
  return out;
}

// Every member a single-layer dump has (docs/output-formats.md), plus "tokens", which
// another tool may write for both axes (read, never written).
const std::set<std::string> kRecordMembers = {
    "format",     "version",    "mode",     "model",     "layer",   "inputs",   "query_tokens",
    "key_tokens", "tokens",     "num_heads", "num_kv_heads", "d_model", "d_k",   "d_v",
    "scale",      "causal",     "positional", "rope",    "key_mask", "query_mask", "rows",
    "cols",       "index",      "vmin",     "vmax",      "fully_masked_rows", "weights", "scores_masked",
    "scores",     "head_outputs", "output", "sliding_window", "logit_softcap", "no_rope", "norms", "value_norms",
    "layer_norms", "alti"};

}  // namespace

std::set<std::string> record_members_written() {
  std::set<std::string> written = kRecordMembers;
  written.erase("tokens");
  return written;
}

namespace {

// The small fields, in a fixed order, via nlohmann (escaping, UTF-8 checks).
std::vector<std::pair<std::string, json>> header_fields(const AttentionRecord& r) {
  json masked_rows = json::array();
  for (long i : r.fully_masked_rows) masked_rows.push_back({{"query", i}, {"token", r.query_tokens[i]}});
  std::vector<std::pair<std::string, json>> fields = {
      {"format", kFormatName},
      {"version", kFormatVersion},
      {"mode", r.mode},
      {"model", r.model.empty() ? json(nullptr) : json(r.model)},
      {"layer", r.layer ? json(*r.layer) : json(nullptr)},
      {"inputs", r.inputs},
      {"query_tokens", r.query_tokens},
      {"key_tokens", r.key_tokens},
      {"num_heads", r.num_heads},
      {"num_kv_heads", r.num_kv_heads},
      {"d_model", r.d_model},
      {"d_k", r.d_k},
      {"d_v", r.d_v},
      {"causal", r.causal},
      {"positional", r.positional},
      {"rope", rope_json(r.rope)},
      {"key_mask", r.key_mask},
      {"query_mask", r.query_mask},
      {"rows", "query"},
      {"cols", "key"},
      {"index", "weights[head][query][key]"},
      {"vmin", 0},
      {"vmax", 1},
      {"fully_masked_rows", masked_rows},
  };
  // Only when present, so that dumps of models without them stay as they were.
  if (r.sliding_window > 0) fields.emplace_back("sliding_window", r.sliding_window);
  if (r.logit_softcap > 0) fields.emplace_back("logit_softcap", r.logit_softcap);
  if (r.no_rope) fields.emplace_back("no_rope", true);
  return fields;
}

}  // namespace

namespace {

// The record's header: "{", `prefix`, the small fields and "scale", without the closing brace.
// `key` starts a member ("first" tracks the comma).
void append_header(const AttentionRecord& record, std::string_view prefix, std::string& out, bool& first) {
  out += "{";
  out += prefix;
  auto key = [&](const std::string& name) {
    out += first ? "\n  \"" : ",\n  \"";
    first = false;
    out += name;
    out += "\": ";
  };
  for (const auto& [name, value] : header_fields(record)) {
    key(name);
    // A vocabulary piece (or model name) that is not UTF-8 is shown with U+FFFD for each bad
    // byte, as the model dump's "text" is: JSON text cannot carry the bytes themselves.
    out += value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  key("scale");
  NumberWriter(out).scalar(static_cast<Scalar>(record.scale));
}

}  // namespace

void append_matrix_json(const Matrix& m, std::string& out) { NumberWriter(out).matrix(m, "    "); }

std::string record_header_json(const AttentionRecord& record, std::string_view prefix) {
  std::string out;
  bool first = true;
  append_header(record, prefix, out, first);
  out += "\n}";
  return out;
}

void append_record_json(const AttentionRecord& record, std::string_view prefix, std::string& out) {
  // Reserved once: growing by doubling held the old and the new buffer at once, up to three
  // times the text (n = 4096, 8 heads: 2.9 GB peak for a 1.8 GB dump).
  const double number_count = record.value_count();
  // Every stack's matrices have n_q rows (one line each).
  const double rows = static_cast<double>(record.output.rows()) +
                      static_cast<double>(record.query_tokens.size()) *
                          static_cast<double>(record.weights.size() + record.scores.size() + record.head_outputs.size() +
                                              record.norms.size()) +
                      static_cast<double>(record.value_norms.rows() + record.layer_norms.rows() + record.alti.rows());
  constexpr double kBytesPerRow = 12.0;        // line break, indent, brackets
  constexpr double kBytesPerTokenByte = 6.0;   // worst JSON escape: "\u0001"
  double header = 4096.0;
  for (const Tokens* tokens : {&record.query_tokens, &record.key_tokens}) {
    for (const std::string& token : *tokens) header += static_cast<double>(token.size()) * kBytesPerTokenByte + 4.0;
  }
  out.reserve(out.size() + prefix.size() +
              static_cast<std::size_t>(number_count * kMaxDumpBytesPerNumber + rows * kBytesPerRow + header));
  bool first = true;
  append_header(record, prefix, out, first);
  auto key = [&](const std::string& name) {
    out += first ? "\n  \"" : ",\n  \"";
    first = false;
    out += name;
    out += "\": ";
  };
  NumberWriter numbers(out);
  key("weights");
  numbers.matrices(record.weights);
  if (!record.scores.empty()) {
    key("scores_masked");
    out += "\"null: the pair is masked (logit -inf before the softmax)\"";
    key("scores");
    numbers.matrices(record.scores);
  }
  if (!record.head_outputs.empty()) {
    key("head_outputs");
    numbers.matrices(record.head_outputs);
  }
  if (record.output.size() != 0) {
    key("output");
    numbers.matrix(record.output, "    ");
  }
  if (!record.norms.empty()) {
    key("norms");
    numbers.matrices(record.norms);
    key("value_norms");
    numbers.matrix(record.value_norms, "    ");
    key("layer_norms");
    numbers.matrix(record.layer_norms, "    ");
  }
  if (record.alti.size() != 0) {
    key("alti");
    numbers.matrix(record.alti, "    ");
  }
  out += "\n}";
}

std::string record_to_json(const AttentionRecord& record) {
  std::string out;
  append_record_json(record, "", out);
  out += "\n";
  return out;
}

namespace {

// `key` ("query_tokens" or "key_tokens"), or "tokens" for both; when a file has both, they
// must agree: which labels belong to the matrix is never guessed.
Tokens read_tokens_field(const JsonSource& source, const std::string& key) {
  const json* specific = source.find(key);
  const json* shared = source.find("tokens");
  if (specific == nullptr && shared == nullptr) {
    throw InputError::missing_field(source.file, "/" + key, "token labels (or /tokens for self-attention)");
  }
  Tokens tokens = read_strings(specific ? *specific : *shared, source.file, specific ? "/" + key : "/tokens");
  if (specific != nullptr && shared != nullptr && read_strings(*shared, source.file, "/tokens") != tokens) {
    throw InputError::inconsistent(source.file, "/" + key + " and /tokens differ: give one list of labels per axis");
  }
  return tokens;
}

std::vector<Matrix> read_weight_stack(const JsonSource& source, long n_q, long n_k) {
  const std::string& file = source.file;
  const json& stack = source.require("weights", "[head][query][key] attention weights");
  if (!stack.is_array() || stack.empty()) {
    throw InputError::bad_value(file, "/weights", "a list of heads, each [query][key]", describe_json(stack));
  }
  // One head written without its axis is 2-deep: [query][key].
  if (stack[0].is_array() && (stack[0].empty() || !stack[0][0].is_array())) {
    throw InputError::bad_value(file, "/weights", "[head][query][key] (3 nested levels)",
                                "2 nested levels [query][key]: the head axis is missing (one head is "
                                "[[[w, ...], ...]], a list holding one matrix)");
  }
  // A leading batch axis makes weights 4-deep: [batch][head][query][key].
  if (stack[0].is_array() && !stack[0].empty() && stack[0][0].is_array() && !stack[0][0].empty() &&
      stack[0][0][0].is_array()) {
    throw InputError::bad_value(file, "/weights", "[head][query][key] (one sentence per file)",
                                "4 nested levels: batch " + std::to_string(stack.size()));
  }
  std::vector<Matrix> weights;
  for (std::size_t h = 0; h < stack.size(); ++h) {
    const std::string pointer = "/weights/" + std::to_string(h);
    weights.push_back(read_matrix(stack[h], file, pointer, "n_q x n_k"));
    require_shape(weights.back(), n_q, n_k, file, pointer,
                  std::to_string(n_q) + " query tokens x " + std::to_string(n_k) + " key tokens");
  }
  return weights;
}

// Each row must be a probability distribution (or all zero: a fully masked row), and masked
// cells must hold 0 — anything else is not attention weights and is refused, not drawn.
void validate_distributions(AttentionRecord& record, const std::string& file) {
  const MaskMatrix allowed = record.allowed();
  std::vector<bool> zero_row(record.query_tokens.size(), true);
  for (std::size_t h = 0; h < record.weights.size(); ++h) {
    const Matrix& w = record.weights[h];
    for (Eigen::Index i = 0; i < w.rows(); ++i) {
      const std::string row = "/weights/" + std::to_string(h) + "/" + std::to_string(i);
      for (Eigen::Index j = 0; j < w.cols(); ++j) {
        const double x = w(i, j);
        if (x < -kRecordRowSumTolerance || x > 1 + kRecordRowSumTolerance) {
          throw InputError::bad_value(file, row + "/" + std::to_string(j),
                                      "an attention weight in [0, 1] (head " + std::to_string(h) + ")",
                                      std::to_string(x));
        }
        if (allowed(i, j) == 0 && std::fabs(x) > kMaskedWeightTolerance) {
          throw InputError::bad_value(file, row + "/" + std::to_string(j),
                                      "0 (key " + std::to_string(j) + " is masked for this query)",
                                      std::to_string(x));
        }
      }
      const double sum = w.row(i).cast<double>().sum();
      if (sum == 0.0) continue;
      zero_row[i] = false;
      if (std::fabs(sum - 1.0) > kRecordRowSumTolerance) {
        char detail[160];
        std::snprintf(detail, sizeof detail, "row sum %.7g (head %zu, query %ld)", sum, h, static_cast<long>(i));
        throw InputError::bad_value(file, row, "a probability distribution (row sum 1 within 1e-3)", detail);
      }
    }
  }
  record.fully_masked_rows.clear();
  for (std::size_t i = 0; i < zero_row.size(); ++i) {
    if (zero_row[i]) record.fully_masked_rows.push_back(static_cast<long>(i));
  }
}

// "format" and "version", when given (another tool's export may omit them), must be this
// format's: a dump of another version may mean its fields differently.
void check_format(const JsonSource& source) {
  if (const json* format = source.find("format"); format && (!format->is_string() || *format != kFormatName))
    throw InputError::bad_value(source.file, "/format", std::string("\"") + kFormatName + "\"", describe_json(*format));
  if (const json* version = source.find("version");
      version && (!version->is_number_integer() || version->get<long long>() != kFormatVersion))
    throw InputError::bad_value(source.file, "/version", std::to_string(kFormatVersion) + " (the version this attnviz reads)",
                                describe_json(*version));
}

// The RoPE a dump says was applied (shown in titles): what rope_json writes, each member
// checked as a weights file's rope block is; a member it does not write is named in a warning.
RopeSettings read_applied_rope(const json& rope, const std::string& path, std::vector<std::string>& warnings) {
  if (!rope.is_object())
    throw InputError::bad_value(path, "/rope", "an object {style, theta, dim} or null", describe_json(rope));
  const auto style = rope.find("style");
  if (style == rope.end() || !style->is_string() || (*style != "interleaved" && *style != "half"))
    throw InputError::bad_value(path, "/rope/style", "\"interleaved\" or \"half\"",
                                style == rope.end() ? "nothing" : describe_json(*style));
  RopeSettings settings;
  settings.style = *style == "half" ? RopeStyle::Half : RopeStyle::Interleaved;
  if (const auto theta = rope.find("theta"); theta != rope.end()) {
    settings.theta = read_scalar(*theta, path, "/rope/theta");
    if (!(settings.theta > 0)) throw InputError::bad_value(path, "/rope/theta", "a number > 0", theta->dump());
  }
  if (const auto dim = rope.find("dim"); dim != rope.end())
    settings.dim = static_cast<long>(read_integer(*dim, path, "/rope/dim", 2, 1 << 20));
  if (const auto scaling = rope.find("scaling"); scaling != rope.end() && !scaling->is_null()) {
    if (!scaling->is_object())
      throw InputError::bad_value(path, "/rope/scaling", "an object {\"type\": \"linear\", \"factor\": f} or null",
                                  describe_json(*scaling));
    const auto type = scaling->find("type");
    if (type == scaling->end() || *type != "linear")
      throw InputError::bad_value(path, "/rope/scaling/type", "\"linear\" (the only scaling a layer run applies)",
                                  type == scaling->end() ? "nothing" : describe_json(*type));
    const auto factor = scaling->find("factor");
    if (factor == scaling->end()) throw InputError::missing_field(path, "/rope/scaling/factor", "the linear scaling factor");
    settings.linear_factor = read_scalar(*factor, path, "/rope/scaling/factor");
    if (!(settings.linear_factor > 0))
      throw InputError::bad_value(path, "/rope/scaling/factor", "a number > 0", factor->dump());
    if (std::string warning = unknown_members_warning(*scaling, path, "/rope/scaling", {"type", "factor"},
                                                      "a dump's RoPE scaling (what was applied)");
        !warning.empty())
      warnings.push_back(std::move(warning));
  }
  if (std::string warning = unknown_members_warning(rope, path, "/rope", {"style", "theta", "dim", "scaling"},
                                                    "a dump's rope (what was applied)");
      !warning.empty())
    warnings.push_back(std::move(warning));
  return settings;
}

std::vector<std::uint8_t> optional_mask(const JsonSource& source, const std::string& key, std::size_t n) {
  const json* value = source.find(key);
  if (value == nullptr || value->is_null() || (value->is_array() && value->empty())) return {};
  std::vector<std::uint8_t> mask = read_mask(*value, source.file, "/" + key);
  if (mask.size() != n) {
    throw InputError::bad_value(source.file, "/" + key, std::to_string(n) + " values (one per token)",
                                std::to_string(mask.size()) + " values");
  }
  return mask;
}

}  // namespace

namespace {
void read_header_fields(const JsonSource& source, AttentionRecord& record, std::vector<std::string>& warnings);
}  // namespace

AttentionRecord read_record(const std::string& path, double memory_budget_bytes, std::vector<std::string>& warnings) {
  return read_record(read_input_text(path, memory_budget_bytes), path, warnings);
}

AttentionRecord read_record(const FileText& text, const std::string& path, std::vector<std::string>& warnings) {
  AttentionRecord record = record_from_json(parse_json_file(text, path), path, warnings);
  record.inputs = {path};
  return record;
}

namespace {

// What a dump's record and a safetensors header's record begin with: the object checked, members
// it does not know named in a warning, and its tokens read.
AttentionRecord record_tokens(const JsonSource& source, std::vector<std::string>& warnings,
                              const std::set<std::string>& extra_members) {
  require_object(source);
  std::set<std::string> known = kRecordMembers;
  known.insert(extra_members.begin(), extra_members.end());
  if (std::string warning = unknown_members_warning(source.root, source.file, "", known, "an attention dump (docs/output-formats.md)");
      !warning.empty())
    warnings.push_back(std::move(warning));
  AttentionRecord record;
  record.inputs = {source.file};
  record.query_tokens = read_tokens_field(source, "query_tokens");
  record.key_tokens = read_tokens_field(source, "key_tokens");
  return record;
}

}  // namespace

AttentionRecord record_from_json(const nlohmann::json& root, const std::string& path, std::vector<std::string>& warnings,
                                 const std::set<std::string>& extra_members) {
  const JsonSource source{root, path};
  AttentionRecord record = record_tokens(source, warnings, extra_members);
  const long n_q = static_cast<long>(record.query_tokens.size());
  const long n_k = static_cast<long>(record.key_tokens.size());
  record.weights = read_weight_stack(source, n_q, n_k);
  read_header_fields(source, record, warnings);
  return record;
}

AttentionRecord record_from_header(const nlohmann::json& header, std::vector<Matrix> weights, const std::string& path,
                                   const std::string& weights_name, std::vector<std::string>& warnings,
                                   const std::set<std::string>& extra_members) {
  const JsonSource source{header, path};
  AttentionRecord record = record_tokens(source, warnings, extra_members);
  const long n_q = static_cast<long>(record.query_tokens.size());
  const long n_k = static_cast<long>(record.key_tokens.size());
  if (weights.empty()) throw InputError::bad_value(path, weights_name, "[head, query, key] attention weights", "no heads");
  for (const Matrix& w : weights)
    require_shape(w, n_q, n_k, path, weights_name, std::to_string(n_q) + " query tokens x " + std::to_string(n_k) + " key tokens");
  record.weights = std::move(weights);
  read_header_fields(source, record, warnings);
  return record;
}

namespace {

void read_header_fields(const JsonSource& source, AttentionRecord& record, std::vector<std::string>& warnings) {
  const std::string& path = source.file;
  record.num_heads = static_cast<int>(record.weights.size());
  if (const json* heads = source.find("num_heads")) {
    const long long declared = read_integer(*heads, path, "/num_heads", 1, 1 << 20);
    if (declared != record.num_heads) {
      throw InputError::inconsistent(path, "/num_heads: " + counted(declared, "head") + " declared, but /weights holds " +
                                               std::to_string(record.num_heads));
    }
  }
  check_format(source);
  if (const json* mode = source.find("mode")) record.mode = read_string(*mode, path, "/mode");
  if (record.mode != "self" && record.mode != "cross") {
    throw InputError::bad_value(path, "/mode", "\"self\" or \"cross\"", "\"" + record.mode + "\"");
  }
  if (const json* model = source.find("model"); model && !model->is_null()) {
    if (!model->is_string())
      throw InputError::bad_value(path, "/model", "a string (the model's name) or null", describe_json(*model));
    record.model = model->get<std::string>();
  }
  if (const json* layer = source.find("layer"); layer && !layer->is_null()) {
    record.layer = static_cast<int>(read_integer(*layer, path, "/layer", 0, 1'000'000));
  }
  if (const json* causal = source.find("causal")) {
    if (!causal->is_boolean()) throw InputError::bad_value(path, "/causal", "true or false", describe_json(*causal));
    record.causal = causal->get<bool>();
  }
  if (const json* window = source.find("sliding_window"); window && !window->is_null())
    record.sliding_window = static_cast<long>(read_integer(*window, path, "/sliding_window", 1, (1LL << 31) - 1));
  if (const json* cap = source.find("logit_softcap"); cap && !cap->is_null()) {
    record.logit_softcap = read_scalar(*cap, path, "/logit_softcap");
    if (!(record.logit_softcap > 0)) throw InputError::bad_value(path, "/logit_softcap", "a soft-cap > 0", cap->dump());
  }
  if (const json* no_rope = source.find("no_rope"); no_rope && !no_rope->is_null()) {
    if (!no_rope->is_boolean()) throw InputError::bad_value(path, "/no_rope", "true or false", describe_json(*no_rope));
    record.no_rope = no_rope->get<bool>();
  }
  if (const json* scale = source.find("scale")) {
    record.scale = read_scalar(*scale, path, "/scale");
    // 0 is what a dump holds when the scale is unknown (model dumps' layers).
    if (!(record.scale >= 0))
      throw InputError::bad_value(path, "/scale", "a number > 0 (or 0: unknown)", scale->dump());
  }
  if (const json* rope = source.find("rope"); rope && !rope->is_null()) record.rope = read_applied_rope(*rope, path, warnings);
  record.key_mask = optional_mask(source, "key_mask", record.key_tokens.size());
  record.query_mask = optional_mask(source, "query_mask", record.query_tokens.size());
  validate_distributions(record, path);
  read_measure_fields(source, record);
}

}  // namespace

bool is_record_text(const FileText& text, const std::string& path) {
  // The fast reader: a sentence file's big matrices are not turned into a JSON document just
  // to look at its keys (nlohmann took 43 ms of a 56 ms `compare` on USE-Lite's 4.4 MB file).
  const FastDocument document = parse_json_document(text, path, {"embeddings", "W_Q", "W_K", "W_V", "W_O"});
  return document.root.is_object() && document.root.contains("weights") && !document.root.contains("embeddings") &&
         document.matrices.count("embeddings") == 0;
}

}  // namespace attnviz
