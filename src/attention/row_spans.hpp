// Where each row of a mask allows keys: the first and the last allowed key. A causal or
// sliding-window row allows exactly that span, so row-wise work (the softmax, the head
// statistics) can read only it: outside it every weight is exactly 0.
#pragma once

#include <utility>
#include <vector>

#include "core/types.hpp"

namespace attnviz {

/// Per query row i of a mask [n_q, n_k]: [first, last], the first and last allowed key (first >
/// last when the row allows none). `filled` says whether every row allows every key of its span
/// (true for no mask, causal and sliding-window masks; false for padding holes inside a span).
struct RowSpans {
  std::vector<std::pair<long, long>> spans;
  bool filled = true;
  /// The spans of `allowed`, or of n_q rows of all n_k keys when it is empty (all allowed).
  static RowSpans of(const MaskMatrix& allowed, long n_q, long n_k);
};

}  // namespace attnviz
