#include "census/corpus_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "census/census_journal.hpp"
#include "census/census_merge_check.hpp"
#include "census/census_settings.hpp"
#include "core/counted.hpp"
#include "core/error.hpp"
#include "core/heap_reuse.hpp"
#include "io/atomic_output.hpp"
#include "io/corpus_watch.hpp"
#include "io/progress.hpp"

namespace attnviz {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// During the text loop no output file is half-written (the journal's lines are single
// write()s): an interrupt ends the run at once, keeping the journal, with the status a shell
// gives a process the signal ended (130 for SIGINT, 143 for SIGTERM).
// The line it prints first (made before the handler is installed: a handler may only write()).
char interrupt_note[1024];
std::size_t interrupt_note_size = 0;

extern "C" void exit_interrupted(int signal_number) {
  if (interrupt_note_size > 0) (void)!::write(STDERR_FILENO, interrupt_note, interrupt_note_size);
  _exit(128 + signal_number);
}

// Installs exit_interrupted for SIGINT and SIGTERM while alive, saying where the journal is and
// how to go on; restores the previous handlers after.
class InterruptExit {
 public:
  /// bar: a progress bar may be on the terminal's last line (the note starts on a line of its own).
  InterruptExit(const std::string& journal, bool bar) : int_(nullptr), term_(nullptr) {
    const std::string note = std::string(bar ? "\n" : "") + "attnviz: interrupted: the texts done so far are kept in " + journal +
                             "; run the same command with --resume to go on\n";
    interrupt_note_size = std::min(note.size(), sizeof interrupt_note);
    std::memcpy(interrupt_note, note.data(), interrupt_note_size);
    int_ = std::signal(SIGINT, exit_interrupted);
    term_ = std::signal(SIGTERM, exit_interrupted);
  }
  ~InterruptExit() {
    std::signal(SIGINT, int_);
    std::signal(SIGTERM, term_);
  }
  InterruptExit(const InterruptExit&) = delete;
  InterruptExit& operator=(const InterruptExit&) = delete;

 private:
  void (*int_)(int);
  void (*term_)(int);
};

bool in_shard(const CensusRequest& o, long index) { return index % o.shard_count == o.shard_index; }

std::uintmax_t model_bytes(const std::string& model) {
  std::error_code ec;
  if (!fs::is_directory(model, ec)) return fs::file_size(model, ec);
  std::uintmax_t total = 0;
  for (const auto& entry : fs::directory_iterator(model, ec))
    if (entry.is_regular_file(ec)) total += entry.file_size(ec);
  return total;
}

// FNV-1a 64 of the model's bytes: the file, or a folder's regular files in name order (each name,
// then its bytes). Name, shape and size alone let two checkpoints of one training run (or a
// fine-tune and its base) merge into numbers of neither (hostile tester).
std::uint64_t model_fingerprint(const std::string& model) {
  std::error_code ec;
  std::vector<fs::path> files;
  if (fs::is_directory(model, ec)) {
    for (const auto& entry : fs::directory_iterator(model, ec))
      if (entry.is_regular_file(ec)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(model);
  }
  std::uint64_t hash = kFnvOffset;
  std::string chunk(1 << 20, '\0');
  for (const fs::path& file : files) {
    if (files.size() > 1) hash = fnv1a(hash, file.filename().string() + '\0');
    std::ifstream in(file, std::ios::binary);
    if (!in) throw InputError::unreadable(file.string(), std::strerror(errno));
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      hash = fnv1a(hash, chunk.substr(0, static_cast<std::size_t>(in.gcount())));
    }
  }
  return hash;
}

std::string hex64(std::uint64_t x) {
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(x));
  return buffer;
}

