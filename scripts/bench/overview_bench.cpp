// The overview of a synthetic 32-layer × 32-head model at 2048 tokens (issue 13, "Done when"):
// blocks are handed to the same OverviewCollector a model run feeds, one layer at a time and
// let go, then overview.png is drawn under the default memory budget; the rollout (--rollout)
// is fed the same blocks. Prints the image size,
// the PNG bytes, the time of each phase and the peak RSS. Built and run by overview_bench.sh.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "cli/attention_job.hpp"
#include "render/overview_collector.hpp"
#include "render/rollout_collector.hpp"

using namespace attnviz;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Causal rows of one synthetic head: a first-token sink, a previous-token habit and the rest
// spread evenly over the keys the row may see (values vary with the head so maps differ).
Matrix synthetic_head(int n, int layer, int head) {
  const double sink = 0.05 + 0.3 * ((head * 7 + layer) % 8) / 8.0;
  const double previous = 0.05 + 0.5 * ((head * 3 + layer * 5) % 8) / 8.0;
  Matrix w = Matrix::Zero(n, n);
  w(0, 0) = 1;
  for (int i = 1; i < n; ++i) {
    const double rest = (1 - sink - previous) / (i + 1);
    w.row(i).head(i + 1).setConstant(static_cast<Scalar>(rest));
    w(i, 0) += static_cast<Scalar>(sink);
    w(i, i - 1) += static_cast<Scalar>(previous);
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  const int layers = argc > 1 ? std::stoi(argv[1]) : 32;
  const int heads = argc > 2 ? std::stoi(argv[2]) : 32;
  const int n = argc > 3 ? std::stoi(argv[3]) : 2048;
  const std::string output = argc > 4 ? argv[4] : "overview_32x32x2048.png";
  Options options;
  options.max_size_px = 4096;
  const double budget = memory_budget_bytes(options);
  OverviewCollector overview(options);
  options.rollout = true;
  RolloutCollector rollout(options, false);
  Tokens tokens;
  for (int i = 0; i < n; ++i) tokens.push_back("t" + std::to_string(i));
  double make_s = 0, collect_s = 0, rollout_s = 0;
  for (int l = 0; l < layers; ++l) {
    auto start = std::chrono::steady_clock::now();
    AttentionBlock block;
    block.layer = l;
    block.record.layer = l;
    block.record.causal = true;
    block.record.query_tokens = block.record.key_tokens = tokens;
    block.record.num_heads = heads;
    for (int h = 0; h < heads; ++h) block.record.weights.push_back(synthetic_head(n, l, h));
    make_s += seconds_since(start);
    start = std::chrono::steady_clock::now();
    overview.add(block);
    collect_s += seconds_since(start);
    start = std::chrono::steady_clock::now();
    rollout.add(block);
    rollout_s += seconds_since(start);
  }
  ModelRunInfo info;
  info.model.name = "synthetic";
  info.text = "2048 synthetic tokens";
  std::vector<std::string> warnings;
  const auto start = std::chrono::steady_clock::now();
  const std::string png = overview.render_png(info, budget, warnings);
  const double render_s = seconds_since(start);
  const auto rollout_start = std::chrono::steady_clock::now();
  const std::string rollout_png = rollout.render_png(info, budget, warnings);
  const double rollout_render_s = seconds_since(rollout_start);
  std::ofstream(output, std::ios::binary) << png;
  // The PNG header holds the width and height as big-endian 32-bit numbers at bytes 16 and 20.
  const auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(png[at + 3]));
  };
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("overview %d layers x %d heads x %d tokens: %u x %u px, PNG %.1f KiB\n", layers, heads, n, be32(16),
              be32(20), png.size() / 1024.0);
  std::printf("make_weights_s %.2f\ncollect_s %.2f\nrender_encode_s %.2f\nrollout_s %.2f\nrollout_render_encode_s %.2f\n"
              "rollout_png_kib %.1f\npeak_rss_mib %.0f\nbudget_mib %.0f\n",
              make_s, collect_s, render_s, rollout_s, rollout_render_s, rollout_png.size() / 1024.0,
              usage.ru_maxrss / 1024.0, budget / (1024.0 * 1024.0));
  std::printf("one_layer_weights_mib %.0f\n", 4.0 * heads * n * static_cast<double>(n) / (1024.0 * 1024.0));
  for (const std::string& w : warnings) std::printf("warning: %s\n", w.c_str());
  return 0;
}
