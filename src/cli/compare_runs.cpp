#include "cli/compare_runs.hpp"

#include <algorithm>

#include "cli/attention_job.hpp"
#include "core/error.hpp"
#include "io/json_file.hpp"
#include "records/model_dump.hpp"
#include "records/record_json.hpp"
#include "records/safetensors_dump.hpp"

namespace attnviz {

namespace {

void require_same_tokens(const Tokens& a, const Tokens& b, const std::string& what, const CompareRun& run_a,
                         const CompareRun& run_b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      throw InputError::inconsistent(run_b.record.inputs.front(), what + " token " + std::to_string(i) + " is \"" + b[i] +
                                                                      "\" but \"" + a[i] + "\" in " + run_a.record.inputs.front() +
                                                                      " (both runs must use the same tokens)");
    }
  }
  if (a.size() != b.size()) {
    throw InputError::inconsistent(run_b.record.inputs.front(), std::to_string(b.size()) + " " + what + " tokens, but " +
                                                                    std::to_string(a.size()) + " in " +
                                                                    run_a.record.inputs.front());
  }
}

// A model dump holding exactly one attention block compares as that block (dump --layers L);
// one with more is refused, naming the two ways to compare layers.
bool is_compared_text(const FileText& text, const std::string& path) {
  return is_safetensors_text(text) || is_model_dump_text(text) || is_record_text(text, path);
}

AttentionRecord read_compared_record(const FileText& text, const std::string& path, std::vector<std::string>& warnings) {
  ModelDump dump;
  if (is_safetensors_text(text)) {
    // The reader owns its bytes; the inputs' texts stay with their list (a pipe is read once).
    SafetensorsDump stored = read_safetensors_dump(FileText::own(std::string(text.view())), path, warnings);
    if (!stored.model) return std::move(stored.record);
    dump = std::move(*stored.model);
  } else if (!is_model_dump_text(text)) {
    return read_record(text, path, warnings);
  } else {
    dump = read_model_dump(text, path, warnings);
  }
  if (dump.blocks.size() != 1) {
    throw InputError::inconsistent(path, "is a model dump of " + std::to_string(dump.blocks.size()) +
                                             " attention blocks; compare reads one: dump a single layer (--layers 2), "
                                             "or compare heads of any layers with compare --model MODEL --heads L0H3,L2H1");
  }
  return std::move(dump.blocks.front().record);
}

}  // namespace

// Each input is read once: a pipe looked into to tell a dump from a sentence file cannot be
// read again.
// One computed run laps "load" inside compute_record; dumps lap it once read.
std::vector<CompareRun> load_compare_runs(const Options& options, std::vector<std::string>& warnings, double budget,
                                          PhaseTimer& timer) {
  InputTexts texts;
  // A safetensors dump is read as it is; everything else as JSON, each input once.
  for (const std::string* path : {&options.sentence, &options.weights})
    if (!path->empty() && !texts.count(*path)) texts.emplace(*path, read_dump_text(*path, budget));
  const FileText& first = input_text(texts, options.sentence, budget);
  if (!is_compared_text(first, options.sentence)) return {{"", compute_record(options, warnings, &timer, std::move(texts)), {}}};
  if (!options.source.empty() || options.causal || options.no_causal || !options.rope.empty() || options.rope_theta ||
      options.rope_dim || options.positional != "none") {
    throw UsageError::bad_option("compare", "--source, --causal, --no-causal, --rope, --rope-theta, --rope-dim and "
                                            "--positional apply when computing "
                                            "attention, not to attention JSON files such as " + options.sentence);
  }
  std::vector<CompareRun> runs{{"A", read_compared_record(first, options.sentence, warnings), {}}};
  if (!options.weights.empty()) {
    const FileText& second = input_text(texts, options.weights, budget);
    if (!is_compared_text(second, options.weights)) {
      throw InputError::inconsistent(options.weights, "expected a second attention JSON (weights [head][query][key]) "
                                                      "to compare with " + options.sentence + ", got another kind of file");
    }
    runs.push_back({"B", read_compared_record(second, options.weights, warnings), {}});
  } else {
    runs.front().label = "";
  }
  timer.lap("load");
  return runs;
}

