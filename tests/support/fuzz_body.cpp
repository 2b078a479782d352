#include "support/fuzz_body.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "census/census_journal.hpp"
#include "census/corpus_census.hpp"
#include "cli/attention_job.hpp"
#include "cli/heatmap_job.hpp"
#include "core/error.hpp"
#include "model/gguf_decoder.hpp"
#include "model/gguf_encoder.hpp"
#include "model/tokenizers/hf_tokenizer.hpp"
#include "model/tokenizers/vocabulary.hpp"
#include "records/input_schema.hpp"
#include "records/record_json.hpp"
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
  std::vector<std::string> warnings;
  const AttentionRecord record = read_record(path, 0, warnings);
  Options options;
  options.max_size_px = kFuzzImagePx;
  options.output = "/nonexistent-attnviz-fuzz";
  options.formats = {"png", "svg"};  // issue 14: the SVG and HTML writers see every token too
  (void)render_heatmaps(record, options, warnings, kFuzzMemoryMiB * 1024 * 1024);
  (void)html_report({"fuzz", {heatmap_report_view(record, options, "layer", kFuzzMemoryMiB * 1024 * 1024)}, false});
}

// The GGUF reader, the tokenizer and (for small models) the forward pass on a mutated file.
void run_gguf(const std::string& path) {
  auto file = std::make_shared<const GgufFile>(path);
  for (const GgufTensorInfo& tensor : file->tensors())
    if (ggml_type_supported(tensor.type) && tensor.num_elements() <= (1 << 16)) (void)file->matrix(tensor);
  if (file->has("tokenizer.ggml.tokens")) {
    const Vocabulary vocab = vocabulary_from_gguf(*file);
    const std::vector<std::int32_t> ids = tokenize(vocab, "Once upon a time, \xE7\x8C\xAB 12", true, true);
    (void)decode(vocab, ids);
  }
  if (is_gguf_encoder(*file)) {  // issue 25: bert
    const EncoderModel encoder = encoder_from_gguf(file);
    if (encoder.layer_float_bytes() > kFuzzMemoryMiB * 1024 * 1024 / 4) return;
    EncoderRequest request;
    request.token_ids = {0, static_cast<std::int32_t>(encoder.config().n_vocab - 1)};
    encoder.forward(request);
    return;
  }
  const DecoderModel model = decoder_from_gguf(file);
  if (model.layer_float_bytes() > kFuzzMemoryMiB * 1024 * 1024 / 4) return;
  ForwardRequest request;
  request.token_ids = {0, static_cast<std::int32_t>(model.config().n_vocab - 1)};
  (void)model.forward(request);
}

// The tokenizer.json reader and its tokenizers (issue 25: SentencePiece-style BPE, WordPiece) on
// a mutated file.
void run_tokenizer_json(const std::string& path) {
  const Vocabulary vocab = vocabulary_from_tokenizer_json(path);
  const std::vector<std::int32_t> ids = tokenize(vocab, "Once upon <s>[CLS] a time,\n \xE7\x8C\xAB caf\xC3\xA9 12", true, true);
  (void)decode(vocab, ids);
}

// census --merge's reader and checks (census.json), and --resume's journal reader, on a mutated file.
void read_census_files(const std::string& path) {
  const CorpusCensus census = CorpusCensus::from_json(path);
  (void)census.to_json();
  (void)census.to_csv();
}

// The journal's own header stands for the run resuming it, so that the fuzzer reaches the text
// lines behind it (a header of another run is refused at once).
void read_census_journal(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  in.close();
  const nlohmann::ordered_json header = nlohmann::ordered_json::parse(first, nullptr, false);
  CensusProvenance provenance{"0.1.0", "{}", "{}", "{}"};
  std::string shard;
  if (header.is_object() && header.contains("model") && header.contains("corpus") && header.contains("settings") &&
      header.value("attnviz_version", nlohmann::ordered_json()).is_string() && header.value("shard", nlohmann::ordered_json()).is_string()) {
    provenance = {header["attnviz_version"].get<std::string>(), header["model"].dump(), header["corpus"].dump(), header["settings"].dump()};
    shard = header["shard"].get<std::string>();
  }
  // read_journal cuts a half-written last line off the file itself: it reads a copy, so that
  // replaying tests/ inputs never changes them.
  const std::string copy = std::filesystem::temp_directory_path().string() + "/attnviz-fuzz-journal-" + std::to_string(getpid()) + ".jsonl";
  // Streams, not std::filesystem::copy_file: its copy_file_range/sendfile gives up on EINTR, and
  // libFuzzer's -timeout interrupts system calls every second (a harness crash, not attnviz's).
  {
    std::ifstream from(path, std::ios::binary);
    std::ofstream to(copy, std::ios::binary | std::ios::trunc);
    to << from.rdbuf();
  }
  try {
    (void)read_journal(copy, provenance, shard);
  } catch (...) {
    std::filesystem::remove(copy);
    throw;
  }
  std::filesystem::remove(copy);
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
  expect_only_attnviz_errors([&] { run_gguf(path); });
  expect_only_attnviz_errors([&] { run_tokenizer_json(path); });
  expect_only_attnviz_errors([&] { read_census_files(path); });
  expect_only_attnviz_errors([&] { read_census_journal(path); });
}

}  // namespace attnviz::test
