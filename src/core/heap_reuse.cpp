#include "core/heap_reuse.hpp"

#include <cstdlib>  // defines __GLIBC__ (checked below) on glibc

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace attnviz {

void keep_freed_memory_in_heap() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit)
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace attnviz
