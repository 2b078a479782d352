// llamacpp_attention — llama.cpp's own per-layer, per-head attention weights for one prompt.
//
// Runs a GGUF model through llama.cpp (the prebuilt shared libraries of the npm package
// @node-llama-cpp/linux-x64, loaded with dlopen: no headers ship with it) and records, for every
// layer, the tensor llama.cpp names "kq_soft_max-<layer>": the post-softmax attention
// probabilities [head][query][key], exactly as llama.cpp computed them (after its masks, logit
// soft-capping, sliding windows and scales). It also records the last position's logits (or, for
// embedding models such as BERT, the last position's output embedding).
//
// How: llama_context_params.cb_eval is a scheduler callback that sees every graph node by name;
// flash attention is turned off (with it on, softmax is fused into one op and there is no
// kq_soft_max tensor) and the K/V cache is F32 (llama.cpp's default F16 cache rounds K and V).
//
// Usage: see README.md beside this file, or run with --help.
//
// Provenance: a copy of tools/llamacpp-attention/llamacpp_attention.c of this project's shared
// folder (the llama.cpp reference tool attnviz's tests are checked with), for benchmarks only,
// with one addition: --timing, which captures every layer's kq_soft_max through the same eval
// callback into memory but writes no JSON, and prints the seconds of llama.cpp's model load,
// context creation and prompt evaluation (one JSON line on stdout). llama.cpp itself comes from
// the prebuilt libraries of npm @node-llama-cpp/linux-x64 (MIT; LICENSE-node-llama-cpp-prebuilt-MIT.txt
// in tests/data/families/), loaded at run time: nothing of llama.cpp is compiled in.
// Built and run by scripts/bench/llama32_run.sh.
#define _GNU_SOURCE
#include <time.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DEFAULT_LIB_DIR
#define DEFAULT_LIB_DIR ""
#endif

// ---------------------------------------------------------------------------------------------
// The part of llama.h / ggml.h this tool needs, for the library build it targets.
// ---------------------------------------------------------------------------------------------

typedef int32_t llama_token;
typedef struct {
  int32_t n_tokens;
  llama_token *token;
  float *embd;
  int32_t *pos;
  int32_t *n_seq_id;
  int32_t **seq_id;
  int8_t *logits;
} llama_batch;

// llama_context_params and llama_model_params are passed by value; the library's structs are
// smaller than these blobs (152 bytes for the context parameters of the targeted build), so the
// library reads and writes only its own part. The offsets below were read from the library's own
// defaults and are checked again at run time (check_context_defaults).
typedef struct { _Alignas(8) unsigned char b[512]; } params_blob;
enum {
  CP_N_CTX = 0, CP_N_BATCH = 4, CP_N_UBATCH = 8, CP_N_SEQ_MAX = 12,
  CP_N_THREADS = 28, CP_N_THREADS_BATCH = 32,
  CP_POOLING_TYPE = 44, CP_FLASH_ATTN_TYPE = 52,
  CP_CB_EVAL = 88, CP_CB_EVAL_USER_DATA = 96, CP_TYPE_K = 104, CP_TYPE_V = 108,
  CP_EMBEDDINGS = 128, CP_OFFLOAD_KQV = 129, CP_SWA_FULL = 132, CP_KV_UNIFIED = 133,
};
enum { GGML_TYPE_F32 = 0, GGML_TYPE_F16 = 1 };
enum { LLAMA_POOLING_TYPE_NONE = 0 };
enum { LLAMA_FLASH_ATTN_TYPE_DISABLED = 0 };
// struct ggml_tensor: type (int32) at 0, ne[4] (int64) at 16, nb[4] (size_t) at 48.
enum { T_TYPE = 0, T_NE = 16, T_NB = 48 };

typedef bool (*eval_callback)(void *tensor, bool ask, void *user_data);

