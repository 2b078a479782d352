#include "model/ct2_model.hpp"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/json_file.hpp"
#include "model/formats/ct2_file.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

// SequenceToSequenceModelConfig's defaults (model_spec.py), used when config.json is absent
// (CTranslate2 2.x directories such as the aren-transliteration test model).
struct Ct2Config {
  std::string unk_token = "<unk>";
  std::string bos_token = "<s>";
  std::string eos_token = "</s>";
  std::string decoder_start_token = "<s>";
  bool add_source_bos = false;       // the source gets bos_token before it
  bool add_source_eos = false;       // and eos_token after it (sequence_to_sequence.cc)
  double layer_norm_epsilon = 1e-5;  // CTranslate2's LayerNorm default
};

bool config_flag(const nlohmann::json& config, const std::string& path, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return false;
  if (!it->is_boolean()) throw InputError::bad_value(path, std::string("/") + key, "true or false", it->dump());
  return it->get<bool>();
}

std::string config_string(const nlohmann::json& config, const std::string& path, const char* key,
                          const std::string& fallback) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw InputError::bad_value(path, std::string("/") + key, "a string", it->type_name());
  return it->get<std::string>();
}

Ct2Config read_config(const std::string& dir) {
  Ct2Config config;
  const std::string path = (fs::path(dir) / "config.json").string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return config;
  const nlohmann::json json = read_json_file(path);
  if (!json.is_object()) throw InputError::bad_value(path, "", "an object", json.type_name());
  config.unk_token = config_string(json, path, "unk_token", config.unk_token);
  config.bos_token = config_string(json, path, "bos_token", config.bos_token);
  config.eos_token = config_string(json, path, "eos_token", config.eos_token);
  config.decoder_start_token = config_string(json, path, "decoder_start_token", config.bos_token);
  config.add_source_bos = config_flag(json, path, "add_source_bos");
  config.add_source_eos = config_flag(json, path, "add_source_eos");
  const auto eps = json.find("layer_norm_epsilon");
  if (eps != json.end() && !eps->is_null()) {
    if (!eps->is_number() || !(eps->get<double>() > 0)) {
      throw InputError::bad_value(path, "/layer_norm_epsilon", "a positive number", eps->dump());
    }
    config.layer_norm_epsilon = eps->get<double>();
  }
  return config;
}

// The first vocabulary file of `role` that exists: ROLE_vocabulary, then shared_vocabulary;
// .txt (CTranslate2 2.x) before .json (3.x).
Ct2Vocabulary find_vocabulary(const std::string& dir, const std::string& role, const std::string& unk_token) {
  const std::string names[] = {role + "_vocabulary.txt", role + "_vocabulary.json", "shared_vocabulary.txt",
                               "shared_vocabulary.json"};
  std::error_code ec;
  for (const std::string& name : names) {
    const std::string path = (fs::path(dir) / name).string();
    if (fs::exists(path, ec)) return read_ct2_vocabulary(path, unk_token);
  }
  throw InputError::unreadable((fs::path(dir) / names[0]).string(),
                               "no such file (nor " + names[1] + ", " + names[2] + ", " + names[3] + ")");
}

void require_rows(const Ct2Vocabulary& vocab, const Matrix& embeddings, const std::string& model_file,
                  const std::string& stack) {
  if (static_cast<long>(vocab.size()) != embeddings.rows()) {
    throw InputError::inconsistent(vocab.file, std::to_string(vocab.size()) + " tokens (with " +
                                                   vocab.tokens[static_cast<std::size_t>(vocab.unk)] + "), but " +
                                                   model_file + " has " + std::to_string(embeddings.rows()) + " " +
                                                   stack + " embedding rows");
  }
}

std::int32_t special_id(const Ct2Vocabulary& vocab, const std::string& token, const std::string& role) {
  const std::int32_t id = vocab.find(token);
  if (id < 0) throw InputError::inconsistent(vocab.file, "no " + role + " token " + token);
  return id;
}

