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

}  // namespace attnviz
