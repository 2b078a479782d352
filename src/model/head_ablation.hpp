// Zero-ablation of attention heads (issue 20 §3): head h's output z^h = Σ_j α_ij v^h_j set to 0
// before W_O at every position, as Michel et al. (NeurIPS 2019, "Are Sixteen Heads Really
// Better than One?") mask heads and TransformerLens's hook_z ablations do. The block's b_O
// stays: with every head of a layer zeroed, its attention update is b_O alone.
#pragma once

#include <vector>

#include "attention/attention.hpp"

namespace attnviz {

/// Which heads of which layer to zero (ForwardRequest::ablation).
struct HeadAblation {
  int layer = 0;
  std::vector<int> heads;  ///< query heads, from 0
};

/// Zeroes the rows [h·d_v, (h+1)·d_v) of layer.w_o for each h in `heads`: concat·W_O then
/// equals the concat with z^h = 0 times the untouched W_O. With an o_projection (a quantised
/// W_O) those columns of the concat are zeroed before it instead. Requires every h in
/// [0, num_heads).
void zero_head_outputs(AttentionLayer& layer, const std::vector<int>& heads);

}  // namespace attnviz
