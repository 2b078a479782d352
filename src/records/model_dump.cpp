#include "records/model_dump.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "records/record_json.hpp"

namespace attnviz {

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;  // the dump's fields in docs/models.md's order

constexpr const char* kFormatName = "attnviz.model_attention";
constexpr int kFormatVersion = 1;

// The members finish() and model_json() write (docs/models.md).
const std::set<std::string> kDumpMembers = {"format",        "version",       "model",          "tokens",
                                            "token_ids",     "token_texts",   "text",           "prompt_length",
                                            "generated_text", "chat_prompt", "source_tokens", "source_text",   "target_tokens",
                                            "last_logits",   "rollout_residual", "rollout",     "alti_rollout",
                                            "attention_flow", "layers"};
const std::set<std::string> kModelMembers = {"file", "architecture", "name", "num_layers", "num_heads",
                                             "num_kv_heads", "d_model", "d_k", "context_length", "rope",
                                             "sliding_window", "attention_scale", "attention_softcap",
                                             "final_logit_softcap", "local_rope_theta", "local_rope_scaling", "end_tokens", "activation",
                                             "matmul", "no_rope_layers", "embedding_multiplier", "residual_multiplier",
                                             "logit_divisor"};

// What a model dump's layer holds beside a single-layer dump's fields: its block, and the
// activations --activations adds (BlockActivations).
const std::set<std::string> kLayerMembers = {"stack", "kind", "resid_pre", "resid_mid", "resid_post", "attn_out", "mlp_out"};

}  // namespace

std::set<std::string> model_dump_members() { return kDumpMembers; }

std::set<std::string> model_summary_members() { return kModelMembers; }

std::set<std::string> model_dump_layer_members() { return kLayerMembers; }

