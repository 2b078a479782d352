#include "records/measure_fields.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "records/record_json.hpp"

namespace attnviz {

namespace {

// A norm is never negative: a negative entry is not what attnviz wrote.
void require_non_negative(const Matrix& m, const std::string& file, const std::string& pointer) {
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      if (m(i, j) < 0)
        throw InputError::bad_value(file, pointer + "/" + std::to_string(i) + "/" + std::to_string(j), "a norm (>= 0)",
                                    std::to_string(m(i, j)));
}

Matrix read_layer_matrix(const JsonSource& source, const std::string& key, long rows, long cols, const std::string& meaning) {
  Matrix m = read_matrix(*source.find(key), source.file, "/" + key, meaning);
  require_shape(m, rows, cols, source.file, "/" + key, meaning);
  return m;
}

void read_norms(const JsonSource& source, AttentionRecord& record) {
  const std::string& file = source.file;
  const long n_q = static_cast<long>(record.query_tokens.size()), n_k = static_cast<long>(record.key_tokens.size());
  for (const char* key : {"norms", "value_norms", "layer_norms"})
    if (!source.find(key)) throw InputError::missing_field(file, std::string("/") + key, "written with /norms (--measure norms)");
  const nlohmann::json& stack = *source.find("norms");
  if (!stack.is_array() || static_cast<long>(stack.size()) != record.num_heads)
    throw InputError::bad_value(file, "/norms", std::to_string(record.num_heads) + " heads of [query][key], as /weights",
                                describe_json(stack));
  const std::string per_head = std::to_string(n_q) + " query tokens x " + std::to_string(n_k) + " key tokens";
  for (std::size_t h = 0; h < stack.size(); ++h) {
    const std::string pointer = "/norms/" + std::to_string(h);
    record.norms.push_back(read_matrix(stack[h], file, pointer, per_head));
    require_shape(record.norms.back(), n_q, n_k, file, pointer, per_head);
    require_non_negative(record.norms.back(), file, pointer);
  }
  record.value_norms = read_layer_matrix(source, "value_norms", record.num_heads, n_k,
                                         std::to_string(record.num_heads) + " heads x " + std::to_string(n_k) + " key tokens");
  require_non_negative(record.value_norms, file, "/value_norms");
  record.layer_norms = read_layer_matrix(source, "layer_norms", n_q, n_k, per_head);
  require_non_negative(record.layer_norms, file, "/layer_norms");
}

// ALTI rows are contributions: >= 0, each row summing to 1 (or 0: a masked row).
void check_alti_rows(const AttentionRecord& record, const std::string& file, const std::string& pointer) {
  for (Eigen::Index i = 0; i < record.alti.rows(); ++i) {
    const double sum = record.alti.row(i).cast<double>().sum();
    const bool negative = record.alti.row(i).minCoeff() < 0;
    if (negative || (sum != 0.0 && std::fabs(sum - 1.0) > kRecordRowSumTolerance)) {
      char found[96];
      std::snprintf(found, sizeof found, "row sum %.7g%s", sum, negative ? " with a negative entry" : "");
      throw InputError::bad_value(file, pointer + "/" + std::to_string(i), "ALTI contributions (>= 0, row sum 1 within 1e-3)", found);
    }
  }
}

void read_alti(const JsonSource& source, AttentionRecord& record) {
  const long n_q = static_cast<long>(record.query_tokens.size()), n_k = static_cast<long>(record.key_tokens.size());
  record.alti = read_layer_matrix(source, "alti", n_q, n_k, std::to_string(n_q) + " query tokens x " + std::to_string(n_k) + " key tokens");
  check_alti_rows(record, source.file, "/alti");
}

}  // namespace

void read_measure_fields(const JsonSource& source, AttentionRecord& record) {
  if (source.find("norms") || source.find("value_norms") || source.find("layer_norms")) read_norms(source, record);
  if (source.find("alti")) read_alti(source, record);
}

void check_measure_values(const AttentionRecord& record, const std::string& file, const std::string& prefix) {
  for (std::size_t h = 0; h < record.norms.size(); ++h) require_non_negative(record.norms[h], file, prefix + "norms/" + std::to_string(h));
  if (record.value_norms.size() != 0) require_non_negative(record.value_norms, file, prefix + "value_norms");
  if (record.layer_norms.size() != 0) require_non_negative(record.layer_norms, file, prefix + "layer_norms");
  if (record.alti.size() != 0) check_alti_rows(record, file, prefix + "alti");
}

}  // namespace attnviz
