#include "cli/model_compare_job.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>

#include "analysis/measures.hpp"
#include "census/head_census.hpp"
#include "cli/attention_job.hpp"
#include "cli/compare_job.hpp"
#include "cli/head_stream.hpp"
#include "cli/model_job.hpp"
#include "cli/run.hpp"
#include "cli/stale_outputs.hpp"
#include "core/error.hpp"
#include "io/atomic_output.hpp"
#include "render/head_census_picture.hpp"

namespace attnviz {

namespace {

std::string head_name(const LayerHead& head) { return model_head_name(head.block, head.layer, head.head); }

void check_options(const Options& o) {
  if (o.output.empty()) throw UsageError::bad_option("-o", "required: the PNG file to write");
  if (!o.heads.empty())
    throw UsageError::bad_option("--heads", "with --model, name each head with its layer, e.g. L0H3,L4H1");
  if (o.layer_heads.empty() && o.census.empty())
    throw UsageError::bad_option("--model", "compare of a whole model needs --heads L0H3,L4H1 (heads of any layers "
                                            "side by side) or --census FILE.csv|FILE.json (every head's statistics)");
  if (!o.census.empty()) census_format(o.census);
  if (o.layer_heads.empty() && !o.stats.empty())
    throw UsageError::bad_option("--stats", "goes with --heads; without it, --census holds every head's statistics");
  // Heads of two kinds of block attend over different tokens (source or target): one picture
  // cannot hold both.
  for (const LayerHead& head : o.layer_heads) {
    const LayerHead& first = o.layer_heads.front();
    if (!head.block.empty() && !first.block.empty() && head.block != first.block)
      throw UsageError::bad_option("--heads", head_name(first) + " and " + head_name(head) +
                                                  " are heads of different kinds of block; compare heads of one kind "
                                                  "(enc., dec. or cross.) at a time");
  }
}

// What a plain L0H3 may mean on an encoder-decoder model: every named form.
std::string named_forms(const LayerHead& head) {
  std::string forms;
  const std::vector<BlockName>& names = block_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    forms += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") +
             model_head_name(names[i].name, head.layer, head.head) + " (" + names[i].description + ")";
  }
  return forms;
}

// Refuses a head named without its block on an encoder-decoder, or with one on a decoder-only
// model, before any head is copied.
void check_block_named(const LayerHead& head, const AttentionBlock& block) {
  if (head.block.empty() && block.encoder_decoder)
    throw UsageError::bad_option("--heads", head_name(head) + " is ambiguous: this encoder-decoder model has a head " +
                                                head_name(head) + " in each kind of block; name one: " +
                                                named_forms(head));
  if (!head.block.empty() && !block.encoder_decoder)
    throw UsageError::bad_option("--heads", head_name(head) + " names a block of an encoder-decoder model; this model "
                                                "has one kind of block: name the head L" +
                                                std::to_string(head.layer) + "H" + std::to_string(head.head));
}

// The chosen heads, copied out of their blocks as the model runs (in the order asked).
class HeadPicker {
 public:
  explicit HeadPicker(const std::vector<LayerHead>& heads) : heads_(heads), weights_(heads.size()) {}

  void add(const AttentionBlock& block) {
    const std::string name = block.block_name();
    for (std::size_t i = 0; i < heads_.size(); ++i) {
      check_block_named(heads_[i], block);
      if (heads_[i].block != name || heads_[i].layer != block.layer) continue;
      if (heads_[i].head >= block.record.num_heads)
        throw UsageError::bad_option("--heads", head_name(heads_[i]) + " does not exist: layer " + std::to_string(block.layer) +
                                                    " has heads 0-" + std::to_string(block.record.num_heads - 1));
      if (!block.record.weights.empty()) weights_[i] = block.record.weights[static_cast<std::size_t>(heads_[i].head)];
      if (!base_) {
        base_ = block.record;
        base_->weights.clear();
      }
    }
  }

  // Head `head` of `block` as the forward pass hands it on: copied when chosen (add(block)
  // checks the names when the block closes).
  void add_head(const AttentionBlock& block, int head, const Matrix& weights) {
    const std::string name = block.block_name();
    for (std::size_t i = 0; i < heads_.size(); ++i)
      if (heads_[i].block == name && heads_[i].layer == block.layer && heads_[i].head == head) weights_[i] = weights;
  }

  // A record whose heads are the chosen heads. Throws UsageError for a layer never seen.
  AttentionRecord record(int num_layers) {
    for (std::size_t i = 0; i < heads_.size(); ++i) {
      if (weights_[i].size() == 0)
        throw UsageError::bad_option("--heads", head_name(heads_[i]) + " does not exist: this model has layers 0-" +
                                                    std::to_string(num_layers - 1) + " (or --layers left it out)");
    }
    AttentionRecord r = std::move(*base_);
    r.layer.reset();
    r.num_heads = static_cast<int>(heads_.size());
    r.num_kv_heads = 0;
    r.weights = std::move(weights_);
    return r;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> names;
    for (const LayerHead& head : heads_) names.push_back(head_name(head));
    return names;
  }

