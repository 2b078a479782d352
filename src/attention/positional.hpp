// Sinusoidal position encoding of Vaswani et al. 2017, §3.5, added to embeddings before the
// projections. Does not decide whether a run uses it (cli/ does).
#pragma once

#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// PE(p, 2i) = sin(p / 10000^(2i/d_model)), PE(p, 2i+1) = cos(p / 10000^(2i/d_model)),
/// for each row's position p (§3.5). Returns [n, d_model] for n = positions.size();
/// an odd d_model's last column is a sine.
Matrix sinusoidal_encoding(const std::vector<long long>& positions, long d_model);

/// The same idea in the layout of tensor2tensor's get_timing_signal_1d, which OpenNMT and
/// CTranslate2 use (CTranslate2 layers/common.cc, SinusoidalPositionEncoder): with
/// h = d_model / 2 and inv(j) = exp(-j · ln(10000) / (h - 1)), columns 0…h-1 are sin(p · inv(j))
/// and columns h…2h-1 are cos(p · inv(j)) (sines first, then cosines; note h - 1, not h).
/// CTranslate2 feeds positions 1, 2, … (its table starts at 1). Returns [n, d_model];
/// Requires: d_model even and at least 4.
Matrix sinusoidal_encoding_halves(const std::vector<long long>& positions, long d_model);

}  // namespace attnviz