namespace {

ordered_json model_json(const ModelSummary& m) {
  ordered_json rope = nullptr;
  if (m.rope)
    rope = {{"style", rope_style_name(m.rope->style)}, {"theta", m.rope->theta}, {"dim", m.rope->dim},
            {"scaling", m.rope_scaling}};
  if (m.rope && m.partial_rotary_factor) rope["partial_rotary_factor"] = *m.partial_rotary_factor;
  ordered_json model = {{"file", m.file},
                        {"architecture", m.architecture},
                        {"name", m.name},
                        {"num_layers", m.num_layers},
                        {"num_heads", m.num_heads},
                        {"num_kv_heads", m.num_kv_heads},
                        {"d_model", m.d_model},
                        {"d_k", m.d_k},
                        {"context_length", m.context_length},
                        {"rope", rope},
                        {"end_tokens", m.end_tokens}};
  // A family's settings, only where the model has them (a llama dump stays as it was).
  const bool windows = std::any_of(m.sliding_window.begin(), m.sliding_window.end(), [](long w) { return w > 0; });
  if (windows) model["sliding_window"] = m.sliding_window;
  if (m.attention_scale) model["attention_scale"] = *m.attention_scale;
  if (m.attention_softcap > 0) model["attention_softcap"] = m.attention_softcap;
  if (m.final_softcap > 0) model["final_logit_softcap"] = m.final_softcap;
  if (m.local_rope_theta && windows) {
    model["local_rope_theta"] = *m.local_rope_theta;
    model["local_rope_scaling"] = m.local_rope_scaling;
  }
  if (!m.no_rope_layers.empty()) model["no_rope_layers"] = m.no_rope_layers;
  if (m.embedding_multiplier != 1.0) model["embedding_multiplier"] = m.embedding_multiplier;
  if (m.residual_multiplier != 1.0) model["residual_multiplier"] = m.residual_multiplier;
  if (m.logit_divisor != 1.0) model["logit_divisor"] = m.logit_divisor;
  if (!m.activation.empty()) model["activation"] = m.activation;
  if (!m.matmul.empty()) model["matmul"] = m.matmul;
  return model;
}

std::string float_text(float value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

template <typename T>
T field_or(const json& root, const char* key, T fallback) {
  const auto it = root.find(key);
  return it == root.end() || it->is_null() ? fallback : it->get<T>();
}

// "linear x4" (any number > 0), as model_job writes a model's RoPE scaling.
bool is_linear_description(const std::string& text) {
  constexpr std::string_view kPrefix = "linear x";
  if (text.rfind(kPrefix, 0) != 0) return false;
  double factor = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, error] = std::from_chars(text.data() + kPrefix.size(), end, factor);
  return error == std::errc() && ptr == end && std::isfinite(factor) && factor > 0;
}

// The dump's model.rope (shown nowhere, but a dump is evidence of what ran): what model_json
// writes, or refused; a member it does not write is named in a warning.
void check_model_rope(const json& model, const std::string& path, std::vector<std::string>& warnings) {
  if (!model.is_object()) return;
  const auto rope = model.find("rope");
  if (rope == model.end() || rope->is_null()) return;
  if (!rope->is_object())
    throw InputError::bad_value(path, "/model/rope", "an object {style, theta, dim, scaling} or null", describe_json(*rope));
  const auto style = rope->find("style");
  if (style != rope->end() && *style != "interleaved" && *style != "half")
    throw InputError::bad_value(path, "/model/rope/style", "\"interleaved\" or \"half\"", describe_json(*style));
  if (const auto theta = rope->find("theta"); theta != rope->end() && !(read_scalar(*theta, path, "/model/rope/theta") > 0))
    throw InputError::bad_value(path, "/model/rope/theta", "a number > 0", theta->dump());
  if (const auto dim = rope->find("dim"); dim != rope->end()) read_integer(*dim, path, "/model/rope/dim", 2, 1 << 20);
  if (const auto scaling = rope->find("scaling"); scaling != rope->end()) {
    // "none", "linear x<f>", "llama3", or both scalings: the kinds the model path applies.
    const std::string text = read_string(*scaling, path, "/model/rope/scaling");
    const std::size_t comma = text.find(", llama3");
    const std::string linear = comma == std::string::npos ? text : text.substr(0, comma);
    const bool known = text == "none" || text == "llama3" || is_linear_description(text) ||
                       (comma != std::string::npos && comma + 8 == text.size() && is_linear_description(linear));
    if (!known)
      throw InputError::bad_value(path, "/model/rope/scaling",
                                  "a scaling the model path applies: \"none\", \"linear x<factor>\" or \"llama3\"",
                                  describe_json(*scaling));
  }
  if (std::string warning = unknown_members_warning(*rope, path, "/model/rope", {"style", "theta", "dim", "scaling"},
                                                    "a model dump's RoPE");
      !warning.empty())
    warnings.push_back(std::move(warning));
}

// A layer's "stack" and "kind" ("decoder" and "self" when absent, as the first dumps wrote):
// strings of the kinds a model has, agreeing with the record's mode.
void read_block_kind_members(const json& layer, const std::string& where, AttentionBlock& block) {
  if (!layer.is_object()) return;
  if (const auto stack = layer.find("stack"); stack != layer.end()) block.stack = read_string(*stack, where, "/stack");
  if (const auto kind = layer.find("kind"); kind != layer.end()) block.kind = read_string(*kind, where, "/kind");
  if (block.stack != "encoder" && block.stack != "decoder")
    throw InputError::bad_value(where, "/stack", "\"encoder\" or \"decoder\"", "\"" + block.stack + "\"");
  if (block.kind != "self" && block.kind != "cross")
    throw InputError::bad_value(where, "/kind", "\"self\" or \"cross\"", "\"" + block.kind + "\"");
  if (block.stack == "encoder" && block.kind == "cross")
    throw InputError::inconsistent(where, "/kind \"cross\" in the encoder: only a decoder has cross-attention");
}

}  // namespace

void ModelDumpWriter::add(const AttentionBlock& block) {
  std::string text = layers_.empty() ? "\n" : ",\n";
  std::string prefix = "\"stack\": " + json(block.stack).dump() + ", \"kind\": " + json(block.kind).dump() + ",";
  const BlockActivations& a = block.activations;
  for (const auto& [name, m] : {std::pair<const char*, const Matrix*>{"resid_pre", &a.resid_pre}, {"resid_mid", &a.resid_mid},
                                {"resid_post", &a.resid_post}, {"attn_out", &a.attn_out}, {"mlp_out", &a.mlp_out}}) {
    if (m->size() == 0) continue;
    prefix += "\n  \"" + std::string(name) + "\": ";
    append_matrix_json(*m, prefix);
    prefix += ",";
  }
  append_record_json(block.record, prefix, text);
  layers_.push_back(std::move(text));
}

