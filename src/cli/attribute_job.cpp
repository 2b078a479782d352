#include "cli/attribute_job.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <ostream>
#include <thread>

#include "analysis/ct2_attribution.hpp"
#include "analysis/head_attribution.hpp"
#include "cli/attention_job.hpp"
#include "cli/run.hpp"
#include "cli/stale_outputs.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "model/ct2_model.hpp"
#include "model/hf_decoder.hpp"
#include "model/tokenizers/hf_tokenizer.hpp"
#include "model/tokenizers/tokenizer_file.hpp"
#include "records/attribution_json.hpp"
#include "render/attribution_figure.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

// The tokenizer that reads --target: the run's, or a Hugging Face folder's tokenizer.json when the
// run came by --token-ids (which loads only its token names).
std::optional<Vocabulary> target_tokenizer(const Options& o, const DecoderRun& run) {
  if (run.vocab) return *run.vocab;
  if (!o.tokenizer.empty()) return vocabulary_from_file(o.tokenizer);
  std::error_code ec;
  const fs::path tokenizer = fs::path(o.model) / "tokenizer.json";
  if (is_hf_model_folder(o.model) && fs::exists(tokenizer, ec)) return vocabulary_from_tokenizer_json(tokenizer.string());
  return std::nullopt;
}

std::string id_range(long n_vocab) { return "(0-" + std::to_string(n_vocab - 1) + ")"; }

// "\"▁He\" (403), \"▁said\" (2001)": how a text split, for the message.
std::string pieces_of(const Vocabulary& vocab, const std::vector<std::int32_t>& ids) {
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i)
    text += (i ? ", " : "") + quoted_piece(vocab.pieces[static_cast<std::size_t>(ids[i])]) + " (" + std::to_string(ids[i]) + ")";
  return text;
}

std::int32_t target_from_text(const Options& o, const DecoderRun& run) {
  std::optional<Vocabulary> vocab = target_tokenizer(o, run);
  if (!vocab) throw UsageError::bad_option("--target", o.model + " has no tokenizer to read the text with; give the token's id with --target-id");
  vocab->add_space_prefix = false;  // exactly as written: " He" has its space, "He" has none
  const std::vector<std::int32_t> ids = tokenize(*vocab, *o.target, false, !o.no_parse_special);
  const std::string quoted = quoted_piece(*o.target);
  if (ids.empty()) throw UsageError::bad_option("--target", quoted + " gives no token; give one token's text, or its id with --target-id");
  if (ids.size() > 1)
    throw UsageError::bad_option("--target", quoted + " is " + std::to_string(ids.size()) + " tokens, not one: " + pieces_of(*vocab, ids) +
                                                 " (tokenized exactly as written, without a space added); give one token's text, or its id, e.g. --target-id " +
                                                 std::to_string(ids.front()));
  if (ids.front() >= run.model->config().n_vocab)
    throw UsageError::bad_option("--target", quoted + " is token " + std::to_string(ids.front()) + ", outside the model's vocabulary " +
                                                 id_range(run.model->config().n_vocab));
  return ids.front();
}

// The position of --position, checked against the text's n tokens; `first` names token 0 when
// it is a start token ("BOS", "<s>"), else ""; `owner` whose tokens they are ("its", "the decoder's").
long attribution_position(const Options& o, long n, const std::string& first, const std::string& owner = "its") {
  if (!o.position) return n - 1;
  if (*o.position < 0 || *o.position >= n)
    throw UsageError::bad_option("--position", std::to_string(*o.position) + " is " + (*o.position < 0 ? "not a position" : "past the text") +
                                                   ": " + owner + " " + std::to_string(n) + " tokens are positions 0-" + std::to_string(n - 1) +
                                                   (first.empty() ? "" : " (" + first + " at 0)"));
  return static_cast<long>(*o.position);
}

// The forward pass over the prefix with every layer's input kept for the ablation reruns.
void check_memory(const DecoderModel& model, long tokens, double budget) {
  const DecoderConfig& c = model.config();
  const double kept = 4.0 * c.num_layers * static_cast<double>(tokens) * static_cast<double>(c.d_model);
  const double needed = decoder_forward_bytes(model, static_cast<double>(tokens)) + kept;
  if (needed > budget)
    throw LimitError::memory("the forward pass over " + std::to_string(tokens) + " tokens and the residual entering each layer (kept for the ablation reruns)",
                             needed, budget, "--max-memory MIB");
}

