// `attnviz census` (issue 22): a model's head census over a corpus, run whole or as one shard
// (--shard K/N), journalled and resumable (DIR/texts.jsonl, --resume), and the exact merge of
// shard outputs (--merge DIR…). Writes DIR/census.json, census.csv and census.png at the end,
// all or nothing; an interrupt (SIGINT) keeps the journal, writes no census.* and exits 130.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "census/corpus_run.hpp"
#include "cli/options.hpp"

namespace attnviz {

/// The corpus run `options` ask for (census/corpus_run), field by field.
CensusRequest census_request(const Options& options);

/// Runs `census` as `options` say; messages to `out`, progress to `err`; warnings appended.
/// Throws UsageError (options that do not fit, a folder with a journal without --resume),
/// InputError (the corpus, the model, a journal or census.json that does not belong), OutputError.
void run_corpus_census(const Options& options, std::ostream& out, std::ostream& err, std::vector<std::string>& warnings);

/// Exit status of a census interrupted by SIGINT (128 + 2, as a shell reports it; SIGTERM: 143).
inline constexpr int kExitInterrupted = 130;

}  // namespace attnviz
