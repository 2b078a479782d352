// model/model_session without the CLI (issue 25: a second front end needs the library work a
// decoder run does): loading a folder with its tokenizer, the input ids and their checks.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "model/model_session.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::TempDir;
using attnviz::test::test_data_file;

namespace {
// stories260K's folder (512 token embeddings) in `dir` with a byte-level tokenizer.json of "a" 0, "b" 1 and BOS "<s>" 2.
std::string folder_with_tokenizer(const TempDir& dir) {
  const std::string source = test_data_file("stories260k/hf-safetensors");
  for (const char* name : {"model.safetensors", "config.json"}) std::filesystem::copy_file(source + "/" + name, dir.file(name));
  std::ofstream(dir.file("tokenizer.json")) << R"({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}, "added_tokens": [{"id": 2, "content": "<s>", "special": true, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false}],
    "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [2], "tokens": ["<s>"]}}}})";
  return dir.path().string();
}
}  // namespace
using Catch::Matchers::Contains;

TEST_CASE("model_session: a Hugging Face folder loads with its tokenizer and runs a text's ids, no Options", "[model][session]") {
  TempDir dir;
  DecoderInput input;
  input.model = folder_with_tokenizer(dir);
  input.text = "abba";
  const LoadedDecoder loaded = load_decoder_model(input);
  REQUIRE(loaded.model);
  REQUIRE(loaded.vocab);
  const std::vector<std::int32_t> ids = decoder_input_ids(input, loaded.vocab.get());
  CHECK(ids == std::vector<std::int32_t>{2, 0, 1, 1, 0});  // BOS from the template
  CHECK_NOTHROW(check_ids_in_model(input, loaded.vocab.get(), ids, loaded.model->config().n_vocab));
  CHECK(summary_of(loaded.model->config()).num_layers == loaded.model->config().num_layers);
  CHECK(decoder_forward_bytes(*loaded.model, 16.0) > decoder_forward_bytes(*loaded.model, 8.0));
  input.no_bos = true;
  CHECK(decoder_input_ids(input, loaded.vocab.get()) == std::vector<std::int32_t>{0, 1, 1, 0});
}

TEST_CASE("model_session: ids given that miss the model, or both inputs, are refused naming the option", "[model][session][errors]") {
  TempDir dir;
  DecoderInput input;
  input.model = folder_with_tokenizer(dir);
  input.token_ids = std::vector<int>{1, 600};
  const LoadedDecoder loaded = load_decoder_model(input);
  CHECK(!loaded.vocab);
  CHECK(loaded.names);  // the folder's token names label the ids
  const std::vector<std::int32_t> ids = decoder_input_ids(input, nullptr);
  CHECK_THROWS_WITH(check_ids_in_model(input, nullptr, ids, loaded.model->config().n_vocab),
                    "--token-ids: token id 600 is outside the vocabulary (0-511)");
  input.text = "a";
  CHECK_THROWS_WITH(decoder_input_ids(input, nullptr), Contains("give --text or --token-ids, not both"));
}
