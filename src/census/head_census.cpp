#include "census/head_census.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.hpp"

namespace attnviz {

namespace {

// The query rows statistics use: not padding, not fully masked.
std::vector<long> statistic_rows(const AttentionRecord& record, const MaskMatrix& allowed) {
  std::vector<long> skipped = record.fully_masked_rows;
  for (std::size_t i = 0; i < record.query_mask.size(); ++i)
    if (record.query_mask[i] == 0) skipped.push_back(static_cast<long>(i));
  return rows_for_statistics(static_cast<long>(record.query_tokens.size()), allowed, skipped);
}

}  // namespace

std::vector<CensusRow> census_of_block(const AttentionBlock& block) {
  const AttentionRecord& record = block.record;
  const MaskMatrix allowed = record.allowed();
  const std::vector<long> rows = statistic_rows(record, allowed);
  std::vector<CensusRow> census;
  if (rows.empty()) return census;
  for (int h = 0; h < record.num_heads; ++h)
    census.push_back(census_of_head(block, h, record.weights[static_cast<std::size_t>(h)], allowed, rows));
  return census;
}

CensusRow census_of_head(const AttentionBlock& block, int head, const Matrix& weights, const MaskMatrix& allowed,
                         const std::vector<long>& rows) {
  return census_row(block, head, {weights}, allowed, rows);
}

CensusRow census_row(const AttentionBlock& block, int head, const std::vector<Matrix>& one_head, const MaskMatrix& allowed,
                     const std::vector<long>& rows) {
  const Matrix& weights = one_head.front();
  const bool self = block.record.mode == "self";
  CensusRow row;
  if (block.encoder_decoder) {
    row.stack = block.stack;
    row.kind = block.kind;
  }
  row.layer = block.layer;
  row.head = head;
  row.stats = head_statistics(one_head, allowed, rows, self).front();
  row.stats.argmax_keys.clear();
  if (self) row.induction = induction_score(weights, block.record.query_tokens, rows);
  return row;
}

std::string census_block(const CensusRow& row) { return row.stack.empty() ? "" : block_name(row.stack, row.kind); }

std::string census_head_name(const CensusRow& row) { return model_head_name(census_block(row), row.layer, row.head); }

void CensusCollector::add(const AttentionBlock& block) {
  if (block.record.weights.empty()) {  // its heads came one at a time (add_head)
    head_rows_.reset();
    head_allowed_ = MaskMatrix();
  } else {
    std::vector<CensusRow> rows = census_of_block(block);
    rows_.insert(rows_.end(), rows.begin(), rows.end());
  }
  num_heads_ = std::max(num_heads_, block.record.num_heads);
  blocks_.push_back({block.block_name(), block.layer});
}

void CensusCollector::add_head(const AttentionBlock& block, int head, Matrix& weights) {
  if (head == 0 || !head_rows_) {  // the block's mask and rows, once for its heads
    head_allowed_ = block.record.allowed();
    head_rows_ = statistic_rows(block.record, head_allowed_);
  }
  if (head_rows_->empty()) return;
  // Lent to the statistics as a one-head stack and given back: no copy of n² weights.
  std::vector<Matrix> one_head(1);
  one_head.front().swap(weights);
  rows_.push_back(census_row(block, head, one_head, head_allowed_, *head_rows_));
  weights.swap(one_head.front());
}

bool CensusCollector::has_induction() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const CensusRow& r) { return r.induction.has_value(); });
}

std::string CensusCollector::file_text(const std::string& path) const {
  return census_format(path) == ".csv" ? census_to_csv(rows_) : census_to_json(rows_);
}

std::string census_format(const std::string& path, const std::string& option) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension != ".json" && extension != ".csv")
    throw UsageError::bad_option(option, "the file name must end in .csv or .json, got \"" + path + "\"");
  return extension;
}

}  // namespace attnviz
