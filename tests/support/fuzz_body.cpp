#include "support/fuzz_body.hpp"

#include "cli/attention_job.hpp"
#include "cli/heatmap_job.hpp"
#include "core/error.hpp"
#include "io/input_schema.hpp"
#include "io/record_json.hpp"
#include "render/html_report.hpp"

namespace attnviz::test {

namespace {

// Small budgets: fuzz inputs are small, and a huge job must be refused, not attempted.
constexpr double kFuzzMemoryMiB = 256;
constexpr int kFuzzImagePx = 512;

void compute_and_draw(const std::string& path, const std::string& source) {
  Options options;
  options.sentence = path;
  options.source = source;
  options.max_memory_mib = kFuzzMemoryMiB;
  options.scores = true;
  options.outputs = true;
  options.max_size_px = kFuzzImagePx;
  options.output = "/nonexistent-attnviz-fuzz";  // never committed
  std::vector<std::string> warnings;
  const AttentionRecord record = compute_record(options, warnings);
  (void)record_to_json(record);
  (void)render_heatmaps(record, options, warnings, kFuzzMemoryMiB * 1024 * 1024);
}

void draw_record(const std::string& path) {
  const AttentionRecord record = read_record(path);
  Options options;
  options.max_size_px = kFuzzImagePx;
  options.output = "/nonexistent-attnviz-fuzz";
  options.formats = {"png", "svg"};  // issue 14: the SVG and HTML writers see every token too
  std::vector<std::string> warnings;
  (void)render_heatmaps(record, options, warnings, kFuzzMemoryMiB * 1024 * 1024);
  (void)html_report({"fuzz", {heatmap_report_view(record, options, "layer", kFuzzMemoryMiB * 1024 * 1024)}, false});
}

template <typename Step>
void expect_only_attnviz_errors(Step step) {
  try {
    step();
  } catch (const Error&) {
    // The documented outcome of bad input.
  }
}

}  // namespace

void exercise_input_file(const std::string& path) {
  expect_only_attnviz_errors([&] { compute_and_draw(path, ""); });
  expect_only_attnviz_errors([&] { compute_and_draw(path, path); });
  expect_only_attnviz_errors([&] { draw_record(path); });
}

}  // namespace attnviz::test