void ModelDumpWriter::add_field(const std::string& name, std::string json_text) {
  fields_.emplace_back(name, std::move(json_text));
}

namespace {

ordered_json run_header(const ModelRunInfo& info) {
  ordered_json head = {{"format", kFormatName},
               {"version", kFormatVersion},
               {"model", model_json(info.model)},
               {"tokens", info.tokens},
               {"token_ids", info.token_ids},
               {"text", info.text},
               {"prompt_length", info.prompt_length},
               {"generated_text", info.generated_text}};
  // Added after the first dumps of version 1, which readers still take: optional.
  if (!info.token_texts.empty()) head["token_texts"] = info.token_texts;
  if (!info.chat_prompt.empty()) head["chat_prompt"] = info.chat_prompt;  // --chat / --messages (issue 34)
  if (!info.source_tokens.empty()) {
    head["source_tokens"] = info.source_tokens;
    head["source_text"] = info.source_text;
    head["target_tokens"] = info.target_tokens;
  }
  return head;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> model_dump_header(const ModelRunInfo& info) {
  std::vector<std::pair<std::string, std::string>> members;
  const ordered_json head = run_header(info);
  for (const auto& [name, value] : head.items())
    members.emplace_back(name, value.dump(-1, ' ', false, ordered_json::error_handler_t::replace));
  return members;
}

std::vector<std::string> ModelDumpWriter::finish(const ModelRunInfo& info, bool logits) {
  const ordered_json head = run_header(info);
  // A text that ends inside a UTF-8 character (a byte token such as <0xE7>) shows U+FFFD there.
  std::string out = head.dump(2, ' ', false, ordered_json::error_handler_t::replace);
  out.pop_back();  // the closing brace
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (logits) {
    out += ",\n  \"last_logits\": [";
    for (std::size_t i = 0; i < info.last_logits.size(); ++i) out += (i ? ", " : "") + float_text(info.last_logits[i]);
    out += "]";
  }
  for (const auto& [name, value] : fields_) out += ",\n  " + json(name).dump() + ": " + value;
  out += ",\n  \"layers\": [";
  std::vector<std::string> document;
  document.reserve(layers_.size() + 2);
  document.push_back(std::move(out));
  for (std::string& layer : layers_) document.push_back(std::move(layer));  // leaves one empty string a layer
  document.push_back("\n  ]\n}\n");
  return document;
}

bool is_model_dump_text(const FileText& text) {
  // The format name sits in the first lines of every dump attnviz writes; a full parse is not
  // needed to tell the two kinds apart.
  const std::string_view head = text.view().substr(0, 256);
  return head.find(std::string("\"") + kFormatName + "\"") != std::string_view::npos;
}

ModelDump read_model_dump(const FileText& text, const std::string& path, std::vector<std::string>& warnings) {
  const json root = parse_json_file(text, path);
  ModelDump dump = read_model_dump_header(root, path, warnings);
  const auto layers = root.find("layers");
  if (layers == root.end() || !layers->is_array())
    throw InputError::missing_field(path, "/layers", "one object per attention block");
  if (layers->empty()) throw InputError::bad_value(path, "/layers", "at least one attention block", "[]");
  for (std::size_t i = 0; i < layers->size(); ++i) {
    const json& layer = (*layers)[i];
    const std::string where = path + ": /layers/" + std::to_string(i);
    AttentionBlock block;
    block.stack = "decoder";
    block.kind = "self";
    read_block_kind(layer, where, block);
    block.record = record_from_json(layer, where, warnings, kLayerMembers);
    add_read_block(std::move(block), where, path, dump);
  }
  finish_read_dump(dump);
  return dump;
}

void read_block_kind(const nlohmann::json& layer, const std::string& where, AttentionBlock& block) {
  read_block_kind_members(layer, where, block);
}

void add_read_block(AttentionBlock block, const std::string& where, const std::string& path, ModelDump& dump) {
  if (block.record.mode != block.kind)
    throw InputError::inconsistent(where, "/kind \"" + block.kind + "\" and /mode \"" + block.record.mode +
                                              "\" disagree (a " + block.kind + "-attention block's record has mode \"" +
                                              block.kind + "\")");
  block.record.inputs = {path};
  if (!block.record.layer) throw InputError::missing_field(where, "/layer", "the layer number");
  block.layer = *block.record.layer;
  for (const AttentionBlock& earlier : dump.blocks) {
    if (earlier.stack == block.stack && earlier.kind == block.kind && earlier.layer == block.layer)
      throw InputError::inconsistent(where, "the " + block.stack + "'s layer " + std::to_string(block.layer) + " " +
                                                block.kind + "-attention appears twice in /layers");
  }
  dump.blocks.push_back(std::move(block));
}

void finish_read_dump(ModelDump& dump) {
  // An encoder or cross-attention block means an encoder-decoder: its heads need the block named.
  const bool encoder_decoder = std::any_of(dump.blocks.begin(), dump.blocks.end(), [](const AttentionBlock& b) {
    return b.stack != "decoder" || b.kind != "self";
  });
  for (AttentionBlock& block : dump.blocks) block.encoder_decoder = encoder_decoder;
}

ModelDump read_model_dump_header(const nlohmann::json& root, const std::string& path, std::vector<std::string>& warnings) {
  if (!root.is_object() || field_or<std::string>(root, "format", "") != kFormatName)
    throw InputError::bad_value(path, "/format", std::string("\"") + kFormatName + "\"", "something else");
  for (std::string warning :
       {unknown_members_warning(root, path, "", kDumpMembers, "a model dump (docs/models.md)"),
        unknown_members_warning(root.contains("model") ? root.at("model") : json(), path, "/model", kModelMembers,
                                "a model dump's model")})
    if (!warning.empty()) warnings.push_back(std::move(warning));
  const auto version = root.find("version");
  if (version == root.end() || !version->is_number_integer() || version->get<long long>() != kFormatVersion)
    throw InputError::bad_value(path, "/version", std::to_string(kFormatVersion) + " (the version this attnviz reads)",
                                version == root.end() ? "nothing" : version->dump());
  ModelDump dump;
  try {
    const json& model = root.at("model");
    ModelSummary& m = dump.info.model;
    m.file = field_or<std::string>(model, "file", "");
    m.architecture = field_or<std::string>(model, "architecture", "");
    m.name = field_or<std::string>(model, "name", "");
    m.num_layers = field_or<int>(model, "num_layers", 0);
    m.num_heads = field_or<int>(model, "num_heads", 0);
    m.num_kv_heads = field_or<int>(model, "num_kv_heads", 0);
    m.d_model = field_or<long>(model, "d_model", 0);
    m.d_k = field_or<long>(model, "d_k", 0);
    m.context_length = field_or<long>(model, "context_length", 0);
    m.end_tokens = field_or<std::vector<std::int32_t>>(model, "end_tokens", {});
    m.activation = field_or<std::string>(model, "activation", "");
    m.matmul = field_or<std::string>(model, "matmul", "");
    dump.info.tokens = field_or<Tokens>(root, "tokens", {});
    dump.info.token_ids = field_or<std::vector<std::int32_t>>(root, "token_ids", {});
    dump.info.token_texts = field_or<Tokens>(root, "token_texts", {});
    dump.info.text = field_or<std::string>(root, "text", "");
    dump.info.prompt_length = field_or<int>(root, "prompt_length", 0);
    dump.info.generated_text = field_or<std::string>(root, "generated_text", "");
    dump.info.chat_prompt = field_or<std::string>(root, "chat_prompt", "");
    dump.info.source_tokens = field_or<Tokens>(root, "source_tokens", {});
    dump.info.source_text = field_or<std::string>(root, "source_text", "");
    dump.info.target_tokens = field_or<Tokens>(root, "target_tokens", {});
  } catch (const json::exception& e) {
    throw InputError::inconsistent(path, std::string("the model dump's header is malformed: ") + e.what());
  }
  check_model_rope(root.at("model"), path, warnings);
  if (!dump.info.token_ids.empty() && dump.info.token_ids.size() != dump.info.tokens.size())
    throw InputError::bad_value(path, "/token_ids", std::to_string(dump.info.tokens.size()) + " ids, one per token of /tokens",
                                std::to_string(dump.info.token_ids.size()));
  if (!dump.info.token_texts.empty() && dump.info.token_texts.size() != dump.info.tokens.size())
    throw InputError::bad_value(path, "/token_texts", std::to_string(dump.info.tokens.size()) + " texts, one per token of /tokens",
                                std::to_string(dump.info.token_texts.size()));
  return dump;
}

}  // namespace attnviz
