// The model of `attnviz census` (issue 22), census/corpus_run's CensusModel loaded from the options: a decoder-only model (GGUF file or Hugging Face
// folder) loaded once for the whole corpus, or a CTranslate2 encoder-decoder, each text a source
// whose target is its greedy translation. Hands each text's blocks to the census statistics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "census/corpus_census.hpp"
#include "census/corpus_run.hpp"
#include "cli/model_job.hpp"
#include "cli/options.hpp"
#include "io/corpus_file.hpp"

namespace attnviz {

struct Ct2Model;

class CorpusModel : public CensusModel {
 public:
  /// Loads options.model (the tokenizer too when `needs_tokenizer`). Throws UsageError for
  /// --max-tokens, --no-truncate or --no-bos with an encoder-decoder; else as run_model.
  CorpusModel(const Options& options, bool needs_tokenizer, double memory_budget);
  bool encoder_decoder() const override { return !session_; }
  /// name, architecture, layers, heads (what census.json's provenance records).
  const ModelSummary& summary() const override { return summary_; }
  /// The decoder's context length (0: unknown, or an encoder-decoder).
  long context() const override;
  /// The ids text `t` runs on: the line's token_ids or the tokenizer's, cut to `max_tokens`
  /// (> 0); empty for an encoder-decoder. Throws InputError naming `corpus` and the line for a
  /// longer text with `no_truncate`, a text that gives no tokens, or token_ids given to an
  /// encoder-decoder.
  std::vector<std::int32_t> ids(const CorpusText& t, long max_tokens, bool no_truncate, const std::string& corpus) const override;
  /// Runs one text (its `ids`, or for an encoder-decoder its text), adding every block's
  /// statistics to `text`; returns the tokens run (source + target for an encoder-decoder).
  long run(const CorpusText& t, const std::vector<std::int32_t>& ids, TextStatistics& text,
           std::vector<std::string>& warnings) const override;

 private:
  const Options& options_;
  double budget_;
  std::unique_ptr<DecoderSession> session_;
  std::shared_ptr<const Ct2Model> ct2_;  ///< an encoder-decoder, loaded once for every text
  ModelSummary summary_;
};

}  // namespace attnviz
