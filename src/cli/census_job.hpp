// The head census of a whole model (issue 13, `compare --model … --census FILE`): the `--stats`
// statistics and the induction score of every (layer, head), gathered block by block as the
// model runs, saved as CSV or JSON, and drawn as one layer × head heat-table per statistic.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "io/census_output.hpp"
#include "model/model_run.hpp"

namespace attnviz {

/// One census row per head of `block`, over its query rows that are real tokens and not fully
/// masked (as compare's statistics); the positional statistics and the induction score for
/// self-attention only.
std::vector<CensusRow> census_of_block(const AttentionBlock& block);

class CensusCollector {
 public:
  void add(const AttentionBlock& block);
  const std::vector<CensusRow>& rows() const { return rows_; }
  /// True when some row has an induction score (the text repeats a token).
  bool has_induction() const;
  /// The census as written to `path`: CSV or JSON by its extension (see census_format).
  std::string file_text(const std::string& path) const;
  /// The census picture: one layer × head table per statistic, each on its own min–max scale,
  /// values printed in the cells. PNG bytes.
  std::string render_png(const ModelRunInfo& info, const Options& options, double memory_budget,
                         std::vector<std::string>& warnings) const;

 private:
  std::vector<CensusRow> rows_;
  int num_heads_ = 0;
  std::vector<int> layers_;
};

/// ".csv" or ".json" from `path` (case-insensitive); throws UsageError naming `option` otherwise.
std::string census_format(const std::string& path, const std::string& option = "--census");

}  // namespace attnviz