void require_same_tokens(const std::vector<CompareRun>& runs) {
  if (runs.size() != 2) return;
  require_same_tokens(runs[0].record.query_tokens, runs[1].record.query_tokens, "query", runs[0], runs[1]);
  require_same_tokens(runs[0].record.key_tokens, runs[1].record.key_tokens, "key", runs[0], runs[1]);
}

namespace {

// "L0H0–L0H3" (or "0–3" for a run that records no layer): the names --heads accepts.
std::string valid_names(const CompareRun& run, int available) {
  if (!run.record.layer) return "0–" + std::to_string(available - 1);
  return head_name(run, 0) + "–" + head_name(run, available - 1);
}

// One --heads L<l>H<h> on single-layer runs: the layer must be every run's own (a head of
// another layer is not in these files) and the head one every run has; the head's number.
int resolve_named_head(const LayerHead& named, const std::vector<CompareRun>& runs, int available) {
  const std::string name = named.block.empty() ? "L" + std::to_string(named.layer) + "H" + std::to_string(named.head)
                                               : named.block + ".L" + std::to_string(named.layer) + "H" +
                                                     std::to_string(named.head);
  const std::string by_number = "; or name heads by number (" + std::to_string(named.head) + ")";
  if (!named.block.empty())
    throw UsageError::bad_option("--heads", name + " names a block of a whole model (compare --model); these runs are "
                                                "single layers: name heads " + valid_names(runs.front(), available) +
                                                by_number);
  for (const CompareRun& run : runs) {
    const std::string& file = run.record.inputs.front();
    if (!run.record.layer)
      throw UsageError::bad_option("--heads", name + " names layer " + std::to_string(named.layer) + ", but " + file +
                                                  " records no layer: name heads by number, 0–" +
                                                  std::to_string(available - 1));
    if (*run.record.layer != named.layer) {
      const bool layers_differ = runs.size() == 2 && runs[0].record.layer != runs[1].record.layer;
      throw UsageError::bad_option(
          "--heads", name + " is not in " + file + ", which holds layer " + std::to_string(*run.record.layer) +
                         (layers_differ ? " (the two runs are different layers: name heads by number, e.g. " +
                                              std::to_string(named.head) + ", to take the same head of each)"
                                        : ": valid heads are " + valid_names(run, available)));
    }
  }
  if (named.head >= available)
    throw UsageError::bad_option("--heads", name + " does not exist: valid heads are " +
                                                valid_names(runs.front(), available));
  return named.head;
}

// Without --heads, two runs with different head counts are refused: comparing only the heads
// they share would silently drop the rest of the larger run.
void require_same_head_count(const std::vector<CompareRun>& runs) {
  if (runs.size() != 2 || runs[0].record.num_heads == runs[1].record.num_heads) return;
  const int shared = std::min(runs[0].record.num_heads, runs[1].record.num_heads);
  throw InputError::inconsistent(runs[1].record.inputs.front(),
                                 std::to_string(runs[1].record.num_heads) + " heads, but " +
                                     std::to_string(runs[0].record.num_heads) + " in " + runs[0].record.inputs.front() +
                                     ": compare pairs head h of one run with head h of the other; name heads both "
                                     "have with --heads (" + valid_names(runs[0], shared) + ")");
}

}  // namespace

std::vector<int> chosen_heads(const Options& options, const std::vector<CompareRun>& runs) {
  int available = runs.front().record.num_heads;
  for (const CompareRun& run : runs) available = std::min(available, run.record.num_heads);
  std::vector<int> heads = options.heads;
  for (const LayerHead& named : options.layer_heads) {
    heads.push_back(resolve_named_head(named, runs, available));
  }
  if (heads.empty()) {
    require_same_head_count(runs);
    for (int h = 0; h < available; ++h) heads.push_back(h);
  }
  for (int h : heads) {
    if (h < 0 || h >= available) {
      throw UsageError::bad_option("--heads", "head " + std::to_string(h) + " does not exist: valid heads are 0–" +
                                                  std::to_string(available - 1));
    }
  }
  return heads;
}

}  // namespace attnviz
