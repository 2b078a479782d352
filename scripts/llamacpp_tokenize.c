// llama.cpp's own tokenizer on a GGUF's vocabulary alone (a vocab_only load, so vocabulary-only
// files work too): each line of a text file (escapes \n \t \\ decoded) tokenized with
// llama_tokenize(vocab, text, add_special, parse_special); one JSON array of ids per line on stdout.
// A test aid over the prebuilt libraries of npm @node-llama-cpp/linux-x64 3.21.1 (the ones the
// team's llamacpp-attention capture tool uses), never part of attnviz:
//   gcc -O1 -std=c11 -o llamacpp_tokenize scripts/llamacpp_tokenize.c -ldl
//   ./llamacpp_tokenize LIBDIR MODEL.gguf TEXTS.txt ADD_SPECIAL(0|1) PARSE_SPECIAL(0|1)
// scripts/special_tokens_reference.py runs it.
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef struct { _Alignas(8) unsigned char b[512]; } blob;
typedef int32_t tok;
static void quiet(int level, const char *text, void *user) { (void)level; (void)text; (void)user; }
static void *open_lib(const char *dir, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); exit(1); }
  return h;
}
int main(int argc, char **argv) {
  if (argc != 6) { fprintf(stderr, "usage: tok LIBDIR MODEL TEXTS add_special parse_special\n"); return 2; }
  open_lib(argv[1], "libggml-base.so");
  void *gg = open_lib(argv[1], "libggml.v0.4.0.so");
  void *l = open_lib(argv[1], "libllama.v0.4.0.so");
  blob (*defaults)(void) = dlsym(l, "llama_model_default_params");
  void *(*load)(const char *, blob) = dlsym(l, "llama_model_load_from_file");
  const void *(*get_vocab)(const void *) = dlsym(l, "llama_model_get_vocab");
  int32_t (*tokenize)(const void *, const char *, int32_t, tok *, int32_t, bool, bool) = dlsym(l, "llama_tokenize");
  void (*log_set)(void (*)(int, const char *, void *), void *) = dlsym(l, "llama_log_set");
  void (*backend_init)(void) = dlsym(l, "llama_backend_init");
  void (*load_all)(const char *) = dlsym(gg, "ggml_backend_load_all_from_path");
  if (!getenv("VERBOSE")) log_set(quiet, 0);
  backend_init();
  if (load_all) load_all(argv[1]);
  blob p = defaults();
  // llama_model_params of this build: vocab_only is the first bool after kv_overrides (byte 72; checked: a vocab-only GGUF loads)
  if (p.b[72] != 0 || p.b[74] != 1) { fprintf(stderr, "unexpected llama_model_params layout (%d %d)\n", p.b[72], p.b[74]); return 1; }
  p.b[72] = 1;
  void *model = load(argv[2], p);
  if (!model) { fprintf(stderr, "cannot load %s\n", argv[2]); return 1; }
  const void *vocab = get_vocab(model);
  FILE *f = fopen(argv[3], "r");
  char line[65536];
  bool add = atoi(argv[4]), parse = atoi(argv[5]);
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[--n] = 0;
    char text[65536]; size_t m = 0;
    for (size_t i = 0; i < n; i++) {
      if (line[i] == '\\' && i + 1 < n) {
        char c = line[++i];
        text[m++] = c == 'n' ? '\n' : c == 't' ? '\t' : c;
      } else text[m++] = line[i];
    }
    text[m] = 0;
    tok ids[16384];
    int32_t k = tokenize(vocab, text, (int32_t)m, ids, 16384, add, parse);
    if (k < 0) { fprintf(stderr, "tokenize failed\n"); return 1; }
    printf("[");
    for (int32_t i = 0; i < k; i++) printf(i ? ", %d" : "%d", ids[i]);
    printf("]\n");
  }
  return 0;
}