// Settings are recorded canonically (census_settings.hpp), as what the run did: --layers as the
// selection it makes, --limit only when it cut, --skip-bad-lines only when it skipped a line,
// --no-bos only when a line is a text (token_ids are used as given), and truncate always true (a
// --no-truncate run that finishes cut no text: it ran what a cutting run runs). --merge and
// --resume compare them as text.
CensusProvenance provenance_of(const CensusRequest& o, const ModelSummary& model, const CorpusScan& scan, long max_tokens,
                               bool encoder_decoder, bool has_text) {
  CensusProvenance p;
  p.attnviz_version = ATTNVIZ_VERSION;
  p.model = Json{{"name", model.name}, {"architecture", model.architecture}, {"layers", model.num_layers},
                 {"heads", model.num_heads}, {"d_model", model.d_model}, {"bytes", model_bytes(o.model)},
                 {"fnv1a64", hex64(model_fingerprint(o.model))}}.dump();
  p.corpus = Json{{"file", fs::path(o.corpus).filename().string()}, {"format", scan.format}, {"fnv1a64", hex64(scan.fingerprint)},
                  {"texts", scan.texts}, {"skipped_lines", scan.skipped.size()}}.dump();
  // An encoder-decoder's --layers is parsed without a layer count (its stacks may differ), so
  // only "all" itself is "all" there.
  const std::string layers = canonical_layers(parse_layer_selection(o.layers, encoder_decoder ? 0 : model.num_layers),
                                              encoder_decoder ? 0 : model.num_layers);
  p.settings = Json{{"layers", layers}, {"max_tokens", max_tokens}, {"truncate", true},
                    {"limit", canonical_limit(o.limit, scan.cut_by_limit)},
                    {"skip_bad_lines", o.skip_bad_lines && !scan.skipped.empty()},
                    {"no_bos", o.no_bos && has_text}, {"sink_epsilon", o.sink_epsilon == 0 ? 0.0 : o.sink_epsilon}}.dump();  // -0 is 0
  return p;
}

void print_skipped(const CorpusScan& scan, const CensusRequest& o, std::vector<std::string>& warnings) {
  warnings.insert(warnings.end(), scan.warnings.begin(), scan.warnings.end());
  if (scan.skipped.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < scan.skipped.size() && i < 5; ++i) list += (i ? "; " : "") + scan.skipped[i];
  if (scan.skipped.size() > 5) list += "; …";
  warnings.push_back(o.corpus + ": skipped " + counted(static_cast<long long>(scan.skipped.size()), "bad line") + " (" + list + ")");
}

// Runs one text; an error about it names the corpus file and line (which text of thousands), and
// one the model run words as a --text or --token-ids option (options census does not have: the
// text came from the corpus) loses that name.
long run_text(const CensusModel& model, const CorpusText& t, const std::vector<std::int32_t>& ids, TextStatistics& text,
              std::vector<std::string>& warnings, const std::string& corpus) {
  const std::string where = "line " + std::to_string(t.line) + " (text " + std::to_string(t.index) + "): ";
  try {
    return model.run(t, ids, text, warnings);
  } catch (const UsageError& e) {
    std::string what = e.what();
    for (const std::string option : {"--token-ids: ", "--text: "})
      if (what.rfind(option, 0) == 0) what.erase(0, option.size());
    throw InputError::inconsistent(corpus, where + what);
  } catch (const LimitError& e) {
    throw LimitError(corpus + ": " + where + e.what());
  }
}

// Runs one pass over the corpus (`pass`) and checks the file did not change during it: an error
// the pass threw while the file changed (a line cut short reads as "not valid JSON") is reported
// as the change. With `expected` (the first pass's hash), a pass that hashed other bytes is a
// change too (one that kept size and time), told with `hash_advice`.
template <typename Pass>
CorpusScan watched_pass(const CorpusWatch& watch, const std::function<std::string()>& advice, const std::uint64_t* expected,
                        const std::function<std::string()>& hash_advice, Pass&& pass) {
  CorpusScan scan;
  try {
    scan = pass();
  } catch (const InputError&) {
    if (watch.changed()) watch.require_unchanged(advice());
    throw;
  }
  if (watch.changed()) watch.require_unchanged(advice());
  if (expected && scan.fingerprint != *expected)
    watch.fail("its bytes hash to " + hex64(scan.fingerprint) + ", not " + hex64(*expected) +
                   " as at the start, though its size and time are the same",
               hash_advice());
  return scan;
}

// What commit() would refuse at the end, refused before any work (the run may take hours): the
// folder cannot be made, or census.json/.csv/.png is one of the inputs or exists as a folder.
void require_writable_outputs(const CensusRequest& o) {
  require_creatable_folder(o.output, o.output);
  std::vector<std::string> paths;
  for (const char* name : {"census.json", "census.csv", "census.png", "texts.jsonl"}) paths.push_back((fs::path(o.output) / name).string());
  check_output_targets(paths, {o.model, o.corpus});
}

}  // namespace

