// The head census over a corpus (issue 22): per text, every head's statistics (the one-text
// census's, the sink indicator, TransformerLens's detector scores); over texts, each statistic
// as a RunningStat (count, mean, M2 in double) that shards merge exactly. Which texts a census
// covers and what produced it (model, corpus, settings, version) travel with it, so that merging
// can refuse outputs that do not belong together. census.json and census.csv
// (census.png: render/corpus_census_picture).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attention/head_detectors.hpp"
#include "attention/head_stats.hpp"
#include "attention/running_stat.hpp"
#include "model/model_run.hpp"

namespace attnviz {

/// The statistics, in the files' column order: the one-text census's names (entropy_mean,
/// entropy_normalised_mean, max_weight_mean, mean_distance, diagonal_mass, previous_token_mass,
/// first_token_mass, induction_score), then sink_rate, previous_token_score,
/// duplicate_token_score, induction_score_tl.
const std::vector<std::string>& corpus_statistic_names();

/// One head of a model: its block (stack/kind empty for decoder-only models), layer and head.
struct CensusHead {
  std::string stack, kind;
  int layer = 0, head = 0;
  /// "L1H6", or "enc.L1H6" / "dec.L1H6" / "cross.L1H6".
  std::string name() const;
};

/// One text's values: per head, one value per statistic (nullopt where undefined on this text).
struct TextStatistics {
  long index = 0;       ///< the text's index in the corpus (after skipped lines)
  long tokens = 0;      ///< tokens run (after truncation)
  std::vector<std::pair<CensusHead, std::vector<std::optional<double>>>> heads;
};

/// Appends every head of `block` to `text`: the one-text census statistics (census_of_block)
/// and, for self-attention, sink_rate's 0/1 indicator with `sink_epsilon` and the detector
/// scores over `token_ids` (the block's query tokens' ids; when their count differs, as for an
/// encoder-decoder's blocks, the query tokens' strings stand for ids).
void add_block_statistics(const AttentionBlock& block, const std::vector<std::int32_t>& token_ids, double sink_epsilon,
                          TextStatistics& text);

/// add_block_statistics head by head, for a block whose heads come one at a time (HeadSink):
/// built from the block without its weights (tokens, masks), it finds the rows, their spans of
/// allowed keys and the detector cells once; add_head then appends one head's values.
class BlockStatistics {
 public:
  BlockStatistics(const AttentionBlock& block, const std::vector<std::int32_t>& token_ids);
  /// Appends head `head` of the block, weights w [n_q, n_k], to `text`.
  void add_head(const AttentionBlock& block, int head, const Matrix& w, double sink_epsilon, TextStatistics& text) const;

 private:
  MaskMatrix allowed_;
  StatisticRows rows_;
  std::vector<long> skipped_;  ///< the query rows the statistics leave out
  bool self_ = false;
  DetectionCells cells_;
  InductionKeys induction_keys_;
};

/// What produced a census; two censuses merge only when every part is equal.
struct CensusProvenance {
  std::string attnviz_version;    ///< ATTNVIZ_VERSION
  std::string model;              ///< JSON text: name, architecture, layers, heads, file bytes
  std::string corpus;             ///< JSON text: file name, format, FNV-1a 64 of its bytes, texts
  std::string settings;           ///< JSON text: layers, max_tokens, truncate, limit, sink_epsilon, ...
};

/// Sorted, disjoint, non-adjacent inclusive ranges of text indices.
using IndexRanges = std::vector<std::pair<long, long>>;

class CorpusCensus {
 public:
  CorpusCensus() = default;
  explicit CorpusCensus(CensusProvenance provenance, long corpus_texts) : provenance_(std::move(provenance)), corpus_texts_(corpus_texts) {}

  /// Adds one text's values. Requires its index not covered yet.
  void add(const TextStatistics& text);
  /// Chan et al.'s merge of `other` into this census. Throws InputError naming `other_source`
  /// and `this_source` when provenance differs (naming each member that differs, with both
  /// values: require_same_provenance) or when a text is covered by both (require_disjoint).
  void merge(const CorpusCensus& other, const std::string& this_source, const std::string& other_source);

  const IndexRanges& covered() const { return covered_; }
  long texts() const;
  long long tokens() const { return tokens_; }
  long corpus_texts() const { return corpus_texts_; }
  const CensusProvenance& provenance() const { return provenance_; }
  const std::vector<CensusHead>& heads() const { return heads_; }
  /// [head][statistic]
  const std::vector<std::vector<RunningStat>>& stats() const { return stats_; }
  std::string model_name;  ///< for the picture's title

  /// census.json: {"format": "attnviz.census", "version": 1, "attnviz_version", "model",
  /// "corpus", "settings", "covers": {"texts", "tokens", "ranges"}, "statistics": [...],
  /// "heads": [{[stack, kind,] layer, head, S: {texts, mean, m2, std, ci95_low, ci95_high}}]}.
  std::string to_json() const;
  /// census.csv: [stack,kind,]layer,head, then S_texts,S_mean,S_std,S_ci95_low,S_ci95_high for
  /// every statistic S; empty fields where undefined.
  std::string to_csv() const;
  /// Reads census.json written by to_json, after check_census_json. Throws InputError naming
  /// `path`, the member and the value for anything but a valid census.json (census_check.hpp).
  static CorpusCensus from_json(const std::string& path);

 private:
  static CorpusCensus read_census(const std::string& path);
  /// The slot of `head` (added when new); `hint`, the slot it likely has, is tried first.
  std::size_t head_slot(const CensusHead& head, std::size_t hint);
  void cover(long index);

  CensusProvenance provenance_;
  long corpus_texts_ = 0;
  IndexRanges covered_;
  long long tokens_ = 0;
  std::vector<CensusHead> heads_;
  std::vector<std::vector<RunningStat>> stats_;
};

/// The format and version census.json and the journal carry.
inline constexpr const char* kCensusFormat = "attnviz.census";
inline constexpr int kCensusVersion = 1;

}  // namespace attnviz
