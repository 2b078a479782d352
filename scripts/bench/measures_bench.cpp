// issue 20 speed: the compute of --measure norms (and alti) against the plain run's, in CPU time
// of this process (wall time on a shared machine says more about the neighbours than the code).
// Two cases: the stories260K forward pass over 500 tokens (every layer's blocks through the same
// measure step a model run uses), and one synthetic layer of 1024 tokens, d_model 512, 8 heads.
// Best of 7, one thread. Built and run by measures_bench.sh.
#include <time.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analysis/alti.hpp"
#include "analysis/attention_flow.hpp"
#include "analysis/measures.hpp"
#include "analysis/value_norms.hpp"
#include "attention/attention.hpp"
#include "attention/mask.hpp"
#include "attention/softmax.hpp"
#include "core/heap_reuse.hpp"
#include "model/decoder_model.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/gguf_decoder.hpp"

using namespace attnviz;

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double best_of(int runs, const std::function<void()>& work) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) {
    const double start = cpu_seconds();
    work();
    best = std::min(best, cpu_seconds() - start);
  }
  return best;
}

void model_case(const char* path) {
  const DecoderModel model = decoder_from_gguf(std::make_shared<const GgufFile>(path));
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 500; ++i) ids.push_back(1 + (i * 37) % 500);
  // "norms" as dump (layer_norms too), "norms pictures" as heatmaps (no layer_norms).
  const auto run = [&](const std::string& name) {
    const std::string measure = name.substr(0, name.find(' '));
    const BlockSink sink = [&](AttentionBlock&& block) {
      if (block.value_vectors.empty()) return;
      add_measure(measure, block.value_vectors, AltiInputs{&block.residual, block.b_o, std::nullopt}, block.record, name == "norms");
    };
    ForwardRequest request;
    request.token_ids = ids;
    request.tokens.assign(ids.size(), "t");
    request.sink = &sink;
    request.logits = false;
    request.wants = AttentionWants{false, false, measure != "weights"};
    model.forward(request);
  };
  // The cases take turns (each run of 7 rounds runs every case once), so that a neighbour's load
  // or a clock change that lasts a few hundred milliseconds falls on all of them alike.
  const std::vector<std::string> cases = {"weights", "norms pictures", "norms", "alti"};
  std::vector<double> best(cases.size(), 1e30);
  for (int r = 0; r < 7; ++r)
    for (std::size_t c = 0; c < cases.size(); ++c) best[c] = std::min(best[c], best_of(1, [&] { run(cases[c]); }));
  std::printf("stories260K forward pass, 500 tokens, 5 layers x 8 heads (d_k 8), CPU s:\n");
  std::printf("  weights %.4f\n", best[0]);
  for (std::size_t c = 1; c < cases.size(); ++c) std::printf("  %-14s %.4f  (%.2fx)\n", cases[c].c_str(), best[c], best[c] / best[0]);
}

void layer_case() {
  std::mt19937 rng(20);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  const auto random = [&](long rows, long cols) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
    return m;
  };
  AttentionLayer layer;
  layer.num_heads = layer.num_kv_heads = 8;
  layer.w_q = random(512, 512);
  layer.w_k = random(512, 512);
  layer.w_v = random(512, 512);
  layer.w_o = random(512, 512);
  const Matrix x = random(1024, 512) * 20.0f;
  const MaskMatrix all;
  const double plain = best_of(7, [&] { multi_head_attention(layer, x, x, all, {false, false, false}); });
  // dump: f^h(x_j) itself, for layer_norms; every picture: ‖f^h(x_j)‖ through W_O's Gram matrices.
  const double dump = best_of(7, [&] {
    const AttentionResult r = multi_head_attention(layer, x, x, all, {false, false, true});
    value_weighted_norms(r.weights, r.value_vectors);
  });
  const double pictures = best_of(7, [&] {
    AttentionRecord record;
    record.weights = multi_head_attention(layer, x, x, all, {false, false, false}).weights;
    add_head_norms(layer, x, record);
  });
  std::printf("one layer, 1024 tokens, d_model 512, 8 heads (d_k 64), CPU s:\n  weights %.4f\n", plain);
  std::printf("  norms (heatmaps: norms, value_norms)     %.4f  (%.2fx)\n", pictures, pictures / plain);
  std::printf("  norms (dump: norms, value_norms, layer_norms) %.4f  (%.2fx)\n", dump, dump / plain);
}

// Attention flow at its bound (kMaxFlowTokens) over `layers` causal layers of random weights.
void flow_case(int layers) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> uniform(0.0f, 4.0f);
  const long n = kMaxFlowTokens;
  const MaskMatrix causal = build_mask(n, n, true, {});
  AttentionFlow flow;
  for (int l = 0; l < layers; ++l) {
    Matrix scores(n, n);
    for (Eigen::Index i = 0; i < scores.size(); ++i) scores.data()[i] = uniform(rng);
    softmax_rows_in_place(scores, causal);
    flow.add_layer(scores, causal);
  }
  std::printf("attention flow, %ld tokens x %d layers: %.3f CPU s\n", n, layers, best_of(3, [&] { flow.flow(); }));
}

}  // namespace

int main(int argc, char** argv) {
  Eigen::setNbThreads(1);
  // As a model run with --measure norms|alti does (run_model); the plain runs take the same CPU
  // time with glibc's default thresholds (0.020 s against 0.019 s for stories260K).
  keep_freed_memory_in_heap();
  model_case(argc > 1 ? argv[1] : "data/stories260k/stories260K.gguf");
  layer_case();
  for (const int layers : {5, 12, 32}) flow_case(layers);
  return 0;
}
