#include "cli/attribute_job.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "analysis/head_attribution.hpp"
#include "cli/attention_job.hpp"
#include "cli/attribution_figure.hpp"
#include "cli/run.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "io/attribution_json.hpp"
#include "model/hf_decoder.hpp"
#include "model/hf_tokenizer.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

constexpr const char* kEncoderDecoderRefusal =
    "attribute runs decoder-only models (a GGUF file or a Hugging Face folder); attributing a translation's next "
    "token is not implemented";

// The tokenizer that reads --target: the run's, or a Hugging Face folder's tokenizer.json when the
// run came by --token-ids (which loads only its token names).
std::optional<Vocabulary> target_tokenizer(const Options& o, const DecoderRun& run) {
  if (run.vocab) return *run.vocab;
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
  const std::vector<std::int32_t> ids = tokenize(*vocab, *o.target, false);
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

// The position of --position, checked against the text's n tokens; `bos` when token 0 is BOS.
long attribution_position(const Options& o, long n, bool bos) {
  if (!o.position) return n - 1;
  if (*o.position < 0 || *o.position >= n)
    throw UsageError::bad_option("--position", std::to_string(*o.position) + " is " + (*o.position < 0 ? "not a position" : "past the text") +
                                                   ": its " + std::to_string(n) + " tokens are positions 0-" + std::to_string(n - 1) +
                                                   (bos ? " (BOS at 0)" : ""));
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

// "L4H0 1.264, L0H4 0.590, L2H5 0.589": the `count` heads with the largest sign·value.
std::string ranked_heads(const std::vector<std::vector<double>>& values, double sign, std::size_t count) {
  std::vector<std::pair<double, std::string>> heads;
  for (std::size_t l = 0; l < values.size(); ++l)
    for (std::size_t h = 0; h < values[l].size(); ++h)
      heads.emplace_back(values[l][h], model_head_name("", static_cast<int>(l), static_cast<int>(h)));
  count = std::min(count, heads.size());
  std::partial_sort(heads.begin(), heads.begin() + static_cast<long>(count), heads.end(),
                    [sign](const auto& a, const auto& b) { return sign * a.first > sign * b.first; });
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += (i ? ", " : "") + heads[i].second + " " + fixed(heads[i].first);
  return text;
}

constexpr std::size_t kRankedHeads = 3;

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

void run_attribute(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  if (options.output.empty()) throw UsageError::bad_option("-o", "required: the folder for attribution.json and attribution.png");
  const DecoderRun run = prepare_decoder_run(options, warnings, kEncoderDecoderRefusal);
  HeadAttributionRequest request;
  request.token_ids = run.info.token_ids;
  const bool bos = run.vocab && run.vocab->bos && request.token_ids.front() == *run.vocab->bos;
  request.position = attribution_position(options, static_cast<long>(request.token_ids.size()), bos);
  request.target = attribution_target(options, run);
  const double budget = memory_budget_bytes(options);
  check_memory(*run.model, request.position + 1, budget);
  timer.lap("load");
  const HeadAttribution a = attribute_heads(*run.model, request);
  timer.lap("compute");

  const std::string target_token = decoder_token_label(run.names, a.target_id);
  const std::string position_token = run.labels[static_cast<std::size_t>(a.position)];
  OutputSet files;
  files.create_directory(options.output);
  files.add((fs::path(options.output) / "attribution.json").string(),
            attribution_to_json(a, AttributionContext{run.info.model.name, run.labels, run.info.token_ids, target_token}));
  add_attribution_pictures(a, AttributionTitle{run.info.model.name, target_token, position_token}, options, budget, files, warnings);
  files.protect(input_files(options));
  timer.lap("render");
  files.commit();
  timer.lap("write");
  out << "wrote " << files_named(options) << " to " << options.output << "/\n"
      << "target " << quoted_piece(target_token) << " (id " << a.target_id << ") at position " << a.position << " "
      << quoted_piece(position_token) << ": logit " << fixed(a.logit) << ", log p " << fixed(a.log_prob) << "\n"
      << "top direct logit attribution: " << ranked_heads(a.dla.heads, 1, kRankedHeads) << "\n"
      << "largest drop in log p when ablated: " << ranked_heads(a.ablation, -1, kRankedHeads) << "\n";
}

}  // namespace attnviz