// The folder's name, or its parent's when the folder is just called "model" (as in
// data/aren-translit/model): a title should say which model.
std::string model_name(const std::string& dir) {
  fs::path path(dir);
  if (path.filename().empty()) path = path.parent_path();
  if (path.filename() == "model" && path.has_parent_path() && !path.parent_path().filename().empty())
    return path.parent_path().filename().string();
  return path.filename().string();
}

Tokens tokens_of(const Ct2Vocabulary& vocab, const std::vector<std::int32_t>& ids) {
  Tokens tokens;
  tokens.reserve(ids.size());
  for (std::int32_t id : ids) tokens.push_back(vocab.tokens[static_cast<std::size_t>(id)]);
  return tokens;
}

Tokens source_tokens_of(const Ct2Request& request, const Ct2Vocabulary& source) {
  if (request.source_tokens.has_value() == request.text.has_value()) {
    throw UsageError::bad_option("--source-tokens", "give the source either as --source-tokens or as --text (" +
                                                        std::string(request.text ? "both were given" : "neither was") + ")");
  }
  Tokens tokens;
  if (request.text) {
    if (!source.character_level) {
      throw UsageError::bad_option("--text", "the source vocabulary " + source.file +
                                                 " is not character-level: give the source tokens with --source-tokens");
    }
    tokens = split_characters(*request.text);
  } else {
    tokens = split_on_spaces(*request.source_tokens);
  }
  if (tokens.empty()) throw UsageError::bad_option(request.text ? "--text" : "--source-tokens", "the source is empty");
  return tokens;
}

AttentionBlock make_block(const Ct2Model& model, const std::string& stack, const std::string& kind, int layer,
                          AttentionResult& result, const Tokens& source, const Tokens& target) {
  const Ct2Transformer& t = model.transformer;
  AttentionBlock block;
  block.layer = layer;
  block.stack = stack;
  block.kind = kind;
  block.encoder_decoder = true;
  AttentionRecord& record = block.record;
  record.mode = kind;
  record.model = model_name(model.dir);
  record.layer = layer;
  record.query_tokens = stack == "encoder" ? source : target;
  record.key_tokens = stack == "encoder" || kind == "cross" ? source : target;
  record.num_heads = record.num_kv_heads = t.num_heads;
  record.d_model = t.d_model;
  record.d_k = record.d_v = t.d_model / t.num_heads;
  record.scale = 1.0 / std::sqrt(static_cast<double>(record.d_k));
  record.causal = stack == "decoder" && kind == "self";
  record.fully_masked_rows = std::move(result.fully_masked_rows);
  record.weights = std::move(result.weights);
  record.inputs = {t.file};
  return block;
}

// make_block with what `wants` asked for moved in too: scores, outputs, and the value vectors
// with (self-attention) the residual entering the block, its b_O and a post-norm model's norm.
AttentionBlock make_block(const Ct2Model& model, const std::string& stack, const std::string& kind, int layer,
                          AttentionResult& result, const Tokens& source, const Tokens& target, const AttentionWants& wants,
                          Matrix& residual, const Ct2LayerNorm* post_norm) {
  AttentionBlock block = make_block(model, stack, kind, layer, result, source, target);
  if (wants.scores) block.record.scores = std::move(result.scores);
  if (wants.outputs) {
    block.record.head_outputs = std::move(result.head_outputs);
    // Copied: the pass adds result.output to the residual stream after this hook (ct2_encode).
    block.record.output = result.output;
  }
  if (!wants.value_vectors) return block;
  block.value_vectors = std::move(result.value_vectors);
  const Ct2Transformer& t = model.transformer;
  const auto index = static_cast<std::size_t>(layer);
  const AttentionLayer& attention = stack == "encoder" ? t.encoder[index].self_attention
                                    : kind == "self"   ? t.decoder[index].self_attention
                                                       : t.decoder[index].cross_attention;
  block.b_o = attention.b_o;
  if (kind == "self") {
    block.residual = std::move(residual);
    if (post_norm)
      block.post_norm = PostLayerNorm{post_norm->gamma.cast<Scalar>(), post_norm->beta.cast<Scalar>(), t.layer_norm_epsilon};
  }
  return block;
}