 private:
  std::vector<LayerHead> heads_;
  std::vector<Matrix> weights_;
  std::optional<AttentionRecord> base_;
};

// "previous-token mass: L1H6 0.83, L2H0 0.52, L0H3 0.41": the heads ranked first by a statistic.
void print_top(const std::vector<CensusRow>& rows, const char* what,
               const std::function<std::optional<double>(const CensusRow&)>& value, std::ostream& out) {
  std::vector<std::pair<double, std::string>> ranked;
  for (const CensusRow& row : rows)
    if (const std::optional<double> v = value(row)) ranked.emplace_back(*v, census_head_name(row));
  if (ranked.empty()) return;
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  out << "top " << what << ":";
  for (std::size_t i = 0; i < std::min<std::size_t>(3, ranked.size()); ++i) {
    char text[64];
    std::snprintf(text, sizeof text, "%s %s %.3f", i == 0 ? "" : ",", ranked[i].second.c_str(), ranked[i].first);
    out << text;
  }
  out << "\n";
}

}  // namespace

void run_model_compare(const Options& options, PhaseTimer& timer, std::ostream& out, std::vector<std::string>& warnings) {
  check_options(options);
  CensusCollector census;
  HeadPicker picker(options.layer_heads);
  if (options.measure == "alti")
    throw UsageError::bad_option("--measure", "alti has one map per layer (every head and the residual mixed), no heads to "
                                              "compare or census; draw every layer with heatmaps --model … --measure alti, or "
                                              "compare two layers' files from dump --model … --measure alti --layers 2 (one each)");
  // Head by head (issue 23): each head's census row, and the chosen heads copied, as it comes.
  const bool census_wanted = !options.census.empty() || options.layer_heads.empty();
  const HeadSink heads = [&](const AttentionBlock& block, int head, Matrix& weights) {
    if (census_wanted) census.add_head(block, head, weights);
    if (!options.layer_heads.empty()) picker.add_head(block, head, weights);
  };
  const BlockSink closed = [&](AttentionBlock&& block) {
    if (census_wanted) census.add(block);
    if (!options.layer_heads.empty()) picker.add(block);
  };
  const BlockSink split = split_heads(heads, closed);
  const BlockSink sink = [&](AttentionBlock&& block) {
    std::vector<std::string> unused;
    // norms: the census and heads read rows of N normalised (whole blocks: --measure is not streamed)
    if (!block.record.weights.empty()) compare_measure(options.measure, block.record, unused);
    split(std::move(block));
  };
  const double budget = memory_budget_bytes(options);
  // The chosen heads' weights are kept until the comparison is drawn; the census is small.
  const KeptBytes kept = [&](long tokens, int, int) {
    return static_cast<double>(options.layer_heads.size()) * static_cast<double>(tokens) * static_cast<double>(tokens) *
           sizeof(Scalar);
  };
  const ModelRunInfo info = run_model(options, sink, warnings, budget, kept, nullptr, &heads);
  if (!options.census.empty() && !census.has_induction())
    warnings.push_back("--census: the text repeats no token, so the induction score is left empty");
  OutputSet census_files;
  if (!options.census.empty()) census_files.add(options.census, census.file_text(options.census));
  if (!options.layer_heads.empty()) {
    return run_compare_heads(picker.record(info.model.num_layers), picker.names(), options, timer, out, warnings,
                             std::move(census_files),
                             options.census.empty() ? std::vector<TextTable>() : std::vector<TextTable>{head_census_table(census)});
  }
  timer.lap("compute");
  add_head_census_pictures(census, info, options, options.output, budget, census_files, warnings);
  timer.lap("render");
  census_files.protect(input_files(options));
  census_files.commit();
  warn_about_stale_formats(options.output, census_files.paths(), warnings);
  timer.lap("write");
  print_top(census.rows(), "previous-token mass", [](const CensusRow& r) { return r.stats.previous_mass; }, out);
  print_top(census.rows(), "first-token mass", [](const CensusRow& r) { return r.stats.first_token_mass; }, out);
  print_top(census.rows(), "diagonal mass", [](const CensusRow& r) { return r.stats.diagonal_mass; }, out);
  print_top(census.rows(), "induction score", [](const CensusRow& r) { return r.induction; }, out);
  std::string written;  // the pictures (--format may add .svg and .html beside the PNG), then the table
  for (const std::string& path : census_files.paths())
    if (path != options.census) written += path + " and ";
  out << "wrote " << written << options.census << ": " << census.rows().size() << " heads\n";
}

}  // namespace attnviz
