// ggml's own f16 and bf16 matrix products, for tests/data/quant-blocks/ggml-half-products.json:
// loads llama.cpp's prebuilt CPU libraries (npm @node-llama-cpp/linux-x64, as
// scripts/ggml_block_reference.c does) with dlopen, builds ggml_mul_mat(W, X) for W [m, k] in f16
// or bf16 (normal values × 0.1, converted by ggml_fp32_to_fp16 / ggml_fp32_to_bf16) and X [n, k]
// float32 normals, computes it on one thread with ggml_graph_compute_with_ctx and writes W (hex
// of the 16-bit values), X and Y (float32 bits) as JSON. The cases cover both kernels llama.cpp
// picks: tinyBLAS (n ≥ 2, k a multiple of 16 for f16, 32 for bf16) and ggml_vec_dot_f16/bf16.
// Build and run (gcc; ggml_reference_common.h beside it is the only header needed):
//   gcc -O2 -o /tmp/ggml_half_reference scripts/ggml_half_reference.c -ldl -lm
//   /tmp/ggml_half_reference LIBDIR zen4 > tests/data/quant-blocks/ggml-half-products.json
#include "ggml_reference_common.h"
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ggml_init_params {
  size_t mem_size;
  void* mem_buffer;
  bool no_alloc;
};
typedef void* (*init_t)(struct ggml_init_params);
typedef void (*free_t)(void*);
typedef void* (*new_2d_t)(void*, int, int64_t, int64_t);
typedef void* (*mul_mat_t)(void*, void*, void*);
typedef void* (*new_graph_t)(void*);
typedef void (*expand_t)(void*, void*);
typedef int (*compute_t)(void*, void*, int);
typedef void* (*get_data_t)(void*);
typedef uint16_t (*to_half_t)(float);


int main(int argc, char** argv) {
  void *base, *cpu;
  open_ggml(argc, argv, &base, &cpu);
  init_t init = (init_t)need(base, "ggml_init");
  free_t release = (free_t)need(base, "ggml_free");
  new_2d_t new_2d = (new_2d_t)need(base, "ggml_new_tensor_2d");
  mul_mat_t mul_mat = (mul_mat_t)need(base, "ggml_mul_mat");
  new_graph_t new_graph = (new_graph_t)need(base, "ggml_new_graph");
  expand_t expand = (expand_t)need(base, "ggml_build_forward_expand");
  get_data_t get_data = (get_data_t)need(base, "ggml_get_data");
  compute_t compute = (compute_t)need(cpu, "ggml_graph_compute_with_ctx");
  to_half_t to_f16 = (to_half_t)need(base, "ggml_fp32_to_fp16");
  to_half_t to_bf16 = (to_half_t)need(base, "ggml_fp32_to_bf16");

  // {ggml type (1 f16, 30 bf16), n, k, m}
  const int cases[][4] = {{1, 24, 64, 8}, {1, 24, 172, 8}, {1, 1, 256, 8}, {1, 3, 80, 8},
                          {30, 24, 64, 8}, {30, 24, 80, 8}, {30, 1, 256, 8}, {30, 2, 192, 8}};
  const int n_cases = (int)(sizeof cases / sizeof cases[0]);
  printf("{\"source\": \"ggml_mul_mat of llama.cpp's prebuilt libggml-cpu-%s (scripts/ggml_half_reference.c)\",\n \"cases\": [\n", argv[2]);
  for (int c = 0; c < n_cases; ++c) {
    const int type = cases[c][0], n = cases[c][1], k = cases[c][2], m = cases[c][3];
    struct ggml_init_params params = {64 * 1024 * 1024, NULL, false};
    void* ctx = init(params);
    void* w = new_2d(ctx, type, k, m);
    void* x = new_2d(ctx, 0, k, n);
    uint16_t* wd = (uint16_t*)get_data(w);
    float* xd = (float*)get_data(x);
    for (int i = 0; i < m * k; ++i) wd[i] = (type == 1 ? to_f16 : to_bf16)(normal() * 0.1f);
    for (int i = 0; i < n * k; ++i) xd[i] = normal();
    void* y = mul_mat(ctx, w, x);
    void* graph = new_graph(ctx);
    expand(graph, y);
    compute(ctx, graph, 1);
    printf("  {\"type\": \"%s\", \"n\": %d, \"k\": %d, \"m\": %d, \"w\": \"", type == 1 ? "f16" : "bf16", n, k, m);
    for (int i = 0; i < m * k; ++i) printf("%04x", wd[i]);
    printf("\", \"x\": ");
    print_floats(xd, n * k);
    printf(", \"y\": ");
    print_floats((const float*)get_data(y), n * m);
    printf("}%s\n", c + 1 < n_cases ? "," : "");
    release(ctx);
  }
  printf(" ]\n}\n");
  return 0;
}