ModelSummary summary_of(const Ct2Model& model) {
  const Ct2Transformer& t = model.transformer;
  ModelSummary summary;
  summary.file = model.dir;
  summary.architecture = "transformer";
  summary.name = model_name(model.dir);
  summary.num_layers = static_cast<int>(std::max(t.encoder.size(), t.decoder.size()));
  summary.num_heads = summary.num_kv_heads = t.num_heads;
  summary.d_model = t.d_model;
  summary.d_k = t.d_model / t.num_heads;
  summary.context_length = t.target_positions.rows();
  summary.rope_scaling = "none";
  return summary;
}

}  // namespace

Ct2Model load_ct2_model(const std::string& dir, double memory_budget_bytes) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError::unreadable(dir, "not a directory (a CTranslate2 model directory)");
  const Ct2Config config = read_config(dir);
  const std::string path = (fs::path(dir) / "model.bin").string();
  const auto file_bytes = static_cast<double>(fs::file_size(path, ec));
  if (memory_budget_bytes > 0 && !ec && file_bytes > memory_budget_bytes) {
    throw LimitError::memory("reading " + path, file_bytes, memory_budget_bytes, "--max-memory MIB");
  }
  const Ct2File file(path);
  if (memory_budget_bytes > 0) {
    double numbers = 0;
    for (const Ct2Variable& v : file.variables()) numbers += static_cast<double>(v.num_elements());
    const double needed = file_bytes + numbers * static_cast<double>(sizeof(double));
    if (needed > memory_budget_bytes) {
      throw LimitError::memory("the weights of " + path, needed, memory_budget_bytes, "--max-memory MIB");
    }
  }
  Ct2Model model;
  model.dir = dir;
  model.transformer = load_ct2_transformer(file, config.layer_norm_epsilon);
  model.source = find_vocabulary(dir, "source", config.unk_token);
  model.target = find_vocabulary(dir, "target", config.unk_token);
  require_rows(model.source, model.transformer.source_embeddings, file.path(), "source");
  require_rows(model.target, model.transformer.target_embeddings, file.path(), "target");
  model.bos = special_id(model.target, config.decoder_start_token, "decoder start");
  model.eos = special_id(model.target, config.eos_token, "end");
  if (config.add_source_bos) model.source_prefix = config.bos_token;
  if (config.add_source_eos) model.source_suffix = config.eos_token;
  return model;
}

ModelRunInfo run_ct2_model(const Ct2Request& request, const BlockSink& sink, std::vector<std::string>& warnings) {
  return run_ct2_model(load_ct2_model(request.model_dir, request.memory_budget_bytes), request, sink, warnings);
}

