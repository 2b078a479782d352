// Builds the allowed-pairs mask of one attention call from the causal flag and the keys'
// padding; it does not decide which masks a run uses (cli/run does).
// Convention (Vaswani et al. 2017, §3.2.3): a masked pair gets logit -inf before the softmax.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// allowed(i, j) = 1 when query i may attend to key j: key j is a real token
/// (key_is_real[j] != 0, the Hugging Face attention_mask convention; empty = all real) and,
/// when `causal`, j <= i. Shape n_q × n_k. Requires key_is_real.size() in {0, n_k}.
MaskMatrix build_mask(long n_q, long n_k, bool causal, const std::vector<std::uint8_t>& key_is_real);

/// Indices of query rows whose every key is masked (their weights are all zero).
std::vector<long> fully_masked_rows(const MaskMatrix& allowed);

}  // namespace attnviz
