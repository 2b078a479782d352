// A head census run over a corpus (issue 22), below the command line: the texts of one shard
// read, checked and run through a model one at a time, each appended to the run's journal
// (texts.jsonl, so an interrupted run goes on with --resume), and folded into a CorpusCensus;
// and the merge of finished shard outputs. cli/corpus_job fills the request from Options, loads
// the model, and writes census.json, census.csv and census.png.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "census/corpus_census.hpp"
#include "io/corpus_file.hpp"
#include "model/model_record.hpp"

namespace attnviz {

/// What a corpus census is asked; each field's meaning is its census option's --help text.
struct CensusRequest {
  std::string model;              ///< --model: the file or folder (its bytes are the provenance's)
  std::string corpus;             ///< --corpus FILE: .jsonl or text, one text per line
  std::string corpus_format;      ///< --corpus-format text|jsonl; "" = by the name
  std::string output;             ///< -o: the folder of the journal and the census files
  std::string layers = "all";     ///< --layers all|2|0,3|1-4
  std::string progress = "none";  ///< "bar", "lines" or "none" (io/progress)
  bool skip_bad_lines = false;    ///< --skip-bad-lines: skip and count bad lines
  bool no_bos = false;            ///< --no-bos
  bool no_truncate = false;       ///< --no-truncate: refuse a longer text instead
  bool resume = false;            ///< --resume: continue output/texts.jsonl
  long limit = -1;                ///< --limit N: the first N texts; -1 = all
  long max_tokens = 0;            ///< --max-tokens N: truncate each text; 0 = the model's context
  double sink_epsilon = 0.3;      ///< --sink-epsilon: ε of sink_rate (Gu et al. 2025)
  int shard_index = 0, shard_count = 1;  ///< --shard K/N: texts K, K+N, K+2N, …
};

/// "K/N", the request's shard as --shard writes it.
std::string shard_text(const CensusRequest& request);

/// The model a census runs each text through, loaded once for the whole corpus.
class CensusModel {
 public:
  virtual ~CensusModel() = default;
  /// True for an encoder-decoder (each text a source whose target is its greedy translation).
  virtual bool encoder_decoder() const = 0;
  /// name, architecture, layers, heads (what census.json's provenance records).
  virtual const ModelSummary& summary() const = 0;
  /// The decoder's context length (0: unknown, or an encoder-decoder).
  virtual long context() const = 0;
  /// The ids text `t` runs on: the line's token_ids or the tokenizer's, cut to `max_tokens`
  /// (> 0); empty for an encoder-decoder. Throws InputError naming `corpus` and the line for a
  /// longer text with `no_truncate`, a text that gives no tokens, or token_ids given to an
  /// encoder-decoder.
  virtual std::vector<std::int32_t> ids(const CorpusText& t, long max_tokens, bool no_truncate,
                                        const std::string& corpus) const = 0;
  /// Runs one text (its `ids`, or for an encoder-decoder its text), adding every block's
  /// statistics to `text`; returns the tokens run (source + target for an encoder-decoder).
  virtual long run(const CorpusText& t, const std::vector<std::int32_t>& ids, TextStatistics& text,
                   std::vector<std::string>& warnings) const = 0;
};

/// Loads the request's model, with its tokenizer when `needs_tokenizer` (some line is a text).
using CensusModelLoader = std::function<std::unique_ptr<const CensusModel>(bool needs_tokenizer)>;

/// What a run leaves: the census of the shard's texts (the journal's and this run's).
struct CorpusRun {
  CorpusCensus census;
  long corpus_texts = 0;  ///< texts in the corpus after skipped lines and --limit
  long resumed = 0;       ///< texts taken from the journal
};

/// Runs the shard's texts not yet in the journal, appending each to output/texts.jsonl; progress
/// to `err`; warnings appended (each text's own naming its line, those every text gives once).
/// Checks before any work: the outputs can be written, the shard holds texts, a journal is there
/// only with resume (and every line of it is the text it claims), each text of the shard can run.
/// SIGINT or SIGTERM during the texts ends the process at once (128 + the signal), keeping the
/// journal. Throws UsageError, InputError (the corpus, changed during the run too; the model; the
/// journal), LimitError, OutputError; nothing but the journal is written.
CorpusRun run_corpus(const CensusRequest& request, const CensusModelLoader& load_model, std::ostream& err,
                     std::vector<std::string>& warnings);

/// The census.json of each folder, checked against its journal (if any) and the others (same
/// provenance, disjoint texts), merged in order (Chan et al.). Throws UsageError when `output` is
/// one of the folders or holds a journal; InputError naming the files that disagree.
CorpusCensus merge_census_outputs(const std::vector<std::string>& folders, const std::string& output);

}  // namespace attnviz