// "attribution.json, attribution.png and attribution.svg": the files written, in --format's order.
std::string files_named(const Options& options) {
  std::vector<std::string> names = {"attribution.json"};
  for (const std::string& format : options.formats) names.push_back("attribution." + format);
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

// Three decimals, or three significant digits where that would read 0.000 or -0.000 for a value
// that is not 0 (a tiny ablation effect is not "-0.000").
std::string fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  if (value != 0 && std::strtod(text, nullptr) == 0) std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

// One kind of block's [layer][head] table and the name its heads carry ("" decoder-only; "enc",
// "dec", "cross" for an encoder-decoder, as docs/analysis.md names heads).
struct NamedTable {
  std::string block;
  const std::vector<std::vector<double>>* values;
};

// "L4H0 1.264, L0H4 0.590, L2H5 0.589": the `count` heads with the largest sign·value.
std::string ranked_heads(const std::vector<NamedTable>& tables, double sign, std::size_t count) {
  std::vector<std::pair<double, std::string>> heads;
  for (const NamedTable& table : tables)
    for (std::size_t l = 0; l < table.values->size(); ++l)
      for (std::size_t h = 0; h < (*table.values)[l].size(); ++h)
        heads.emplace_back((*table.values)[l][h], model_head_name(table.block, static_cast<int>(l), static_cast<int>(h)));
  count = std::min(count, heads.size());
  std::partial_sort(heads.begin(), heads.begin() + static_cast<long>(count), heads.end(),
                    [sign](const auto& a, const auto& b) { return sign * a.first > sign * b.first; });
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += (i ? ", " : "") + heads[i].second + " " + fixed(heads[i].first);
  return text;
}

constexpr std::size_t kRankedHeads = 3;

// glibc gives freed blocks above its mmap and trim thresholds back to the kernel, so each of the
// L·h reruns' fresh h·n² attention weights faulted its pages in again: 0.6 s of the 1.4 s of CPU
// on stories260K at 512 tokens (scripts/bench/RESULTS.md, "Head attribution"). Kept in the heap,
// they are reused; the peak memory does not change.
void reuse_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

// The ablated reruns' threads: --threads, or every core.
int rerun_threads(const Options& o) { return o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

std::optional<std::int32_t> attribution_target(const Options& o, const DecoderRun& run) {
  if (o.target && o.target_id) throw UsageError::bad_option("--target", "give --target or --target-id, not both");
  if (o.target) return target_from_text(o, run);
  if (!o.target_id) return std::nullopt;
  const long n_vocab = run.model->config().n_vocab;
  if (*o.target_id < 0 || *o.target_id >= n_vocab)
    throw UsageError::bad_option("--target-id", std::to_string(*o.target_id) + " is outside the vocabulary of " +
                                                    std::to_string(n_vocab) + " tokens " + id_range(n_vocab));
  return static_cast<std::int32_t>(*o.target_id);
}

namespace {

// Writes attribution.json and the pictures, and prints the summary: the tail of both kinds of run.
void write_attribution(const Options& options, const HeadAttribution& a, const AttributionContext& context,
                       const std::string& position_token, double budget, PhaseTimer& timer, std::ostream& out,
                       std::vector<std::string>& warnings) {
  std::vector<NamedTable> dla = {{"", &a.dla.heads}}, ablation = {{"", &a.ablation}};
  if (a.encoder_decoder) {
    dla = {{"dec", &a.dla.heads}, {"cross", &a.encoder_decoder->dla_cross}};
    ablation = {{"enc", &a.encoder_decoder->ablation_encoder}, {"dec", &a.ablation}, {"cross", &a.encoder_decoder->ablation_cross}};
  }
  // The summary's top heads, printed and on the page.
  std::vector<std::string> top_heads = {"top direct logit attribution: " + ranked_heads(dla, 1, kRankedHeads)};
  if (!a.ablation.empty()) top_heads.push_back("largest drop in log p when ablated: " + ranked_heads(ablation, -1, kRankedHeads));
  OutputSet files;
  files.create_directory(options.output);
  files.add((fs::path(options.output) / "attribution.json").string(), attribution_to_json(a, context));
  add_attribution_pictures(a, AttributionTitle{context.model, context.target_token, position_token}, options, options.output,
                           budget, top_heads, files, warnings);
  files.protect(input_files(options));
  timer.lap("render");
  commit_folder(files, options.output, warnings);
  timer.lap("write");
  out << "wrote " << files_named(options) << " to " << options.output << "/\n"
      << "target " << quoted_piece(context.target_token) << " (id " << a.target_id << ") at position " << a.position << " "
      << quoted_piece(position_token) << ": logit " << fixed(a.logit) << ", log p " << fixed(a.log_prob) << "\n"
      << "top direct logit attribution: " << ranked_heads(dla, 1, kRankedHeads) << "\n"
      << "largest drop in log p when ablated: " << ranked_heads(ablation, -1, kRankedHeads) << "\n";
}

// --target / --target-id against a CTranslate2 model's target vocabulary: a target token is one
// vocabulary entry, written exactly as the vocabulary file has it.
std::optional<std::int32_t> ct2_target(const Options& o, const Ct2Model& model) {
  if (o.target && o.target_id) throw UsageError::bad_option("--target", "give --target or --target-id, not both");
  const long n_vocab = static_cast<long>(model.target.size());
  if (o.target) {
    const std::int32_t id = model.target.find(*o.target);
    if (id < 0)
      throw UsageError::bad_option("--target", quoted_piece(*o.target) + " is not a token of the target vocabulary " + model.target.file +
                                                   " (one entry, exactly as written there); give one target token, or its id with --target-id");
    return id;
  }
  if (!o.target_id) return std::nullopt;
  if (*o.target_id < 0 || *o.target_id >= n_vocab)
    throw UsageError::bad_option("--target-id", std::to_string(*o.target_id) + " is outside the target vocabulary of " +
                                                    std::to_string(n_vocab) + " tokens " + id_range(n_vocab));
  return static_cast<std::int32_t>(*o.target_id);
}

// attribute on a CTranslate2 encoder-decoder: the source from --text or --source-tokens, the
// decoder's input <s> + the greedy translation (or --target-tokens), the decoder's next token
// at --position attributed over the decoder's self- and cross-attention heads, every head of
// both stacks ablated.
void run_ct2_attribute(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  if (options.token_ids) throw UsageError::bad_option("--token-ids", "is for decoder-only models; give --source-tokens or --text");
  if (options.no_bos) throw UsageError::bad_option("--no-bos", "is for decoder-only models (the model's config frames the source)");
  if (!options.tokenizer.empty() || options.max_tokens > 0)
    throw UsageError::bad_option(options.max_tokens > 0 ? "--max-tokens" : "--tokenizer",
                                 "is for decoder-only models; a CTranslate2 model's source is given as tokens or characters");
  if (options.target_tokens && options.generate >= 0)
    throw UsageError::bad_option("--generate", "caps greedy decoding; --target-tokens forces the translation instead");
  const double budget = memory_budget_bytes(options);
  Ct2Request request;
  request.model_dir = options.model;
  request.source_tokens = options.source_tokens;
  request.text = options.text;
  request.target_tokens = options.target_tokens;
  if (options.generate >= 0) request.max_generate = options.generate;
  request.memory_budget_bytes = budget;
  std::optional<HeadAttribution> attribution;
  std::string target_token;
  request.with_model = [&](const Ct2Model& model, const std::vector<std::int32_t>& source_ids, const std::vector<std::int32_t>& decoder_ids) {
    const std::string refusal = ct2_attribution_refusal(model.transformer);
    if (!refusal.empty()) throw UsageError::bad_option("--model", options.model + ": " + refusal);
    Ct2AttributionRequest r{source_ids, decoder_ids, attribution_position(options, static_cast<long>(decoder_ids.size()), "<s>", "the decoder's"),
                            ct2_target(options, model), true};
    timer.lap("load");
    attribution = attribute_ct2_heads(model.transformer, r, rerun_threads(options));
    target_token = model.target.tokens[static_cast<std::size_t>(attribution->target_id)];
    timer.lap("compute");
  };
  const ModelRunInfo info = run_ct2_model(request, [](AttentionBlock&&) {}, warnings);
  HeadAttribution& a = *attribution;
  a.encoder_decoder->source_tokens = info.source_tokens;
  write_attribution(options, a, AttributionContext{info.model.name, info.target_tokens, info.token_ids, target_token},
                    info.target_tokens[static_cast<std::size_t>(a.position)], budget, timer, out, warnings);
}

}  // namespace

void run_attribute(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  if (options.output.empty()) throw UsageError::bad_option("-o", "required: the folder for attribution.json and attribution.png");
  reuse_freed_memory();
  if (is_encoder_decoder_model(options)) return run_ct2_attribute(options, timer, out, warnings);
  if (options.source_tokens || options.target_tokens || options.generate >= 0)
    throw UsageError::bad_option(options.source_tokens ? "--source-tokens" : options.target_tokens ? "--target-tokens" : "--generate",
                                 "is for encoder-decoder (CTranslate2) models; " + options.model + " is a decoder-only model");
  DecoderRun run = prepare_decoder_run(options, warnings, "");
  // DLA splits the logit into terms that must add up to it, and each ablation is a difference of
  // two log p: llama.cpp's products round every activation to 8 bits (or float16), which is not linear, so attribute
  // always multiplies in float32 (as --exact-matmul), whatever the file's weights.
  run.model->set_quantized_matmul(false);
  if (!run.info.model.matmul.empty()) run.info.model.matmul = run.model->matmul();
  HeadAttributionRequest request;
  request.token_ids = run.info.token_ids;
  const bool bos = run.vocab && run.vocab->bos && request.token_ids.front() == *run.vocab->bos;
  request.position = attribution_position(options, static_cast<long>(request.token_ids.size()), bos ? "BOS" : "");
  request.target = attribution_target(options, run);
  request.threads = rerun_threads(options);
  const double budget = memory_budget_bytes(options);
  check_memory(*run.model, request.position + 1, budget);
  timer.lap("load");
  const HeadAttribution a = attribute_heads(*run.model, request);
  timer.lap("compute");
  const std::string target_token = decoder_token_label(run.names, a.target_id);
  write_attribution(options, a, AttributionContext{run.info.model.name, run.labels, run.info.token_ids, target_token},
                    run.labels[static_cast<std::size_t>(a.position)], budget, timer, out, warnings);
}

}  // namespace attnviz
