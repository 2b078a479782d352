// ggml's own block products, for tests/data/quant-blocks/: loads llama.cpp's prebuilt CPU
// libraries (npm @node-llama-cpp/linux-x64, the ones the shared llamacpp-attention tool uses) with
// dlopen and, for rows of every weight type attnviz multiplies quantized, writes as JSON:
//   * the weight row as ggml_quantize_chunk makes it (bytes, hex),
//   * the activation rows (float32 bits, in "x", one per case) and ggml's quantisation of it to the type's vec_dot_type
//     (quantize_row_q8_0 / q8_1 / q8_K of the CPU backend: bytes, hex),
//   * for cases 0 and 5, ggml's dequantize_row_<type> of the weights (float32 bytes, hex),
//   * the float ggml_vec_dot_<type>_<vec_dot_type> gives (the SIMD kernel llama.cpp runs here) and
//     the one the *_generic scalar kernel gives (float32 bits).
// Build and run (gcc; ggml_reference_common.h beside it is the only header needed):
//   gcc -O2 -o /tmp/ggml_block_reference scripts/ggml_block_reference.c -ldl
//   /tmp/ggml_block_reference LIBDIR CPU_VARIANT > tests/data/quant-blocks/ggml-blocks.json
// LIBDIR: .../node-llama-cpp-linux-x64-3.21.1/package/bins/linux-x64; CPU_VARIANT: the
// libggml-cpu-*.so llama.cpp loads on this machine (its log says which: zen4 here).
#include "ggml_reference_common.h"
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*quantize_row_t)(const float*, void*, int64_t);
typedef void (*vec_dot_t)(int, float*, size_t, const void*, size_t, const void*, size_t, int);
typedef size_t (*quantize_chunk_t)(int, const float*, void*, int64_t, int64_t, int64_t, const float*);
typedef void (*void_fn_t)(void);
typedef void (*to_float_t)(const void*, float*, int64_t);


enum { N = 512 };

// The weight floats of case `c` (ggml quantizes them), and the activations.
static void weights_of(int c, float* w) {
  for (int j = 0; j < N; ++j) {
    switch (c) {
      case 0: case 1: case 2: case 3: w[j] = normal() * 0.05f; break;
      case 4: w[j] = 0.25f; break;                                   // all equal
      case 5: w[j] = (j % 2 ? -1.0f : 1.0f) * 60000.0f; break;       // ±max (fp16 range)
      case 6: w[j] = 0.0f; break;                                    // zero scale
      default: w[j] = (j % 7 == 0) ? 3.0f : normal() * 0.01f; break; // outliers
    }
  }
}
static void activations_of(int c, float* x) {
  for (int j = 0; j < N; ++j) {
    switch (c) {
      case 0: case 1: case 4: case 5: case 6: x[j] = normal(); break;
      case 2: x[j] = 1.5f; break;                                    // all equal
      case 3: x[j] = (j % 2 ? -1.0f : 1.0f) * 3.0e4f; break;         // ±max
      case 7: x[j] = (float)((j % 256) - 128); break;                // exact halves after scaling (ties)
      default: x[j] = 0.0f; break;                                   // zero scale
    }
  }
}
enum { kCases = 9 };

struct Type {
  const char* name;
  int id;
  int block, bytes;
  const char* act;  // vec_dot_type
  int act_block, act_bytes;
};

int main(int argc, char** argv) {
  void *base, *cpu;
  open_ggml(argc, argv, &base, &cpu);
  ((void_fn_t)need(cpu, "ggml_cpu_init"))();
  const quantize_chunk_t quantize_chunk = (quantize_chunk_t)need(base, "ggml_quantize_chunk");

  static const struct Type types[] = {
      {"q4_0", 2, 32, 18, "q8_0", 32, 34},     {"q4_1", 3, 32, 20, "q8_1", 32, 36},
      {"q5_0", 6, 32, 22, "q8_0", 32, 34},     {"q5_1", 7, 32, 24, "q8_1", 32, 36},
      {"q8_0", 8, 32, 34, "q8_0", 32, 34},     {"q2_K", 10, 256, 84, "q8_K", 256, 292},
      {"q3_K", 11, 256, 110, "q8_K", 256, 292}, {"q4_K", 12, 256, 144, "q8_K", 256, 292},
      {"q5_K", 13, 256, 176, "q8_K", 256, 292}, {"q6_K", 14, 256, 210, "q8_K", 256, 292},
      {"iq4_nl", 20, 32, 18, "q8_0", 32, 34},  {"iq4_xs", 23, 256, 136, "q8_K", 256, 292},
  };
  // Each case's activations (the same for every type) and, per type, its weights: seeded per case.
  static float xs[kCases][N], ws[kCases][N];
  for (int c = 0; c < kCases; ++c) {
    state = 88172645463325252ull + 7919ull * (uint64_t)c;
    activations_of(c, xs[c]);
    weights_of(c, ws[c]);
  }
  printf("{\"source\": \"ggml of npm @node-llama-cpp/linux-x64 3.21.1, libggml-cpu-%s.so\", \"n\": %d,\n\"x\": [", argv[2], N);
  for (int c = 0; c < kCases; ++c) {
    if (c) printf(",\n");
    print_floats(xs[c], N);
  }
  printf("],\n\"cases\": [\n");
  int first = 1;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
    const struct Type* ty = &types[t];
    char name[128];
    snprintf(name, sizeof name, "quantize_row_%s", ty->act);
    const quantize_row_t quantize = (quantize_row_t)need(cpu, name);
    snprintf(name, sizeof name, "ggml_vec_dot_%s_%s", ty->name, ty->act);
    const vec_dot_t dot = (vec_dot_t)need(cpu, name);
    snprintf(name, sizeof name, "ggml_vec_dot_%s_%s_generic", ty->name, ty->act);
    const vec_dot_t dot_generic = (vec_dot_t)need(cpu, name);
    snprintf(name, sizeof name, "dequantize_row_%s", ty->name);
    const to_float_t to_float = (to_float_t)need(base, name);
    for (int c = 0; c < kCases; ++c) {
      const float* w = ws[c];
      const float* x = xs[c];
      unsigned char wq[N / 32 * 64], xq[N / 32 * 300];
      // Zeroed first: for an all-zero block quantize_row_q8_K sets d and qs but leaves bsums as
      // they were (they are multiplied by d = 0).
      memset(xq, 0, sizeof xq);
      quantize_chunk(ty->id, w, wq, 0, 1, N, NULL);
      quantize(x, xq, N);
      float s = 0, s_generic = 0;
      dot(N, &s, 0, wq, 0, xq, 0, 1);
      dot_generic(N, &s_generic, 0, wq, 0, xq, 0, 1);
      printf("%s{\"type\": \"%s\", \"case\": %d, \"weights\": ", first ? "" : ",\n", ty->name, c);
      print_hex(wq, (size_t)(N / ty->block * ty->bytes));
      printf(", \"x_blocks\": ");
      print_hex(xq, (size_t)(N / ty->act_block * ty->act_bytes));
      uint32_t b1, b2;
      memcpy(&b1, &s, 4);
      memcpy(&b2, &s_generic, 4);
      printf(", \"dot\": %u, \"dot_generic\": %u", b1, b2);
      if (c == 0 || c == 5) {  // ggml's decoding of the weights (float32 bits, hex, little-endian)
        float decoded[N];
        to_float(wq, decoded, N);
        printf(", \"decoded\": ");
        print_hex(decoded, sizeof decoded);
      }
      putchar('}');
      first = 0;
    }
  }
  printf("\n]}\n");
  return 0;
}
