#include "attention/mask.hpp"

#include <cassert>

namespace attnviz {

MaskMatrix build_mask(long n_q, long n_k, bool causal, const std::vector<std::uint8_t>& key_is_real) {
  assert(key_is_real.empty() || static_cast<long>(key_is_real.size()) == n_k);
  MaskMatrix allowed = MaskMatrix::Ones(n_q, n_k);
  for (long j = 0; j < n_k; ++j) {
    if (!key_is_real.empty() && key_is_real[j] == 0) allowed.col(j).setZero();
  }
  if (causal) {
    for (long i = 0; i < n_q; ++i) {
      for (long j = i + 1; j < n_k; ++j) allowed(i, j) = 0;
    }
  }
  return allowed;
}

std::vector<long> fully_masked_rows(const MaskMatrix& allowed) {
  std::vector<long> rows;
  for (long i = 0; i < allowed.rows(); ++i) {
    if ((allowed.row(i).array() == 0).all()) rows.push_back(i);
  }
  return rows;
}

}  // namespace attnviz
