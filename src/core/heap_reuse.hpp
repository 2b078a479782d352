// Keeping freed memory in the process's heap (glibc) so that per-layer buffers are reused rather
// than faulted in afresh. Process-wide; for runs that allocate and free the same large blocks
// layer after layer (--measure norms|alti, attribute's reruns, a census).
#pragma once

namespace attnviz {

/// Raises glibc's mmap threshold to its largest (32 MiB) and its trim threshold to 512 MiB, so
/// that blocks freed by one layer (value vectors, f^h(x_j), float64 temporaries) serve the next
/// instead of going back to the kernel and being page-faulted in again (scripts/bench/RESULTS.md,
/// "Value-weighted norms": 45% of the CPU of stories260K's norms at 500 tokens). The peak memory
/// does not grow: only memory already freed is kept. No effect without glibc.
void keep_freed_memory_in_heap();

}  // namespace attnviz
