#include "cli/corpus_model.hpp"

#include <filesystem>
#include <optional>

#include "core/error.hpp"
#include "model/ct2_model.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;

// The ids a text runs on: the model's tokenizer's (or the line's own), cut to max_tokens.
std::vector<std::int32_t> text_ids(const DecoderSession& session, const CorpusText& text, long max_tokens, bool no_truncate,
                                   const std::string& corpus) {
  std::vector<std::int32_t> ids = text.token_ids ? *text.token_ids : session.tokenize(*text.text);
  if (ids.empty()) throw InputError::inconsistent(corpus, "line " + std::to_string(text.line) + ": gives no tokens");
  // Named by file, line and position here: the run would blame --token-ids, which was not given.
  if (text.token_ids)
    for (std::size_t j = 0; j < ids.size(); ++j)
      if (ids[j] < 0 || ids[j] >= session.n_vocab())
        throw InputError::inconsistent(corpus, "line " + std::to_string(text.line) + ": /token_ids/" + std::to_string(j) +
                                                   ": token id " + std::to_string(ids[j]) + " is outside the vocabulary (0-" +
                                                   std::to_string(session.n_vocab() - 1) + ")");
  if (max_tokens > 0 && static_cast<long>(ids.size()) > max_tokens) {
    if (no_truncate)
      throw InputError::inconsistent(corpus, "line " + std::to_string(text.line) + ": " + std::to_string(ids.size()) +
                                                 " tokens, over --max-tokens / the model's context of " + std::to_string(max_tokens) +
                                                 " (--no-truncate refuses longer texts)");
    ids.resize(static_cast<std::size_t>(max_tokens));
  }
  return ids;
}

}  // namespace

CorpusModel::CorpusModel(const Options& o, bool needs_tokenizer, double budget) : options_(o), budget_(budget) {
  if (!is_encoder_decoder_model(o)) {
    session_ = std::make_unique<DecoderSession>(o, needs_tokenizer);
    summary_ = session_->summary();
    return;
  }
  if (o.max_tokens > 0 || o.no_truncate)
    throw UsageError::bad_option(o.max_tokens > 0 ? "--max-tokens" : "--no-truncate",
                                 "is for decoder-only models; an encoder-decoder's texts are sources, run whole");
  if (o.no_bos) throw UsageError::bad_option("--no-bos", "is for decoder-only models (the model's config frames the source)");
  ct2_ = std::make_shared<const Ct2Model>(load_ct2_model(o.model, budget));
  const Ct2Model& model = *ct2_;
  // Named as the one-text pictures name it: the folder, or its parent when it is just "model".
  fs::path folder = fs::path(o.model).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  summary_.name = (folder.filename() == "model" && !folder.parent_path().filename().empty() ? folder.parent_path() : folder)
                      .filename().string();
  summary_.architecture = "transformer";
  summary_.num_layers = static_cast<int>(model.transformer.encoder.size());
  summary_.num_heads = model.transformer.num_heads;
  summary_.d_model = model.transformer.d_model;
}

long CorpusModel::context() const { return session_ ? summary_.context_length : 0; }

long CorpusModel::run(const CorpusText& t, const std::vector<std::int32_t>& ids, TextStatistics& text,
                      std::vector<std::string>& warnings) const {
  const BlockSink sink = [&](AttentionBlock&& block) {
    if (!block.record.weights.empty()) add_block_statistics(block, ids, options_.sink_epsilon, text);  // else its heads came one by one
  };
  if (session_) {
    // Head by head: one head's n × n weights held at a time (issue 23's bound for long texts), its
    // block's rows and detector cells found at its first head.
    std::optional<BlockStatistics> shared;
    const HeadSink heads = [&](const AttentionBlock& block, int head, Matrix& weights) {
      if (head == 0) shared.emplace(block, ids);
      shared->add_head(block, head, weights, options_.sink_epsilon, text);
    };
    session_->run(ids, sink, warnings, budget_, &heads);
    return static_cast<long>(ids.size());
  }
  Ct2Request request;
  request.model_dir = options_.model;
  request.text = *t.text;
  request.layers = parse_layer_selection(options_.layers, 0);
  request.memory_budget_bytes = budget_;
  const ModelRunInfo info = run_ct2_model(*ct2_, request, sink, warnings);
  return static_cast<long>(info.source_tokens.size() + info.target_tokens.size());
}

std::vector<std::int32_t> CorpusModel::ids(const CorpusText& t, long max_tokens, bool no_truncate, const std::string& corpus) const {
  if (!session_) {
    if (t.token_ids)
      throw InputError::inconsistent(corpus, "line " + std::to_string(t.line) + ": token_ids are for decoder-only models; " +
                                                 options_.model + " is an encoder-decoder: give its source as \"text\"");
    return {};
  }
  return text_ids(*session_, t, max_tokens, no_truncate, corpus);
}

}  // namespace attnviz