namespace {

// The texts of the finished census in `folder` (its census.json, and a journal of the same run),
// or nullopt when the folder holds an unfinished or mixed one.
std::optional<long> finished_census_texts(const std::string& folder) {
  const std::string census_path = (fs::path(folder) / "census.json").string();
  std::error_code ec;
  if (!fs::exists(census_path, ec)) return std::nullopt;
  try {
    const CorpusCensus census = CorpusCensus::from_json(census_path);
    require_journal_of_census(folder, (fs::path(folder) / kJournalName).string(), census.provenance(), census.covered(), census_path);
    return census.texts();
  } catch (const Error&) {
    return std::nullopt;
  }
}

void remove_journal(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
  if (ec) throw OutputError::cannot_write(path, "could not remove the finished census's journal: " + ec.message());
}

}  // namespace

std::string shard_text(const CensusRequest& o) { return std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count); }

CorpusRun run_corpus(const CensusRequest& o, const CensusModelLoader& load_model, std::ostream& err,
                     std::vector<std::string>& warnings) {
  require_writable_outputs(o);
  const CorpusSettings settings{o.corpus_format, o.skip_bad_lines, o.limit};
  long with_text = 0;
  // Stamped before the first read: each later pass, and each text, is checked against it.
  const CorpusWatch watch(o.corpus);
  const std::function<std::string()> before_any = [] {
    return std::string("nothing was written; run again on the corpus as it now is");
  };
  const CorpusScan scan = watched_pass(watch, before_any, nullptr, before_any, [&] {
    return read_corpus(o.corpus, settings, [&](const CorpusText& t) { with_text += t.text ? 1 : 0; });
  });
  // N at most the texts, as the docs say: then every shard K < N holds text K (a Slurm array
  // larger than the corpus is refused whole, not in the tasks past the end only).
  if (o.shard_count > scan.texts)
    throw UsageError::bad_option("--shard", shard_text(o) +
                                                (o.shard_index >= scan.texts ? " holds no text" : " splits fewer texts than shards") +
                                                ": the corpus has " + counted(scan.texts, "text") +
                                                " after skipped lines and --limit (give N of at most " +
                                                std::to_string(scan.texts) + ")");
  const std::string journal_path = (fs::path(o.output) / kJournalName).string();
  std::error_code ec;
  // A finished census (census.json beside its own journal) run again is replaced, as a picture
  // folder is; an unfinished one is kept for --resume. The old journal goes only when this run's
  // first text is done: a run that stops before leaves the finished census as it was.
  const bool replace_finished = !o.resume && fs::exists(journal_path, ec);
  if (replace_finished) {
    const std::optional<long> finished = finished_census_texts(o.output);
    if (!finished)
      throw UsageError::bad_option("-o", o.output + " holds the journal (" + kJournalName + ") of an unfinished census: continue it "
                                                    "with --resume, or give another folder");
    warnings.push_back(o.output + " holds a finished census (" + counted(*finished, "text") + "): this run replaces it (run with "
                                  "--resume and a larger --limit to extend it instead)");
  }
  require_creatable_folder(o.output, o.output);

  // Each text allocates and frees the same few megabytes; glibc would hand them back to the
  // system after every text and fault them in again (10% of a stories260K census's time). The
  // mmap threshold is at most 32 MiB: glibc refused the 64 MiB asked here before, and the trim
  // threshold set alone left every block over 128 KiB mapped and unmapped text after text.
  keep_freed_memory_in_heap();
  const std::unique_ptr<const CensusModel> loaded = load_model(with_text > 0);
  const CensusModel& model = *loaded;
  // A longer --max-tokens would fail at the first long text, mid-run, naming the model's limit.
  if (o.max_tokens > 0 && model.context() > 0 && o.max_tokens > model.context())
    throw UsageError::bad_option("--max-tokens", std::to_string(o.max_tokens) + " is over " + model.summary().name +
                                                     "'s context length of " + std::to_string(model.context()) +
                                                     " tokens (leave it out to cut each text to the context)");
  const long max_tokens = o.max_tokens > 0 ? o.max_tokens : model.context();
  const CensusProvenance provenance =
      provenance_of(o, model.summary(), scan, max_tokens, model.encoder_decoder(), with_text > 0);
  CorpusCensus census(provenance, scan.texts);
  census.model_name = model.summary().name;
  std::vector<bool> done;
  std::vector<long> journal_tokens;  // per text index: the tokens the journal says it ran
  if (o.resume && fs::exists(journal_path, ec)) {
    for (const TextStatistics& text : read_journal(journal_path, provenance, shard_text(o))) {
      census.add(text);
      if (done.size() <= static_cast<std::size_t>(text.index)) {
        done.resize(static_cast<std::size_t>(text.index) + 1);
        journal_tokens.resize(static_cast<std::size_t>(text.index) + 1, 0);
      }
      done[static_cast<std::size_t>(text.index)] = true;
      journal_tokens[static_cast<std::size_t>(text.index)] = text.tokens;
    }
  }
  // A journal line must be the text it claims: its token count is checked against the corpus
  // (decoders; an encoder-decoder's count includes its translation, known only by running it).
  const auto require_journal_text = [&](const CorpusText& t) {
    if (model.encoder_decoder()) return;
    const long tokens = static_cast<long>(model.ids(t, max_tokens, o.no_truncate, o.corpus).size());
    const long claimed = journal_tokens[static_cast<std::size_t>(t.index)];
    if (tokens != claimed)
      throw InputError::inconsistent(journal_path, "text " + std::to_string(t.index) + " ran " + std::to_string(claimed) +
                                                       " tokens, but " + o.corpus + " line " + std::to_string(t.line) + " gives " +
                                                       std::to_string(tokens) + ": a damaged journal (remove it to start over)");
  };
  // Every text of the shard is checked before any work (tokenized for --no-truncate; an
  // encoder-decoder's lines must be texts), so that such a text is refused with nothing written.
  long shard_texts = 0;
  watched_pass(watch, before_any, &scan.fingerprint, before_any, [&] {
    return read_corpus(o.corpus, settings, [&](const CorpusText& t) {
      if (!in_shard(o, t.index)) return;
      ++shard_texts;
      if (static_cast<std::size_t>(t.index) < done.size() && done[static_cast<std::size_t>(t.index)]) return require_journal_text(t);
      if (o.no_truncate || model.encoder_decoder() || t.token_ids) model.ids(t, max_tokens, o.no_truncate, o.corpus);
    });
  });

  const long resumed = census.texts();
  std::unique_ptr<JournalWriter> journal;  // made when the first text finishes: an early error writes nothing
  Progress progress(err, o.progress, shard_texts - resumed);
  long done_now = 0;
  long long tokens_now = 0;
  // A text's own warnings (unknown source tokens, …) name its line; past kShownTextWarnings of
  // them the rest are counted, not printed (a corpus of thousands would bury the summary). A
  // warning every text gives (the model's own) is said once, without a line: the first text's
  // warnings are held until the end to tell the two apart.
  constexpr std::size_t kShownTextWarnings = 20;
  std::vector<std::string> text_lines;
  long text_warnings_more = 0;
  std::vector<std::string> first_text_warnings;
  std::map<std::string, long> first_text_counts;
  std::string first_text_prefix;
  const auto add_text_warning = [&](const std::string& prefix, const std::string& w) {
    if (text_lines.size() < kShownTextWarnings) text_lines.push_back(prefix + w);
    else ++text_warnings_more;
  };
  // What to do after a change mid-run: the journal's texts were read before the change (each
  // text is checked before it runs), so they hold for the corpus as it was.
  const std::function<std::string()> after_change = [&] {
    if (census.texts() == 0) return before_any();
    return "the " + counted(census.texts(), "text") + " done are kept in " + journal_path +
           " and belong to the corpus as it was: put that back and run the same command with --resume, or remove " +
           journal_path + " to start over on the corpus as it now is";
  };
  {
    const InterruptExit interrupt_exit(journal_path, o.progress == "bar");
    const auto run_pass = [&] {
      return read_corpus(o.corpus, settings, [&](const CorpusText& t) {
        if (!in_shard(o, t.index)) return;
        if (static_cast<std::size_t>(t.index) < done.size() && done[static_cast<std::size_t>(t.index)]) return;  // in the journal (checked against the corpus above)
        if (watch.changed()) watch.require_unchanged(after_change());
        const std::vector<std::int32_t> ids = model.ids(t, max_tokens, o.no_truncate, o.corpus);
        TextStatistics text;
        text.index = t.index;
        std::vector<std::string> text_warnings;
        text.tokens = run_text(model, t, ids, text, text_warnings, o.corpus);
        if (!journal) {
          if (replace_finished) remove_journal(journal_path);
          fs::create_directories(o.output, ec);
          journal = std::make_unique<JournalWriter>(journal_path, journal_header(provenance, shard_text(o)));
        }
        journal->append(journal_line(text));
        census.add(text);
        const std::string prefix = o.corpus + ": line " + std::to_string(t.line) + " (text " + std::to_string(t.index) + "): ";
        if (done_now == 0) {
          first_text_prefix = prefix;
          for (const std::string& w : text_warnings)
            if (first_text_counts.emplace(w, 1).second) first_text_warnings.push_back(w);
        } else {
          for (const std::string& w : text_warnings) {
            const auto seen = first_text_counts.find(w);
            if (seen != first_text_counts.end()) ++seen->second;
            else add_text_warning(prefix, w);
          }
        }
        ++done_now;
        tokens_now += text.tokens;
        progress.update(done_now, tokens_now);
      });
    };
    // A change that kept size and time is found only by the hash at the end: the texts may have
    // been read from the new bytes, so the journal holds for neither corpus.
    const std::function<std::string()> hash_changed = [&] {
      if (census.texts() == 0) return before_any();
      return "the texts done may have been read from the new bytes: remove " + journal_path + " and run again";
    };
    watched_pass(watch, after_change, &scan.fingerprint, hash_changed, run_pass);
  }
  progress.finish();
  if (replace_finished && !journal) remove_journal(journal_path);  // no text ran: none of the old run's may stay
  {
    std::vector<std::string> own;  // the first text's own, then the others'
    for (const std::string& w : first_text_warnings) {
      if (first_text_counts[w] == done_now) {
        if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
      } else {
        const long others = first_text_counts[w] - 1;  // later texts that gave the same words
        own.push_back(others == 0 ? first_text_prefix + w
                                  : first_text_prefix.substr(0, first_text_prefix.size() - 2) + " and " + std::to_string(others) +
                                        " more text" + (others == 1 ? "" : "s") + ": " + w);
      }
    }
    own.insert(own.end(), text_lines.begin(), text_lines.end());
    if (own.size() > kShownTextWarnings) {
      text_warnings_more += static_cast<long>(own.size() - kShownTextWarnings);
      own.resize(kShownTextWarnings);
    }
    warnings.insert(warnings.end(), own.begin(), own.end());
    if (text_warnings_more > 0)
      warnings.push_back(o.corpus + ": " + std::to_string(text_warnings_more) + " more warnings about single texts, not shown (the first " +
                         std::to_string(kShownTextWarnings) + " are above)");
  }
  print_skipped(scan, o, warnings);
  return CorpusRun{std::move(census), scan.texts, resumed};
}

