#include "model/head_ablation.hpp"

#include <cassert>

namespace attnviz {

void zero_head_outputs(AttentionLayer& layer, const std::vector<int>& heads) {
  const long d_v = layer.d_v();
  if (layer.o_projection) {
    // A quantised W_O cannot lose rows: its input loses the heads' columns instead (the same
    // product, and what llama.cpp would compute with those z^h zeroed).
    layer.o_projection = [inner = layer.o_projection, heads, d_v](const Matrix& concat, int threads) {
      Matrix zeroed = concat;
      for (const int h : heads) zeroed.middleCols(h * d_v, d_v).setZero();
      return inner(zeroed, threads);
    };
  }
  if (layer.w_o.size() == 0) return;
  for (const int h : heads) {
    assert(h >= 0 && h < layer.num_heads && layer.w_o.rows() == layer.num_heads * d_v);
    layer.w_o.middleRows(h * d_v, d_v).setZero();
  }
}

}  // namespace attnviz