ModelRunInfo run_ct2_model(const Ct2Model& model, const Ct2Request& request, const BlockSink& sink, std::vector<std::string>& warnings) {
  const Ct2Transformer& t = model.transformer;
  const int layers = static_cast<int>(std::max(t.encoder.size(), t.decoder.size()));
  ModelProbe* probe = request.probe;
  if (probe && probe->check) probe->check(summary_of(model));
  const BlockProbe* block_probe = probe && probe->block ? &probe->block : nullptr;
  if (request.layers.last() >= layers) {
    throw UsageError::bad_option("--layers", "layer " + std::to_string(request.layers.last()) +
                                                 " does not exist (this model has layers 0-" +
                                                 std::to_string(layers - 1) + ")");
  }

  ModelRunInfo info;
  info.model = summary_of(model);
  info.source_tokens = source_tokens_of(request, model.source);
  if (!model.source_prefix.empty()) info.source_tokens.insert(info.source_tokens.begin(), model.source_prefix);
  if (!model.source_suffix.empty()) info.source_tokens.push_back(model.source_suffix);
  const std::vector<std::int32_t> source_ids = ct2_token_ids(model.source, info.source_tokens, "source", warnings);
  info.source_tokens = tokens_of(model.source, source_ids);
  info.source_text = ct2_join_tokens(model.source, info.source_tokens);

  // Encoder blocks go to the sink as they are computed: they need only the source tokens.
  Matrix residual;  // the capture hands it over just before each self-attention block's hook
  const Ct2LayerNorm* post_norm = nullptr;
  Ct2Capture capture;
  capture.wants = request.wants;
  capture.residual = [&](const Matrix& r, const Ct2LayerNorm* norm) {
    residual = r;
    post_norm = norm;
  };
  const Matrix memory = ct2_encode(t, source_ids, [&](const std::string&, const std::string&, int layer, AttentionResult& r) {
    if (request.layers.contains(layer))
      sink(make_block(model, "encoder", "self", layer, r, info.source_tokens, {}, request.wants, residual, post_norm));
  }, capture, block_probe);

  std::vector<std::int32_t> target_ids;
  if (request.target_tokens) {
    target_ids = ct2_token_ids(model.target, split_on_spaces(*request.target_tokens), "target", warnings);
    if (!target_ids.empty() && target_ids.back() == model.eos) target_ids.pop_back();
  } else {
    // A learned position table bounds the decoder's length as well.
    const long positions = t.target_positions.rows();
    const int cap = positions > 0 ? static_cast<int>(std::min<long>(request.max_generate, positions)) : request.max_generate;
    target_ids = ct2_greedy_decode(t, memory, model.bos, model.eos, cap);
    if (!target_ids.empty() && target_ids.back() == model.eos) {
      target_ids.pop_back();
    } else {
      warnings.push_back("greedy decoding stopped at its limit of " + std::to_string(cap) + " tokens without " +
                         model.target.tokens[static_cast<std::size_t>(model.eos)]);
    }
  }
  std::vector<std::int32_t> input_ids{model.bos};
  input_ids.insert(input_ids.end(), target_ids.begin(), target_ids.end());
  info.target_tokens = tokens_of(model.target, input_ids);
  info.tokens = info.target_tokens;
  info.token_ids = input_ids;
  const Tokens after_start(info.target_tokens.begin() + 1, info.target_tokens.end());
  info.text = ct2_join_tokens(model.target, after_start);
  info.prompt_length = request.target_tokens ? static_cast<int>(input_ids.size()) : 1;
  info.generated_text = request.target_tokens ? "" : info.text;

  const WideMatrix logits = ct2_decoder_logits(t, memory, input_ids, [&](const std::string& stack, const std::string& kind,
                                                                      int layer, AttentionResult& r) {
    if (request.layers.contains(layer))
      sink(make_block(model, stack, kind, layer, r, info.source_tokens, info.target_tokens, request.wants, residual, post_norm));
  }, capture, block_probe);
  if (probe && probe->want_output) {
    // logits = LN_dec(y)·projection + bias: the projection stored [n_vocab, d] as OutputWeights has it.
    probe->output = OutputWeights{t.target_embeddings, t.projection.transpose().cast<Scalar>(),
                                  t.decoder_norm ? Vector(t.decoder_norm->gamma.cast<Scalar>()) : Vector(), model.target.tokens,
                                  t.source_embeddings, model.source.tokens};
  }
  if (request.want_last_logits) {
    const Eigen::Index last = logits.rows() - 1;
    info.last_logits.resize(static_cast<std::size_t>(logits.cols()));
    for (Eigen::Index v = 0; v < logits.cols(); ++v) info.last_logits[static_cast<std::size_t>(v)] = static_cast<float>(logits(last, v));
  }
  if (request.with_model) request.with_model(model, source_ids, input_ids);
  return info;
}

}  // namespace attnviz