CorpusCensus merge_census_outputs(const std::vector<std::string>& folders, const std::string& output) {
  std::error_code ec;
  for (const std::string& dir : folders)
    if (fs::exists(output, ec) && fs::equivalent(dir, output, ec))
      throw UsageError::bad_option("-o", output + " is one of the folders merged; write the merge to a new folder");
  // A merged census.json beside a shard's journal would be taken for that shard's by --resume.
  if (fs::exists(fs::path(output) / kJournalName, ec))
    throw UsageError::bad_option("-o", output + " holds a census journal (" + kJournalName + ") of a run: write the merge to "
                                                  "another folder");
  // Every input is read and checked, then checked against the others, before any is merged:
  // each message names the very files that disagree.
  std::vector<CorpusCensus> inputs;
  std::vector<std::string> paths;
  std::vector<IndexRanges> covered;
  for (const std::string& dir : folders) {
    paths.push_back((fs::path(dir) / "census.json").string());
    if (!fs::exists(paths.back(), ec) && fs::exists(fs::path(dir) / kJournalName, ec))
      throw InputError::unreadable(paths.back(), std::string("no such file, but ") + kJournalName + " is there: the run that writes "
                                                 "census.json has not finished; finish it with the same command and --resume");
    inputs.push_back(CorpusCensus::from_json(paths.back()));
    if (fs::exists(fs::path(dir) / kJournalName, ec))
      require_journal_of_census(dir, (fs::path(dir) / kJournalName).string(), inputs.back().provenance(), inputs.back().covered(),
                                paths.back());
    covered.push_back(inputs.back().covered());
    require_same_provenance(inputs.front().provenance(), inputs.back().provenance(), paths.front(), paths.back());
  }
  require_disjoint(covered, paths);
  CorpusCensus merged = std::move(inputs.front());
  for (std::size_t i = 1; i < inputs.size(); ++i) merged.merge(inputs[i], paths.front(), paths[i]);
  return merged;
}

}  // namespace attnviz