static struct {
  void (*backend_init)(void);
  void (*log_set)(void (*)(int, const char *, void *), void *);
  params_blob (*model_default_params)(void);
  void *(*model_load)(const char *, params_blob);
  void (*model_free)(void *);
  params_blob (*context_default_params)(void);
  void *(*init_from_model)(void *, params_blob);
  void (*free_ctx)(void *);
  const void *(*model_get_vocab)(const void *);
  int32_t (*meta_val_str)(const void *, const char *, char *, size_t);
  int32_t (*n_layer)(const void *), (*n_head)(const void *), (*n_head_kv)(const void *);
  int32_t (*n_embd)(const void *), (*n_ctx_train)(const void *), (*n_swa)(const void *);
  int32_t (*n_vocab)(const void *);
  int32_t (*tokenize)(const void *, const char *, int32_t, llama_token *, int32_t, bool, bool);
  int32_t (*token_to_piece)(const void *, llama_token, char *, int32_t, int32_t, bool);
  llama_batch (*batch_get_one)(llama_token *, int32_t);
  int32_t (*decode)(void *, llama_batch);
  int32_t (*encode)(void *, llama_batch);
  float *(*get_logits_ith)(void *, int32_t);
  float *(*get_embeddings_ith)(void *, int32_t);
  // ggml-base
  const char *(*tensor_name)(const void *);
  size_t (*nbytes)(const void *);
  void (*tensor_get)(const void *, void *, size_t, size_t);
  void (*ggml_log_set)(void (*)(int, const char *, void *), void *);
  // ggml
  void (*load_all_from_path)(const char *);
} L;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("llamacpp_attention: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void *need(void *lib, const char *libname, const char *sym) {
  void *p = dlsym(lib, sym);
  if (!p) die("%s has no symbol %s (not the library build this tool targets?)", libname, sym);
  return p;
}

static void *open_lib(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", dir, *dir ? "/" : "", name);
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) die("cannot load %s: %s (pass --lib-dir, the bins/linux-x64 folder of @node-llama-cpp/linux-x64)", path, dlerror());
  return h;
}

static int log_threshold = 3;  // ggml_log_level: 1 debug, 2 info, 3 warn, 4 error, 5 cont
static int last_level = 2;
static void log_cb(int level, const char *text, void *ud) {
  (void)ud;
  if (level != 5) last_level = level;
  if (last_level >= log_threshold) fputs(text, stderr);
}

static void load_libraries(const char *dir) {
  void *base = open_lib(dir, "libggml-base.so");
  void *ggml = open_lib(dir, "libggml.v0.4.0.so");
  void *llama = open_lib(dir, "libllama.v0.4.0.so");
#define LL(field, sym) *(void **)&L.field = need(llama, "libllama", sym)
  LL(backend_init, "llama_backend_init");
  LL(log_set, "llama_log_set");
  LL(model_default_params, "llama_model_default_params");
  LL(model_load, "llama_model_load_from_file");
  LL(model_free, "llama_model_free");
  LL(context_default_params, "llama_context_default_params");
  LL(init_from_model, "llama_init_from_model");
  LL(free_ctx, "llama_free");
  LL(model_get_vocab, "llama_model_get_vocab");
  LL(meta_val_str, "llama_model_meta_val_str");
  LL(n_layer, "llama_model_n_layer");
  LL(n_head, "llama_model_n_head");
  LL(n_head_kv, "llama_model_n_head_kv");
  LL(n_embd, "llama_model_n_embd");
  LL(n_ctx_train, "llama_model_n_ctx_train");
  LL(n_swa, "llama_model_n_swa");
  LL(n_vocab, "llama_vocab_n_tokens");
  LL(tokenize, "llama_tokenize");
  LL(token_to_piece, "llama_token_to_piece");
  LL(batch_get_one, "llama_batch_get_one");
  LL(decode, "llama_decode");
  LL(encode, "llama_encode");
  LL(get_logits_ith, "llama_get_logits_ith");
  LL(get_embeddings_ith, "llama_get_embeddings_ith");
#undef LL
  *(void **)&L.tensor_name = need(base, "libggml-base", "ggml_get_name");
  *(void **)&L.nbytes = need(base, "libggml-base", "ggml_nbytes");
  *(void **)&L.tensor_get = need(base, "libggml-base", "ggml_backend_tensor_get");
  *(void **)&L.ggml_log_set = need(base, "libggml-base", "ggml_log_set");
  *(void **)&L.load_all_from_path = need(ggml, "libggml", "ggml_backend_load_all_from_path");
}

// ---------------------------------------------------------------------------------------------
// Captured attention
// ---------------------------------------------------------------------------------------------

