#include "records/input_schema.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "io/json_reader.hpp"
#include "records/input_members.hpp"

namespace attnviz {

using nlohmann::json;

namespace {

constexpr long long kMaxHeads = 4096;
constexpr long long kMaxLayer = 1'000'000;
constexpr long long kMaxPosition = 1'000'000'000'000LL;
// The smallest RoPE linear scaling factor: kMaxPosition / factor stays within float32 (3.4e38).
constexpr double kMinLinearFactor = 3e-27;
static_assert(static_cast<double>(kMaxPosition) / kMinLinearFactor < static_cast<double>(std::numeric_limits<float>::max()));

std::string optional_string(const JsonSource& source, const std::string& key) {
  const json* value = source.find(key);
  if (value == nullptr) return {};
  if (!value->is_string()) throw InputError::bad_value(source.file, "/" + key, "a string", describe_json(*value));
  return value->get<std::string>();
}

std::optional<int> optional_layer(const JsonSource& source) {
  const json* value = source.find("layer");
  if (value == nullptr) return std::nullopt;
  return static_cast<int>(read_integer(*value, source.file, "/layer", 0, kMaxLayer));
}

std::vector<long long> read_positions(const JsonSource& source, std::size_t n_tokens) {
  const json* value = source.find("positions");
  std::vector<long long> positions;
  if (value == nullptr) {
    for (std::size_t i = 0; i < n_tokens; ++i) positions.push_back(static_cast<long long>(i));
    return positions;
  }
  if (!value->is_array() || value->size() != n_tokens) {
    throw InputError::bad_value(source.file, "/positions",
                                "a list of " + std::to_string(n_tokens) + " integers (one per token)",
                                describe_json(*value));
  }
  for (std::size_t i = 0; i < value->size(); ++i) {
    positions.push_back(read_integer((*value)[i], source.file, "/positions/" + std::to_string(i),
                                     -kMaxPosition, kMaxPosition));
  }
  return positions;
}

Sentence read_sentence(const JsonSource& source) {
  require_object(source);
  if (!source.has("tokens") && source.has("W_Q")) {
    throw InputError::missing_field(source.file, "/tokens",
                                    "this looks like a weights file, not a sentence file: it has W_Q but no tokens");
  }
  Sentence sentence;
  sentence.file = source.file;
  sentence.tokens = read_strings(source.require("tokens", "n token strings"), source.file, "/tokens");
  const long n = static_cast<long>(sentence.tokens.size());
  sentence.embeddings =
      source.take_matrix("embeddings", "n rows of d_model numbers, one per token", "n x d_model");
  if (sentence.embeddings.rows() != n) {
    throw InputError::inconsistent(source.file, "/embeddings: " + std::to_string(sentence.embeddings.rows()) +
                                                    " rows for " + std::to_string(n) +
                                                    " tokens in /tokens (one embedding row per token)");
  }
  if (const json* mask = source.find("attention_mask")) {
    sentence.attention_mask = read_mask(*mask, source.file, "/attention_mask");
    if (static_cast<long>(sentence.attention_mask.size()) != n) {
      throw InputError::inconsistent(source.file, "/attention_mask: " +
                                                      std::to_string(sentence.attention_mask.size()) +
                                                      " values for " + std::to_string(n) + " tokens in /tokens");
    }
  }
  sentence.positions = read_positions(source, sentence.tokens.size());
  sentence.model = optional_string(source, "model");
  sentence.layer = optional_layer(source);
  return sentence;
}

Vector optional_vector(const JsonSource& source, const std::string& key, long width,
                       const std::string& meaning) {
  const json* value = source.find(key);
  if (value == nullptr) return {};
  Vector v = read_vector(*value, source.file, "/" + key);
  if (v.size() != width) {
    throw InputError::bad_value(source.file, "/" + key, std::to_string(width) + " numbers (" + meaning + ")",
                                std::to_string(v.size()) + " numbers");
  }
  return v;
}

// What a positive float32 field expects; a positive literal that rounds to 0 (1e-46) says so,
// or "expected a positive number, got 1e-46" would read as a contradiction.
std::string positive_expectation(const json& value) {
  const bool underflows = value.is_number() && value.get<double>() > 0;
  return underflows ? "a positive number float32 can hold (at least 1.4e-45; this one rounds to 0)" : "a positive number";
}

// Every member of a settings block changes the maths, so one attnviz does not know is refused
// rather than skipped (a misspelt "thetta" would silently rotate by the default θ).
void refuse_unknown_settings(const json& block, const std::string& file, const std::string& pointer,
                             const std::set<std::string>& known) {
  for (const auto& [key, value] : block.items()) {
    if (known.count(key) != 0) continue;
    std::string names;
    for (const std::string& name : known) names += (names.empty() ? "" : ", ") + name;
    throw InputError::inconsistent(file, pointer + "/" + key + ": not a setting attnviz knows here (" + names +
                                             "); it would change the maths, so it is refused rather than ignored");
  }
}

RopeSettings read_rope(const json& value, const std::string& file) {
  if (!value.is_object()) throw InputError::bad_value(file, "/rope", "an object {style, theta, dim}", describe_json(value));
  refuse_unknown_settings(value, file, "/rope", {"style", "theta", "dim", "scaling"});
  RopeSettings rope;
  const auto style = value.find("style");
  if (style == value.end()) throw InputError::missing_field(file, "/rope/style", "\"interleaved\" or \"half\"");
  if (*style == "interleaved") {
    rope.style = RopeStyle::Interleaved;
  } else if (*style == "half") {
    rope.style = RopeStyle::Half;
  } else {
    throw InputError::bad_value(file, "/rope/style", "\"interleaved\" or \"half\"", describe_json(*style));
  }
  if (const auto theta = value.find("theta"); theta != value.end()) {
    rope.theta = read_scalar(*theta, file, "/rope/theta");
    if (!(rope.theta > 0)) throw InputError::bad_value(file, "/rope/theta", positive_expectation(*theta), theta->dump());
  }
  if (const auto dim = value.find("dim"); dim != value.end()) {
    rope.dim = static_cast<long>(read_integer(*dim, file, "/rope/dim", 2, std::numeric_limits<int>::max()));
  }
  return rope;
}

// A RoPE scaling block, as Hugging Face's config.json writes rope_scaling: {"type" (or
// "rope_type"): "linear", "factor": f}, or null / type "default" for none. Only linear position
// interpolation is applied (positions divided by f, as the model path applies a config's
// linear rope_scaling); any other kind (llama3, yarn, dynamic, longrope, …) is refused, naming
// it. Returns the factor, 1 for none.
double read_linear_scaling(const json& value, const std::string& file, const std::string& pointer) {
  if (value.is_null()) return 1.0;
  if (!value.is_object())
    throw InputError::bad_value(file, pointer, "an object {\"type\": \"linear\", \"factor\": f} or null",
                                describe_json(value));
  const auto type = value.find("type");
  const auto rope_type = value.find("rope_type");
  if (type == value.end() && rope_type == value.end())
    throw InputError::missing_field(file, pointer + "/type", "the scaling type, \"linear\"");
  const auto kind = rope_type != value.end() ? rope_type : type;
  const std::string kind_pointer = pointer + (rope_type != value.end() ? "/rope_type" : "/type");
  const std::string name = read_string(*kind, file, kind_pointer);
  if (type != value.end() && rope_type != value.end() && *type != *rope_type)
    throw InputError::inconsistent(file, pointer + "/rope_type " + rope_type->dump() + " and " + pointer + "/type " +
                                             type->dump() + " disagree");
  if (name == "default") {
    // "default" scales nothing: a factor beside it would be dropped in silence.
    for (const auto& [key, member] : value.items())
      if (key != "type" && key != "rope_type")
        throw InputError::inconsistent(file, pointer + "/" + key + ": given with " + kind_pointer +
                                                 " \"default\", which scales nothing (for linear scaling write "
                                                 "\"linear\"; otherwise drop /" + key + ")");
    return 1.0;
  }
  if (name != "linear")
    throw InputError::bad_value(file, kind_pointer,
                                "\"linear\" (the only RoPE scaling a weights file applies; \"" + name +
                                    "\" is not implemented here)",
                                "\"" + name + "\"");
  // original_max_position_embeddings: transformers' configs carry it; linear scaling does not use it.
  refuse_unknown_settings(value, file, pointer, {"type", "rope_type", "factor", "original_max_position_embeddings"});
  if (const auto max_positions = value.find("original_max_position_embeddings"); max_positions != value.end())
    read_integer(*max_positions, file, pointer + "/original_max_position_embeddings", 1, kMaxPosition);
  const auto factor = value.find("factor");
  if (factor == value.end()) throw InputError::missing_field(file, pointer + "/factor", "the linear scaling factor");
  // As rope/theta: a float32 number > 0; and positions (|p| <= kMaxPosition) divided by it
  // must fit float32 too.
  const double f = read_scalar(*factor, file, pointer + "/factor");
  if (!(f >= kMinLinearFactor)) {
    const std::string expected =
        factor->get<double>() > 0 ? "a factor of at least 3e-27 (positions up to 1e12 divided by it must fit float32)"
            : "a number > 0";
    throw InputError::bad_value(file, pointer + "/factor", expected, factor->dump());
  }
  return f;
}

// The file's RoPE scaling, from the rope block's "scaling" or a top-level "rope_scaling"
// (Hugging Face's name), never both.
void read_rope_scaling(const JsonSource& source, WeightsFile& weights) {
  const json* rope = source.find("rope");
  const json* nested = rope != nullptr && rope->contains("scaling") ? &rope->at("scaling") : nullptr;
  const json* top = source.find("rope_scaling");
  // null (Hugging Face's "no scaling") scales nothing, so it asks for no RoPE either.
  if (nested != nullptr && nested->is_null()) nested = nullptr;
  if (top != nullptr && top->is_null()) top = nullptr;
  if (nested != nullptr && top != nullptr)
    throw InputError::inconsistent(source.file, "/rope/scaling and /rope_scaling both given: give the scaling once");
  if (nested == nullptr && top == nullptr) return;
  weights.rope_scaling_pointer = nested != nullptr ? "/rope/scaling" : "/rope_scaling";
  weights.rope_linear_factor = read_linear_scaling(nested != nullptr ? *nested : *top, source.file,
                                                   weights.rope_scaling_pointer);
  if (weights.rope) weights.rope->linear_factor = weights.rope_linear_factor;
}

// A projection's rows must equal the width of the embeddings it multiplies; the message
// points at the embeddings, which are the usual culprit (e.g. a source of another model).
void require_input_width(const Matrix& w, const std::string& w_file, const std::string& w_pointer,
                         long d_model, const std::string& sentence_file) {
  if (w.rows() == d_model) return;
  throw InputError::inconsistent(sentence_file, "/embeddings: " + std::to_string(d_model) +
                                                    " columns, expected " + std::to_string(w.rows()) +
                                                    " (the rows of " + w_pointer + " in " + w_file + ")");
}

// Widths of every matrix, derived from W_Q/W_K/W_V and the heads, then checked against
// each other: the one place the layer's shape rules live.
WeightsFile read_weights(const JsonSource& source, long d_model_q, const std::string& q_file,
                         long d_model_kv, const std::string& kv_file) {
  require_object(source);
  const std::string& file = source.file;
  if (!source.has("W_Q") && source.has("tokens")) {
    throw InputError::missing_field(file, "/W_Q",
                                    "this looks like a sentence file, not a weights file: it has tokens but no W_Q");
  }
  WeightsFile weights;
  weights.file = file;
  AttentionLayer& layer = weights.layer;
  layer.num_heads = static_cast<int>(read_integer(source.require("num_heads", "h, the number of query heads"),
                                                  file, "/num_heads", 1, kMaxHeads));
  layer.num_kv_heads = layer.num_heads;
  if (const json* kv = source.find("num_kv_heads")) {
    layer.num_kv_heads = static_cast<int>(read_integer(*kv, file, "/num_kv_heads", 1, kMaxHeads));
    if (layer.num_heads % layer.num_kv_heads != 0) {
      throw InputError::inconsistent(file, "/num_kv_heads: " + std::to_string(layer.num_kv_heads) +
                                               " does not divide num_heads = " + std::to_string(layer.num_heads) +
                                               " (each key/value head serves num_heads / num_kv_heads query heads)");
    }
  }
  const long h = layer.num_heads;
  const long h_kv = layer.num_kv_heads;
  layer.w_q = source.take_matrix("W_Q", "d_model x h·d_k", "d_model x h·d_k");
  if (layer.w_q.cols() % h != 0) {
    throw InputError::inconsistent(file, "/W_Q: " + std::to_string(layer.w_q.cols()) +
                                             " columns are not divisible by num_heads = " + std::to_string(h) +
                                             " (columns = num_heads·d_k)");
  }
  const long d_k = layer.w_q.cols() / h;
  require_input_width(layer.w_q, file, "/W_Q", d_model_q, q_file);
  layer.w_k = source.take_matrix("W_K", "d_model x num_kv_heads·d_k", "d_model x num_kv_heads·d_k");
  require_input_width(layer.w_k, file, "/W_K", d_model_kv, kv_file);
  require_shape(layer.w_k, d_model_kv, h_kv * d_k, file, "/W_K",
                "d_model x num_kv_heads·d_k = " + std::to_string(h_kv) + "·" + std::to_string(d_k));
  layer.w_v = source.take_matrix("W_V", "d_model x num_kv_heads·d_v", "d_model x num_kv_heads·d_v");
  if (layer.w_v.cols() % h_kv != 0) {
    throw InputError::inconsistent(file, "/W_V: " + std::to_string(layer.w_v.cols()) +
                                             " columns are not divisible by num_kv_heads = " + std::to_string(h_kv));
  }
  const long d_v = layer.w_v.cols() / h_kv;
  require_input_width(layer.w_v, file, "/W_V", d_model_kv, kv_file);
  layer.b_q = optional_vector(source, "b_Q", h * d_k, "num_heads·d_k, the columns of W_Q");
  layer.b_k = optional_vector(source, "b_K", h_kv * d_k, "num_kv_heads·d_k, the columns of W_K");
  layer.b_v = optional_vector(source, "b_V", h_kv * d_v, "num_kv_heads·d_v, the columns of W_V");
  if (source.has("W_O")) {
    layer.w_o = source.take_matrix("W_O", "", "num_heads·d_v x d_out");
    require_shape(layer.w_o, h * d_v, layer.w_o.cols(), file, "/W_O",
                  "num_heads·d_v = " + std::to_string(h) + "·" + std::to_string(d_v) + " x d_out");
    layer.b_o = optional_vector(source, "b_O", layer.w_o.cols(), "d_out, the columns of W_O");
  } else if (source.find("b_O") != nullptr) {
    throw InputError::missing_field(file, "/W_O", "b_O is given, so W_O is needed too");
  }
  if (const json* scale = source.find("scale")) {
    layer.scale = read_scalar(*scale, file, "/scale");
    if (!(*layer.scale > 0)) throw InputError::bad_value(file, "/scale", positive_expectation(*scale), scale->dump());
  }
  if (const json* rope = source.find("rope")) weights.rope = read_rope(*rope, file);
  read_rope_scaling(source, weights);
  if (const json* causal = source.find("causal")) weights.causal = read_bool(*causal, file, "/causal");
  weights.model = optional_string(source, "model");
  weights.layer_index = optional_layer(source);
  weights.attention = optional_string(source, "attention");
  if (!weights.attention.empty() && weights.attention != "self" && weights.attention != "cross") {
    throw InputError::bad_value(file, "/attention", "\"self\" or \"cross\"", "\"" + weights.attention + "\"");
  }
  return weights;
}

// A weights file that declares its kind of attention must be run as that kind: a cross-attention
// layer without --source would draw self-attention the layer never computes (the widths often
// agree, so nothing else would stop it). Checked before the weights' shapes, whose errors (the
// sentence's width against W_K's) would not say that --source is missing.
void require_declared_kind(const JsonSource& weights, const InputBundle& bundle) {
  const std::string& file = weights.file;
  if (!weights.root.is_object() || !weights.root.contains("attention") || !weights.root["attention"].is_string()) return;
  const std::string attention = weights.root["attention"].get<std::string>();
  if (attention == "cross" && !bundle.source) {
    throw InputError::inconsistent(file, "/attention: \"cross\" (queries attend to the keys and values of another "
                                         "sentence), but no --source was given; run with --source SOURCE.json "
                                         "(without it the picture would be self-attention this layer never computes)");
  }
  if (attention == "self" && bundle.source) {
    throw InputError::inconsistent(file, "/attention: \"self\" (the sentence attends to itself), but --source " +
                                             bundle.source->file + " asks for cross-attention; drop --source");
  }
}

// The sentence and the weights file each may name the model and layer; given in both, they must
// agree, or the picture's title (which takes the weights file's) would name a layer the
// sentence's embeddings were not taken for. Checked before the weights' shapes, whose errors
// would otherwise blame the sentence's embeddings for the mix-up.
void require_same_origin(const Sentence& sentence, const JsonSource& weights) {
  if (sentence.file == weights.file || !weights.root.is_object()) return;
  const std::string model = optional_string(weights, "model");
  const std::optional<int> layer = optional_layer(weights);
  if (!sentence.model.empty() && !model.empty() && sentence.model != model)
    throw InputError::inconsistent(weights.file, "/model \"" + model + "\" disagrees with /model \"" + sentence.model +
                                                     "\" in the sentence file " + sentence.file +
                                                     " (embeddings and weights of different models?)");
  if (sentence.layer && layer && *sentence.layer != *layer)
    throw InputError::inconsistent(weights.file, "/layer " + std::to_string(*layer) + " disagrees with /layer " +
                                                     std::to_string(*sentence.layer) + " in the sentence file " +
                                                     sentence.file + " (the embeddings were taken for another layer)");
}

// The large members, which the fast path reads straight into matrices.
const std::set<std::string> kMatrixMembers = {"embeddings", "W_Q", "W_K", "W_V", "W_O"};

InputBundle load_documents(const InputPaths& paths, double memory_budget_bytes, InputTexts& texts, bool fast) {
  std::map<std::string, FastDocument> documents;  // each distinct file parsed once
  std::map<std::string, InputFileRoles> roles;
  auto source = [&](const std::string& path) -> JsonSource {
    auto it = documents.find(path);
    if (it == documents.end()) {
      const FileText& text = input_text(texts, path, memory_budget_bytes);
      FastDocument document = fast ? parse_json_document(text, path, kMatrixMembers)
                                   : FastDocument{parse_json_file(text, path), {}};
      it = documents.emplace(path, std::move(document)).first;
      // Member names now: read_matrix takes the fast path's matrices out of the document.
      std::vector<std::string>& members = roles[path].members;
      if (it->second.root.is_object())
        for (const auto& [key, value] : it->second.root.items()) members.push_back(key);
      for (const auto& [key, matrix] : it->second.matrices) members.push_back(key);
      std::sort(members.begin(), members.end());
    }
    return {it->second.root, path, &it->second.matrices};
  };
  InputBundle bundle;
  bundle.queries = read_sentence(source(paths.sentence));
  roles[paths.sentence].sentence = true;
  if (!paths.source.empty()) {
    bundle.source = read_sentence(source(paths.source));
    roles[paths.source].sentence = true;
  }
  const std::string& weights_path = paths.weights.empty() ? paths.sentence : paths.weights;
  const Sentence& keys = bundle.keys();
  require_same_origin(bundle.queries, source(weights_path));
  require_declared_kind(source(weights_path), bundle);
  bundle.weights = read_weights(source(weights_path), bundle.queries.embeddings.cols(), bundle.queries.file,
                                keys.embeddings.cols(), keys.file);
  roles[weights_path].weights = true;
  // A member of the role a file does not play here names the file that plays it.
  const std::string sentence_note = "the sentence is " + paths.sentence;
  const std::string weights_note = "the weights are " + weights_path;
  for (const auto& [file, file_roles] : roles) {
    if (std::string warning =
            unread_members_warning(file, file_roles, file_roles.weights ? sentence_note : weights_note);
        !warning.empty())
      bundle.warnings.push_back(std::move(warning));
  }
  return bundle;
}

}  // namespace

InputBundle load_inputs(const InputPaths& paths, double memory_budget_bytes, InputTexts texts) {
  // Any InputError on the fast path (or a matrix member it took twice, when --source is the
  // sentence file) reruns the load on plain nlohmann documents, so every message is that path's.
  // Both passes parse the same texts: a pipe cannot be read a second time.
  try {
    return load_documents(paths, memory_budget_bytes, texts, true);
  } catch (const InputError&) {
  }
  return load_documents(paths, memory_budget_bytes, texts, false);
}

}  // namespace attnviz
