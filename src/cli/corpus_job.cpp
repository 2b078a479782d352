#include "cli/corpus_job.hpp"

#include <filesystem>

#include "census/census_journal.hpp"
#include "census/corpus_run.hpp"
#include "cli/attention_job.hpp"
#include "cli/corpus_model.hpp"
#include "cli/stale_outputs.hpp"
#include "core/counted.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "render/corpus_census_picture.hpp"

namespace attnviz {

namespace {

void check_census_options(const Options& o) {
  if (o.output.empty()) throw UsageError::bad_option("-o", "required: the folder for census.json, census.csv and census.png");
  if (!o.merge.empty()) {
    if (!o.model.empty() || !o.corpus.empty())
      throw UsageError::bad_option("--merge", "combines finished outputs; give --merge DIR… or --model with --corpus, not both");
    if (o.resume || o.shard_count != 1) throw UsageError::bad_option(o.resume ? "--resume" : "--shard", "does not go with --merge");
    // The outputs' own settings are what a merge combines (and checks agree); a run setting given
    // here would change nothing, so it is named instead of ignored.
    const char* run_setting = o.layers != "all" ? "--layers" : o.sink_epsilon != 0.3 ? "--sink-epsilon" : o.no_bos ? "--no-bos"
                              : o.skip_bad_lines ? "--skip-bad-lines" : o.limit >= 0 ? "--limit" : o.max_tokens != 0 ? "--max-tokens"
                              : o.no_truncate ? "--no-truncate" : !o.corpus_format.empty() ? "--corpus-format" : nullptr;
    if (run_setting)
      throw UsageError::bad_option(run_setting, "is a setting of the runs, not of --merge (each output records its own, and "
                                                "a merge refuses outputs whose settings differ)");
    return;
  }
  if (o.model.empty()) throw UsageError::bad_option("--model", "required (or --merge DIR… to combine shard outputs)");
  if (o.corpus.empty()) throw UsageError::bad_option("--corpus", "required: the texts, one per line (text or JSONL)");
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw UsageError::bad_option("--shard", "K/N needs 0 <= K < N (K counts from 0), got " + shard_text(census_request(o)));
  if (!(o.sink_epsilon >= 0 && o.sink_epsilon <= 1))  // nan too
    throw UsageError::bad_option("--sink-epsilon", "must be in [0, 1], got " + std::to_string(o.sink_epsilon));
}

// census.json, census.csv and census.png in o.output, added to `files`.
void add_census_files(const CorpusCensus& census, const Options& o, OutputSet& files, std::vector<std::string>& warnings) {
  files.create_directory(o.output);
  files.add(o.output + "/census.json", census.to_json());
  files.add(o.output + "/census.csv", census.to_csv());
  files.add(o.output + "/census.png", corpus_census_png(census, o, warnings));
}

}  // namespace

CensusRequest census_request(const Options& o) {
  return CensusRequest{.model = o.model, .corpus = o.corpus, .corpus_format = o.corpus_format, .output = o.output,
                       .layers = o.layers, .progress = o.progress, .skip_bad_lines = o.skip_bad_lines,
                       .no_bos = o.no_bos, .no_truncate = o.no_truncate, .resume = o.resume, .limit = o.limit,
                       .max_tokens = o.max_tokens, .sink_epsilon = o.sink_epsilon, .shard_index = o.shard_index,
                       .shard_count = o.shard_count};
}

void run_corpus_census(const Options& o, std::ostream& out, std::ostream& err, std::vector<std::string>& warnings) {
  check_census_options(o);
  OutputSet files;
  if (!o.merge.empty()) {
    const CorpusCensus merged = merge_census_outputs(o.merge, o.output);
    add_census_files(merged, o, files, warnings);
    commit_folder(files, o.output, warnings);
    out << "wrote census.json, census.csv, census.png to " << o.output << "/: " << counted(merged.texts(), "text") << " of "
        << merged.corpus_texts() << " (" << counted(merged.tokens(), "token") << ") from "
        << counted(static_cast<long long>(o.merge.size()), "output") << "\n";
    return;
  }
  const CensusRequest request = census_request(o);
  const CensusModelLoader load = [&](bool needs_tokenizer) -> std::unique_ptr<const CensusModel> {
    return std::make_unique<const CorpusModel>(o, needs_tokenizer, memory_budget_bytes(o));
  };
  const CorpusRun run = run_corpus(request, load, err, warnings);
  const CorpusCensus& census = run.census;
  add_census_files(census, o, files, warnings);
  files.protect({o.model, o.corpus});
  commit_folder(files, o.output, warnings, {(std::filesystem::path(o.output) / kJournalName).string()});
  out << "wrote census.json, census.csv, census.png to " << o.output << "/: " << counted(census.texts(), "text") << " ("
      << counted(census.tokens(), "token")
      << (o.shard_count > 1 ? ", shard " + shard_text(request) + " of " + std::to_string(run.corpus_texts) + " texts" : "")
      << (run.resumed > 0 ? ", " + std::to_string(run.resumed) + " from the journal" : "") << ") of " << census.model_name << ", "
      << counted(static_cast<long long>(census.heads().size()), "head") << "\n";
}

}  // namespace attnviz