typedef struct {
  int seen;
  int64_t n_kv, n_rows, n_head, n_stream;
  float *w;  // [head][row][kv], contiguous copy
} layer_capture;

static layer_capture *layers;
static int n_layers_max;
static int twice_layer = -1;

// --tensor NAME: any other graph tensor named NAME or NAME-<layer>, kept as [ne3][ne2][ne1][ne0].
typedef struct {
  char name[128];
  int64_t ne[4];
  float *data;
} extra_tensor;
static const char *extra_names[32];
static int n_extra_names;
static extra_tensor *extras;
static int n_extras, cap_extras;

// NAME itself or NAME-<layer number>; not ggml's derived names such as "Qcur-0 (view)".
static bool wanted_extra(const char *name) {
  for (int i = 0; i < n_extra_names; i++) {
    size_t k = strlen(extra_names[i]);
    if (strncmp(name, extra_names[i], k) != 0) continue;
    if (name[k] == 0) return true;
    if (name[k] != '-' || !name[k + 1]) continue;
    const char *p = name + k + 1;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == 0) return true;
  }
  return false;
}

// A contiguous float copy of t (any strides) in ne order; NULL for a type other than F32.
static float *copy_f32(void *t, int64_t ne_out[4]) {
  const int32_t type = *(const int32_t *)((const char *)t + T_TYPE);
  const int64_t *ne = (const int64_t *)((const char *)t + T_NE);
  const size_t *nb = (const size_t *)((const char *)t + T_NB);
  memcpy(ne_out, ne, 4 * sizeof(int64_t));
  if (type != GGML_TYPE_F32) return NULL;
  size_t sz = L.nbytes(t);
  char *raw = malloc(sz);
  float *out = malloc(sizeof(float) * ne[0] * ne[1] * ne[2] * ne[3]);
  if (!raw || !out) die("out of memory");
  L.tensor_get(t, raw, 0, sz);
  for (int64_t i3 = 0; i3 < ne[3]; i3++)
    for (int64_t i2 = 0; i2 < ne[2]; i2++)
      for (int64_t i1 = 0; i1 < ne[1]; i1++)
        for (int64_t i0 = 0; i0 < ne[0]; i0++)
          out[((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0] =
              *(const float *)(raw + i3 * nb[3] + i2 * nb[2] + i1 * nb[1] + i0 * nb[0]);
  free(raw);
  return out;
}

static bool on_tensor(void *t, bool ask, void *ud) {
  (void)ud;
  const char *name = L.tensor_name(t);
  const bool is_kq = strncmp(name, "kq_soft_max-", 12) == 0;
  const bool is_extra = wanted_extra(name);
  if (ask) return is_kq || is_extra;
  if (is_extra) {
    if (n_extras == cap_extras) extras = realloc(extras, sizeof *extras * (cap_extras = cap_extras ? 2 * cap_extras : 16));
    extra_tensor *e = &extras[n_extras++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->data = copy_f32(t, e->ne);
  }
  if (!is_kq) return true;
  char *end;
  long il = strtol(name + 12, &end, 10);
  if (end == name + 12 || il < 0 || il >= n_layers_max) return true;
  layer_capture *c = &layers[il];
  if (c->seen) twice_layer = (int)il;
  int64_t ne[4];
  free(c->w);
  c->w = copy_f32(t, ne);
  if (!c->w) die("%s is not F32", name);
  c->seen = 1;
  c->n_kv = ne[0];
  c->n_rows = ne[1];
  c->n_head = ne[2];
  c->n_stream = ne[3];
  return true;
}

// ---------------------------------------------------------------------------------------------
// JSON output
// ---------------------------------------------------------------------------------------------

static void json_string(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    if (c == '"' || c == '\\') { fprintf(f, "\\%c", c); i++; continue; }
    if (c < 0x20 || c == 0x7f) { fprintf(f, "\\u%04x", c); i++; continue; }
    if (c < 0x80) { fputc(c, f); i++; continue; }
    int len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    bool ok = len > 0 && i + len <= n;
    for (int k = 1; ok && k < len; k++) ok = (u[i + k] & 0xc0) == 0x80;
    if (ok) { fwrite(u + i, 1, len, f); i += len; }
    else { fputs("\\ufffd", f); i++; }  // a piece that is not whole UTF-8 (a byte token)
  }
  fputc('"', f);
}

static void json_float(FILE *f, float v) {
  if (isfinite(v)) fprintf(f, "%.9g", v);
  else fputs("null", f);
}

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

static void usage(FILE *f) {
  fputs(
      "usage: llamacpp_attention --model FILE.gguf (--token-ids 1,2,3 | --text \"...\") -o OUT.json [options]\n"
      "\n"
      "Runs FILE.gguf through llama.cpp once on the prompt and writes, for every layer, llama.cpp's own\n"
      "post-softmax attention weights [head][query][key] (its graph tensor kq_soft_max-<layer>), plus the\n"
      "last position's logits (or output embedding for embedding models).\n"
      "\n"
      "  --model FILE        the GGUF file\n"
      "  --token-ids LIST    comma-separated token ids, used exactly as given (nothing added)\n"
      "  --text TEXT         a text, tokenized by llama.cpp (BOS/CLS/SEP added as the file says)\n"
      "  --no-special        with --text: add no BOS/EOS/CLS/SEP\n"
      "  --parse-special     with --text: read special-token text such as <s> as the special token\n"
      "  -o, --output FILE   the JSON to write\n"
      "  --timing            capture in memory, write nothing, print load/context/eval seconds\n"
      "  --embeddings        run as an embedding model (llama_encode, output embeddings): the default for\n"
      "                      bert-like files (bert, nomic-bert, jina-bert-*, modern-bert, neo-bert, eurobert,\n"
      "                      gemma-embedding, t5encoder)\n"
      "  --tensor NAME       also record graph tensors named NAME or NAME-<layer> (F32), in the order computed:\n"
      "                      e.g. attn_norm, Qcur, Kcur, kq (raw q.k before llama.cpp's scale, soft-capping,\n"
      "                      mask and softmax), ffn_out, l_out, result_norm; repeatable\n"
      "  --kv-f16            keep llama.cpp's default F16 K/V cache (default here: F32, exact)\n"
      "  --threads N         CPU threads (default 1)\n"
      "  --lib-dir DIR       folder of libllama.v0.4.0.so, libggml*.so (default: " DEFAULT_LIB_DIR
      ", or $LLAMACPP_LIB_DIR)\n"
      "  --verbose           show llama.cpp's own log\n",
      f);
}

static int parse_ids(const char *s, llama_token **out) {
  int cap = 64, n = 0;
  llama_token *v = malloc(sizeof *v * cap);
  while (*s) {
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || errno || x < 0 || x > INT32_MAX) die("--token-ids: \"%s\" is not a list of non-negative integers", s);
    if (n == cap) v = realloc(v, sizeof *v * (cap *= 2));
    v[n++] = (llama_token)x;
    s = end;
    while (*s == ' ') s++;
    if (*s == ',') s++;
    else if (*s) die("--token-ids: unexpected \"%s\"", s);
  }
  *out = v;
  return n;
}

static bool is_embedding_arch(const char *a) {
  static const char *names[] = {"bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "modern-bert",
                                "neo-bert", "eurobert", "gemma-embedding", "t5encoder", NULL};
  for (int i = 0; names[i]; i++)
    if (strcmp(a, names[i]) == 0) return true;
  return false;
}

static void check_context_defaults(const unsigned char *b) {
  int32_t i32[40];
  memcpy(i32, b, sizeof i32);
  void *cb;
  memcpy(&cb, b + CP_CB_EVAL, sizeof cb);
  const bool ok = i32[CP_N_THREADS / 4] > 0 && i32[CP_N_THREADS / 4] == i32[CP_N_THREADS_BATCH / 4] &&
                  i32[CP_FLASH_ATTN_TYPE / 4] == -1 && i32[CP_POOLING_TYPE / 4] == -1 && cb == NULL &&
                  i32[CP_TYPE_K / 4] == GGML_TYPE_F16 && i32[CP_TYPE_V / 4] == GGML_TYPE_F16 &&
                  b[CP_EMBEDDINGS] == 0 && b[CP_OFFLOAD_KQV] == 1 && b[CP_SWA_FULL] == 1 && b[CP_KV_UNIFIED] == 0;
  if (!ok)
    die("llama_context_default_params does not have the layout this tool was written for "
        "(@node-llama-cpp/linux-x64 3.21.1); re-derive the CP_* offsets for this library");
}

int main(int argc, char **argv) {
  const char *model_path = NULL, *ids_arg = NULL, *text = NULL, *out_path = NULL;
  const char *lib_dir = getenv("LLAMACPP_LIB_DIR");
  if (!lib_dir || !*lib_dir) lib_dir = DEFAULT_LIB_DIR;
  bool add_special = true, parse_special = false, kv_f16 = false, timing = false;
  int embeddings = -1, threads = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
#define ARG() (i + 1 < argc ? argv[++i] : (die("%s needs a value", a), (char *)0))
    if (!strcmp(a, "--model")) model_path = ARG();
    else if (!strcmp(a, "--token-ids")) ids_arg = ARG();
    else if (!strcmp(a, "--text")) text = ARG();
    else if (!strcmp(a, "-o") || !strcmp(a, "--output")) out_path = ARG();
    else if (!strcmp(a, "--no-special")) add_special = false;
    else if (!strcmp(a, "--parse-special")) parse_special = true;
    else if (!strcmp(a, "--embeddings")) embeddings = 1;
    else if (!strcmp(a, "--kv-f16")) kv_f16 = true;
    else if (!strcmp(a, "--timing")) timing = true;
    else if (!strcmp(a, "--tensor")) {
      if (n_extra_names == 32) die("at most 32 --tensor names");
      extra_names[n_extra_names++] = ARG();
    }
    else if (!strcmp(a, "--threads")) threads = atoi(ARG());
    else if (!strcmp(a, "--lib-dir")) lib_dir = ARG();
    else if (!strcmp(a, "--verbose")) log_threshold = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
    else { usage(stderr); die("unknown argument %s", a); }
#undef ARG
  }
  if (!model_path || (!out_path && !timing) || (!ids_arg == !text)) {
    usage(stderr);
    die("need --model, -o and exactly one of --token-ids and --text");
  }
  if (threads < 1) die("--threads must be >= 1");

  load_libraries(lib_dir);
  L.log_set(log_cb, NULL);
  L.ggml_log_set(log_cb, NULL);
  L.backend_init();
  L.load_all_from_path(lib_dir);

  struct timespec t_start, t_loaded, t_context, t_evaluated;
  clock_gettime(CLOCK_MONOTONIC, &t_start);
  void *model = L.model_load(model_path, L.model_default_params());
  clock_gettime(CLOCK_MONOTONIC, &t_loaded);
  if (!model) die("llama.cpp could not load %s (run with --verbose for its log)", model_path);
  char arch[128] = "";
  L.meta_val_str(model, "general.architecture", arch, sizeof arch);
  const void *vocab = L.model_get_vocab(model);
  const int n_vocab = L.n_vocab(vocab);
  const int n_layer = L.n_layer(model);
  if (embeddings < 0) embeddings = is_embedding_arch(arch);

  llama_token *toks = NULL;
  int n = 0;
  if (ids_arg) {
    n = parse_ids(ids_arg, &toks);
  } else {
    int cap = (int)strlen(text) + 16;
    toks = malloc(sizeof *toks * cap);
    n = L.tokenize(vocab, text, (int32_t)strlen(text), toks, cap, add_special, parse_special);
    if (n < 0) die("tokenization failed");
  }
  if (n == 0) die("no tokens");
  for (int i = 0; i < n; i++)
    if (toks[i] >= n_vocab) die("token id %d is not below n_vocab %d", toks[i], n_vocab);

  params_blob cp = L.context_default_params();
  unsigned char *b = cp.b;
  check_context_defaults(b);
  const uint32_t n_ctx = ((uint32_t)n + 255) / 256 * 256;
  const uint32_t n_batch = n_ctx;
  memcpy(b + CP_N_CTX, &n_ctx, 4);
  memcpy(b + CP_N_BATCH, &n_batch, 4);
  memcpy(b + CP_N_UBATCH, &n_batch, 4);  // one ubatch: one kq_soft_max per layer
  int32_t v = threads;
  memcpy(b + CP_N_THREADS, &v, 4);
  memcpy(b + CP_N_THREADS_BATCH, &v, 4);
  v = LLAMA_FLASH_ATTN_TYPE_DISABLED;
  memcpy(b + CP_FLASH_ATTN_TYPE, &v, 4);
  if (!kv_f16) {
    v = GGML_TYPE_F32;
    memcpy(b + CP_TYPE_K, &v, 4);
    memcpy(b + CP_TYPE_V, &v, 4);
  }
  if (embeddings) {
    b[CP_EMBEDDINGS] = 1;
    v = LLAMA_POOLING_TYPE_NONE;
    memcpy(b + CP_POOLING_TYPE, &v, 4);
  }
  eval_callback cbf = on_tensor;
  memcpy(b + CP_CB_EVAL, &cbf, sizeof cbf);

  n_layers_max = n_layer;
  layers = calloc(n_layer, sizeof *layers);
  void *ctx = L.init_from_model(model, cp);
  if (!ctx) die("llama.cpp could not create a context (run with --verbose)");
  clock_gettime(CLOCK_MONOTONIC, &t_context);

  llama_batch batch = L.batch_get_one(toks, n);
  const int rc = embeddings ? L.encode(ctx, batch) : L.decode(ctx, batch);
  if (rc != 0) die("llama_%s returned %d", embeddings ? "encode" : "decode", rc);
  if (twice_layer >= 0) die("layer %d was computed twice (the batch was split)", twice_layer);
  clock_gettime(CLOCK_MONOTONIC, &t_evaluated);
  if (timing) {
    int seen = 0;
    for (int il = 0; il < n_layer; il++) seen += layers[il].seen ? 1 : 0;
    if (seen == 0) die("no kq_soft_max tensor was seen");
#define SECONDS(a, b) ((double)((b).tv_sec - (a).tv_sec) + 1e-9 * (double)((b).tv_nsec - (a).tv_nsec))
    printf("{\"load\": %.6f, \"context\": %.6f, \"eval\": %.6f, \"layers_captured\": %d, \"tokens\": %d, \"threads\": %d}\n",
           SECONDS(t_start, t_loaded), SECONDS(t_loaded, t_context), SECONDS(t_context, t_evaluated), seen, n, threads);
#undef SECONDS
    return 0;
  }

  const float *last = embeddings ? L.get_embeddings_ith(ctx, -1) : L.get_logits_ith(ctx, -1);
  const int n_last = embeddings ? L.n_embd(model) : n_vocab;

  FILE *f = fopen(out_path, "w");
  if (!f) die("cannot write %s: %s", out_path, strerror(errno));
  fputs("{\n  \"format\": \"llamacpp.attention\",\n  \"version\": 1,\n  \"model\": ", f);
  json_string(f, model_path, strlen(model_path));
  fputs(",\n  \"architecture\": ", f);
  json_string(f, arch, strlen(arch));
  fprintf(f,
          ",\n  \"library\": \"@node-llama-cpp/linux-x64 3.21.1 (libllama.v0.4.0.so), CPU\",\n"
          "  \"settings\": {\"flash_attn\": false, \"kv_cache_type\": \"%s\", \"n_ctx\": %u, \"n_ubatch\": %u, "
          "\"threads\": %d, \"mode\": \"%s\"},\n",
          kv_f16 ? "f16" : "f32", n_ctx, n_batch, threads, embeddings ? "encode (embeddings)" : "decode");
  fprintf(f, "  \"n_layer\": %d, \"n_head\": %d, \"n_head_kv\": %d, \"n_embd\": %d, \"n_vocab\": %d, \"n_ctx_train\": %d, \"n_swa\": %d,\n",
          n_layer, L.n_head(model), L.n_head_kv(model), L.n_embd(model), n_vocab, L.n_ctx_train(model), L.n_swa(model));
  fputs("  \"token_ids\": [", f);
  for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? ", " : "", toks[i]);
  fputs("],\n  \"tokens\": [", f);
  for (int i = 0; i < n; i++) {
    char piece[256];
    int m = L.token_to_piece(vocab, toks[i], piece, sizeof piece, 0, true);
    if (m < 0) m = 0;
    fputs(i ? ", " : "", f);
    json_string(f, piece, (size_t)m);
  }
  fputs("],\n", f);
  if (text) {
    fputs("  \"text\": ", f);
    json_string(f, text, strlen(text));
    fputs(",\n", f);
  }

  // Checks: each of the first n rows sums to 1 over all KV cells, and no weight falls on a cell
  // beyond the n prompt tokens (cells 0..n-1 hold positions 0..n-1 in a fresh cache).
  double max_row_err = 0, max_outside = 0;
  int captured = 0;
  for (int il = 0; il < n_layer; il++) {
    layer_capture *c = &layers[il];
    if (!c->seen) continue;
    captured++;
    if (c->n_stream != 1) die("layer %d: %lld streams, expected 1", il, (long long)c->n_stream);
    if (c->n_rows < n || c->n_kv < n) die("layer %d: kq_soft_max is %lld x %lld, fewer than %d tokens", il, (long long)c->n_rows, (long long)c->n_kv, n);
    for (int64_t h = 0; h < c->n_head; h++)
      for (int i = 0; i < n; i++) {
        const float *row = c->w + (h * c->n_rows + i) * c->n_kv;
        double s = 0, out = 0;
        for (int64_t j = 0; j < c->n_kv; j++) {
          s += row[j];
          if (j >= n) out += fabs(row[j]);
        }
        if (fabs(s - 1) > max_row_err) max_row_err = fabs(s - 1);
        if (out > max_outside) max_outside = out;
      }
  }
  fprintf(f, "  \"layers_captured\": %d,\n  \"max_row_sum_error\": %.3g,\n  \"max_weight_outside_prompt\": %.3g,\n", captured,
          max_row_err, max_outside);
  fputs("  \"layout\": \"attention[layer][head][query][key]: llama.cpp's kq_soft_max-<layer>, post-softmax, first n_tokens rows and KV cells\",\n", f);
  fputs("  \"attention\": [", f);
  for (int il = 0; il < n_layer; il++) {
    layer_capture *c = &layers[il];
    fputs(il ? ",\n    [" : "\n    [", f);
    if (c->seen)
      for (int64_t h = 0; h < c->n_head; h++) {
        fputs(h ? ",\n     [" : "\n     [", f);
        for (int i = 0; i < n; i++) {
          const float *row = c->w + (h * c->n_rows + i) * c->n_kv;
          fputs(i ? ",\n      [" : "\n      [", f);
          for (int j = 0; j < n; j++) {
            if (j) fputc(',', f);
            json_float(f, row[j]);
          }
          fputc(']', f);
        }
        fputc(']', f);
      }
    fputc(']', f);
  }
  fputs("\n  ],\n", f);
  if (n_extra_names) {
    // a list, not an object: llama.cpp gives one name to several nodes (Qcur before and after RoPE)
    fputs("  \"tensors\": [", f);
    for (int i = 0; i < n_extras; i++) {
      extra_tensor *e = &extras[i];
      fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
      json_string(f, e->name, strlen(e->name));
      fprintf(f, ", \"ne\": [%lld, %lld, %lld, %lld], \"data\": ", (long long)e->ne[0], (long long)e->ne[1],
              (long long)e->ne[2], (long long)e->ne[3]);
      if (!e->data) fputs("null", f);
      else {
        fputc('[', f);
        const int64_t count = e->ne[0] * e->ne[1] * e->ne[2] * e->ne[3];
        for (int64_t j = 0; j < count; j++) {
          if (j) fputc(',', f);
          json_float(f, e->data[j]);
        }
        fputc(']', f);
      }
      fputc('}', f);
    }
    fputs("\n  ],\n", f);
  }
  fprintf(f, "  \"%s\": [", embeddings ? "last_embedding" : "last_logits");
  if (last)
    for (int i = 0; i < n_last; i++) {
      if (i) fputc(',', f);
      json_float(f, last[i]);
    }
  fputs("]\n}\n", f);
  if (fclose(f) != 0) die("cannot write %s", out_path);

  fprintf(stderr, "llamacpp_attention: %s (%s): %d tokens, %d/%d layers captured, max |row sum - 1| %.2g, weight outside the prompt %.2g -> %s\n",
          model_path, arch, n, captured, n_layer, max_row_err, max_outside, out_path);
  if (captured == 0) die("no kq_soft_max tensor was seen: this architecture's attention is not a plain softmax in llama.cpp");
  L.free_ctx(ctx);
  L.model_free(model);
  return 0;
}
