#include "model/head_ablation.hpp"

#include <cassert>

namespace attnviz {

void zero_head_outputs(AttentionLayer& layer, const std::vector<int>& heads) {
  const long d_v = layer.d_v();
  for (const int h : heads) {
    assert(h >= 0 && h < layer.num_heads && layer.w_o.rows() == layer.num_heads * d_v);
    layer.w_o.middleRows(h * d_v, d_v).setZero();
  }
}

}  // namespace attnviz
