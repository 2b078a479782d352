// tokenizer.json (Hugging Face) read into a Vocabulary: GPT-2's vocabulary written as a
// tokenizer.json from the GGUF copy gives the 46 reference strings' ids, and other kinds are
// refused by name.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "model/gguf_file.hpp"
#include "model/hf_tokenizer.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::realdata_file;
using attnviz::test::TempDir;
using Catch::Matchers::Contains;

namespace {

// GPT-2's tokenizer.json as Hugging Face ships it, rebuilt from the GGUF's pieces and merges.
nlohmann::json gpt2_tokenizer_json() {
  const GgufFile file(realdata_file("vocab-gguf/ggml-vocab-gpt-2.gguf"));
  nlohmann::json vocab = nlohmann::json::object();
  const auto& pieces = *file.string_array("tokenizer.ggml.tokens");
  for (std::size_t id = 0; id < pieces.size(); ++id) vocab[pieces[id]] = id;
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", *file.string_array("tokenizer.ggml.merges")}}},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"added_tokens", nlohmann::json::array({{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}})},
          {"post_processor", {{"type", "ByteLevel"}}}};
}

std::vector<std::string> test_strings() {
  std::ifstream in(realdata_file("vocab-gguf/ggml-vocab-gpt-2.gguf.inp"), std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string content = bytes.str();
  const std::string marker = "\n__ggml_vocab_test__\n";
  std::vector<std::string> strings;
  for (std::size_t at = content.find(marker); at != std::string::npos; at = content.find(marker)) {
    strings.push_back(content.substr(0, at));
    content.erase(0, at + marker.size());
  }
  return strings;
}

std::vector<std::vector<std::int32_t>> reference_ids() {
  std::ifstream in(realdata_file("vocab-gguf/ggml-vocab-gpt-2.gguf.out"));
  std::vector<std::vector<std::int32_t>> all;
  for (std::string line; std::getline(in, line);) {
    std::istringstream numbers(line);
    std::vector<std::int32_t> ids;
    for (std::int32_t id = 0; numbers >> id;) ids.push_back(id);
    all.push_back(ids);
  }
  return all;
}

std::string write(const TempDir& dir, const nlohmann::json& tokenizer) {
  const std::string path = dir.file("tokenizer.json");
  std::ofstream(path) << tokenizer.dump();
  return path;
}

}  // namespace

TEST_CASE("tokenizer.json: GPT-2's byte-level BPE gives Hugging Face's ids for the 46 reference strings", "[tokenizer]") {
  TempDir dir;
  const Vocabulary vocab = vocabulary_from_tokenizer_json(write(dir, gpt2_tokenizer_json()));
  CHECK(vocab.model == "gpt2");
  CHECK(vocab.pre == "gpt-2");
  CHECK(vocab.size() == 50257);
  CHECK(!vocab.add_bos);
  const auto strings = test_strings();
  const auto expected = reference_ids();
  REQUIRE(strings.size() == 46);
  std::size_t matches = 0;
  for (std::size_t i = 0; i < strings.size(); ++i) matches += tokenize(vocab, strings[i], true) == expected[i];
  CHECK(matches == 46);
}

TEST_CASE("tokenizer.json: other kinds are refused, naming what the file holds", "[tokenizer][errors]") {
  TempDir dir;
  nlohmann::json unigram = gpt2_tokenizer_json();
  unigram["model"]["type"] = "Unigram";
  CHECK_THROWS_WITH(vocabulary_from_tokenizer_json(write(dir, unigram)),
                    Contains("/model/type: expected \"BPE\" (byte-level BPE; pass --token-ids for other tokenizers), got \"Unigram\""));
  nlohmann::json metaspace = gpt2_tokenizer_json();
  metaspace["pre_tokenizer"] = {{"type", "Metaspace"}};
  CHECK_THROWS_WITH(vocabulary_from_tokenizer_json(write(dir, metaspace)),
                    Contains("/pre_tokenizer: only ByteLevel (GPT-2) and Split on LLaMA 3's or Qwen 2's pattern + ByteLevel are supported"));
  nlohmann::json templated = gpt2_tokenizer_json();
  templated["post_processor"] = {{"type", "TemplateProcessing"},
                                 {"single", {{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}},
                                             {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}};
  const Vocabulary with_bos = vocabulary_from_tokenizer_json(write(dir, templated));
  CHECK(with_bos.add_bos);
  CHECK(with_bos.bos == 50256);
  CHECK(tokenize(with_bos, "Hello", true) == std::vector<std::int32_t>{50256, 15496});
}

// Read by io/json_file: a syntax error names the file, line and column.
TEST_CASE("tokenizer.json: a file that is not JSON is refused naming the file, line and column", "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  std::ofstream(path) << "{\n  \"model\": {\"type\": \"BPE\"\n  \"vocab\": {}}\n}\n";
  CHECK_THROWS_WITH(vocabulary_from_tokenizer_json(path),
                    Contains(path + ": line 3, column 9: syntax error while parsing object - unexpected string literal"));
}

// Hugging Face tokenizer.json files commonly run from 2 to 20 MB: the reader sets no size limit.
TEST_CASE("tokenizer.json: a 20 MB file is read", "[tokenizer]") {
  TempDir dir;
  nlohmann::json tokenizer = gpt2_tokenizer_json();
  tokenizer["padding"] = std::string(20 * 1024 * 1024, 'x');  // a member the reader ignores
  const Vocabulary vocab = vocabulary_from_tokenizer_json(write(dir, tokenizer));
  CHECK(vocab.size() == 50257);
}
