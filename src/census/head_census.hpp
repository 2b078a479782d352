// The head census of a whole model (issue 13, `compare --model … --census FILE`): the `--stats`
// statistics and the induction score of every (layer, head), gathered block by block as the
// model runs, saved as CSV or JSON (drawn by render/head_census_picture).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model_run.hpp"
#include "records/census_output.hpp"

namespace attnviz {

/// One census row per head of `block`, over its query rows that are real tokens and not fully
/// masked (as compare's statistics); the positional statistics and the induction score for
/// self-attention only. Rows of an encoder-decoder's blocks carry the block's stack and kind.
std::vector<CensusRow> census_of_block(const AttentionBlock& block);

/// The census row of head `head` of `block` from its weights [n_q, n_k] (the block's own may be
/// empty: head by head), over `rows` = the block's statistic rows under `allowed` = its mask.
CensusRow census_of_head(const AttentionBlock& block, int head, const Matrix& weights, const MaskMatrix& allowed,
                         const std::vector<long>& rows);
/// census_of_head with the weights as a stack of one head (what head_statistics reads), uncopied.
CensusRow census_row(const AttentionBlock& block, int head, const std::vector<Matrix>& one_head, const MaskMatrix& allowed,
                     const std::vector<long>& rows);

/// "L1H6", or "enc.L1H6" / "dec.L1H6" / "cross.L1H6" for a row with a stack: how the terminal
/// and the picture name a census row's head.
std::string census_head_name(const CensusRow& row);

/// The block of a row: "" (decoder-only), "enc", "dec" or "cross".
std::string census_block(const CensusRow& row);

class CensusCollector {
 public:
  /// A whole block's rows; a block without weights (its heads came to add_head) closes it.
  void add(const AttentionBlock& block);
  /// Head `head`'s row from its weights, as the forward pass hands them on (heads in order;
  /// then add(block) without weights). Rows come out as add's would, bit for bit.
  /// `weights` is lent (swapped out and back), not copied.
  void add_head(const AttentionBlock& block, int head, Matrix& weights);
  const std::vector<CensusRow>& rows() const { return rows_; }
  /// True when some row has an induction score (the text repeats a token).
  bool has_induction() const;
  /// The census as written to `path`: CSV or JSON by its extension (see census_format).
  std::string file_text(const std::string& path) const;
  /// A block seen: its name ("" for decoder-only models, else "enc", "dec" or "cross") and layer,
  /// in the order the model ran them.
  struct Block {
    std::string name;
    int layer = 0;
  };
  const std::vector<Block>& blocks() const { return blocks_; }
  /// The most heads any block had.
  int num_heads() const { return num_heads_; }

 private:
  std::vector<CensusRow> rows_;
  int num_heads_ = 0;
  MaskMatrix head_allowed_;                     // the current block's mask and statistic rows
  std::optional<std::vector<long>> head_rows_;  // (add_head), reset when the block closes
  std::vector<Block> blocks_;
};

/// ".csv" or ".json" from `path` (case-insensitive); throws UsageError naming `option` otherwise.
std::string census_format(const std::string& path, const std::string& option = "--census");

}  // namespace attnviz
