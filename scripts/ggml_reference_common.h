// What scripts/ggml_block_reference.c and scripts/ggml_half_reference.c share: symbols looked up in
// llama.cpp's prebuilt libraries, reproducible normal values, and JSON output of raw bytes and
// float32 bits. Header-only: each program is built by one gcc command (see its header).
#ifndef ATTNVIZ_GGML_REFERENCE_COMMON_H
#define ATTNVIZ_GGML_REFERENCE_COMMON_H

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void* need(void* lib, const char* name) {
  void* f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "missing symbol %s\n", name);
    exit(1);
  }
  return f;
}

// Opens llama.cpp's libggml-base.so and libggml-cpu-<variant>.so from the command line
// (LIBDIR CPU_VARIANT), exiting with a message on a wrong command line or a library that will not load.
static inline void open_ggml(int argc, char** argv, void** base, void** cpu) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s LIBDIR CPU_VARIANT\n", argv[0]);
    exit(2);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/libggml-base.so", argv[1]);
  *base = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  snprintf(path, sizeof path, "%s/libggml-cpu-%s.so", argv[1], argv[2]);
  *cpu = *base ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
  if (!*base || !*cpu) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(1);
  }
}

// xorshift + Box-Muller: reproducible normals without libc's rand.
static uint64_t state = 88172645463325252ull;
static inline double uniform(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return ((state >> 11) + 0.5) / 9007199254740992.0;
}
static inline float normal(void) { return (float)(sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform())); }

// Bytes as one JSON string of hex digits.
static inline void print_hex(const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  putchar('"');
  for (size_t i = 0; i < n; ++i) printf("%02x", p[i]);
  putchar('"');
}

// Floats as a JSON array of their IEEE-754 bits (exact, unlike decimal).
static inline void print_floats(const float* v, int n) {
  putchar('[');
  for (int i = 0; i < n; ++i) {
    uint32_t bits;
    memcpy(&bits, &v[i], 4);
    printf("%s%u", i ? "," : "", bits);
  }
  putchar(']');
}

#endif
