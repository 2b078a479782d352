#include "attention/row_spans.hpp"

#include <cstdint>

namespace attnviz {

RowSpans RowSpans::of(const MaskMatrix& allowed, long n_q, long n_k) {
  RowSpans r;
  r.spans.reserve(static_cast<std::size_t>(n_q));
  if (allowed.size() == 0) {
    r.spans.assign(static_cast<std::size_t>(n_q), {0, n_k - 1});
    return r;
  }
  for (long i = 0; i < n_q; ++i) {
    const std::uint8_t* a = allowed.row(i).data();
    long first = 0, last = n_k - 1, count = 0;
    while (first < n_k && a[first] == 0) ++first;
    while (last >= first && a[last] == 0) --last;
    for (long j = first; j <= last; ++j) count += a[j] != 0 ? 1 : 0;
    if (count != last - first + 1) r.filled = false;
    r.spans.emplace_back(first, last);
  }
  return r;
}

}  // namespace attnviz
