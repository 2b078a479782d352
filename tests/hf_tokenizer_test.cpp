// tokenizer.json (Hugging Face) read into a Vocabulary: GPT-2's vocabulary written as a
// tokenizer.json from the GGUF copy gives the 46 reference strings' ids, and other kinds are
// refused by name.
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/tokenizers/hf_tokenizer.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using attnviz::test::test_data_file;
using attnviz::test::TempDir;
using Catch::Matchers::Contains;

namespace {

// GPT-2's tokenizer.json as Hugging Face ships it, rebuilt from the GGUF's pieces and merges.
nlohmann::json gpt2_tokenizer_json() {
  const GgufFile file(test_data_file("vocab-gguf/ggml-vocab-gpt-2.gguf"));
  nlohmann::json vocab = nlohmann::json::object();
  const auto& pieces = *file.string_array("tokenizer.ggml.tokens");
  for (std::size_t id = 0; id < pieces.size(); ++id) vocab[pieces[id]] = id;
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", *file.string_array("tokenizer.ggml.merges")}}},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
          {"added_tokens", nlohmann::json::array({{{"id", 50256}, {"content", "<|endoftext|>"}, {"single_word", false}, {"lstrip", false},
                                                   {"rstrip", false}, {"normalized", false}, {"special", true}}})},
          {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}}}};
}

// `base` (GPT-2's tokenizer.json) with the member at JSON pointer `pointer` set to `value`.
nlohmann::json with(const std::string& pointer, nlohmann::json value, nlohmann::json base = gpt2_tokenizer_json()) {
  base[nlohmann::json::json_pointer(pointer)] = std::move(value);
  return base;
}

std::vector<std::string> test_strings() {
  std::ifstream in(test_data_file("vocab-gguf/ggml-vocab-gpt-2.gguf.inp"), std::ios::binary);
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
  std::ifstream in(test_data_file("vocab-gguf/ggml-vocab-gpt-2.gguf.out"));
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
  for (std::size_t i = 0; i < strings.size(); ++i) matches += tokenize(vocab, strings[i], true, true) == expected[i];
  CHECK(matches == 46);
}

TEST_CASE("tokenizer.json: other kinds are refused, naming what the file holds", "[tokenizer][errors]") {
  TempDir dir;
  nlohmann::json unigram = gpt2_tokenizer_json();
  unigram["model"]["type"] = "Unigram";
  CHECK_THROWS_WITH(vocabulary_from_tokenizer_json(write(dir, unigram)),
                    Contains("/model/type: expected \"BPE\" or \"WordPiece\" (pass --token-ids for other tokenizers), got \"Unigram\""));
  nlohmann::json digits = gpt2_tokenizer_json();
  digits["pre_tokenizer"] = {{"type", "Digits"}};
  CHECK_THROWS_WITH(vocabulary_from_tokenizer_json(write(dir, digits)),
                    Contains("/pre_tokenizer: only ByteLevel (GPT-2) and Split on LLaMA 3's or Qwen 2's pattern + ByteLevel are supported"));
  nlohmann::json metaspace = gpt2_tokenizer_json();
  metaspace["pre_tokenizer"] = {{"type", "Sequence"},
                                {"pretokenizers", {{{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}}, {{"type", "Digits"}}}}};
  CHECK_THROWS_WITH(vocabulary_from_tokenizer_json(write(dir, metaspace)),
                    Contains(": pre-tokenizer \"Digits\" (/pre_tokenizer/pretokenizers/1) is not supported (supported: Metaspace, "
                             "BertPreTokenizer, a Sequence of them); pass --token-ids"));
  nlohmann::json templated = gpt2_tokenizer_json();
  templated["post_processor"] = {{"type", "TemplateProcessing"},
                                 {"single", {{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}},
                                             {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
                                 {"pair", nlohmann::json::array()},
                                 {"special_tokens", nlohmann::json::object()}};
  const Vocabulary with_bos = vocabulary_from_tokenizer_json(write(dir, templated));
  CHECK(with_bos.add_bos);
  CHECK(with_bos.bos == 50256);
  CHECK(tokenize(with_bos, "Hello", true, true) == std::vector<std::int32_t>{50256, 15496});
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
  tokenizer["comment"] = std::string(20 * 1024 * 1024, 'x');  // a member the reader ignores
  const Vocabulary vocab = vocabulary_from_tokenizer_json(write(dir, tokenizer));
  CHECK(vocab.size() == 50257);
}

namespace {

std::string load_error(const TempDir& dir, const nlohmann::json& tokenizer) {
  try {
    vocabulary_from_tokenizer_json(write(dir, tokenizer));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// GPT-2's tokenizer.json with `pre_tokenizer` replaced by a Split on `regex` + ByteLevel, as
// LLaMA 3's and Qwen 2's files write it, and `ignore_merges` set.
nlohmann::json split_tokenizer_json(const std::string& regex, bool ignore_merges) {
  nlohmann::json t = gpt2_tokenizer_json();
  t["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
                          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
  t["model"]["ignore_merges"] = ignore_merges;
  t["model"]["byte_fallback"] = false;
  return t;
}

const std::string kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const std::string kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

}  // namespace

// Found by a hostile tester: these gave "internal error: [json.exception.type_error.302]" (exit 3).
TEST_CASE("tokenizer.json: a member of the wrong type is refused naming the file, the member and the value", "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  using json = nlohmann::json;
  const json numbered_bos = {{"type", "TemplateProcessing"},
                             {"single", {{{"SpecialToken", {{"id", 5}}}}, {{"Sequence", {{"id", "A"}}}}}},
                             {"pair", json::array()},
                             {"special_tokens", json::object()}};
  const std::vector<std::pair<json, std::string>> cases = {
      {with("/model/type", 5), "/model/type: expected a string, got the integer 5"},
      {with("/pre_tokenizer/type", 5), "/pre_tokenizer/type: expected a string, got the integer 5"},
      {with("/pre_tokenizer/type", nullptr), "/pre_tokenizer/type: expected a string, got null"},
      {with("/pre_tokenizer/use_regex", "yes"), "/pre_tokenizer/use_regex: expected true or false, got a string \"yes\""},
      {with("/pre_tokenizer", "ByteLevel"), "/pre_tokenizer: expected an object or null, got a string \"ByteLevel\""},
      {with("/added_tokens", json::array({{{"id", "x"}}})), "/added_tokens/0/id: expected an integer from 0 to 16777215, got a string \"x\""},
      {with("/added_tokens", json::array({{{"id", 1}, {"content", 7}}})), "/added_tokens/0/content: expected a string, got the integer 7"},
      {with("/added_tokens", json::array({{{"content", "<x>"}}})), "/added_tokens/0/id: missing field (the token's id)"},
      {with("/added_tokens", json::array({5})), "/added_tokens/0: expected an object {\"id\", \"content\", …}, got the integer 5"},
      {with("/added_tokens", "x"), "/added_tokens: expected a list of tokens, got a string \"x\""},
      {with("/added_tokens/0/special", "yes"), "/added_tokens/0/special: expected true or false, got a string \"yes\""},
      {with("/normalizer", "NFC"), "/normalizer: expected an object or null, got a string \"NFC\""},
      {with("/model/byte_fallback", "no"), "/model/byte_fallback: expected true or false, got a string \"no\""},
      {with("/model/dropout", "x"), "/model/dropout: expected a number, got a string \"x\""},
      {with("/model", 5), "/model: expected the tokenizer model (an object), got the integer 5"},
      {with("/post_processor", numbered_bos), "/post_processor/single/0/SpecialToken/id: expected a string, got the integer 5"},
      {json::array(), "/: expected a JSON object, got an array of 0 items"},
  };
  for (const auto& [tokenizer, message] : cases) {
    CAPTURE(message);
    CHECK_THAT(load_error(dir, tokenizer), Contains(path + ": " + message));
  }
}

// Issue 24 (the kind of llama.cpp #25739, a piece listed twice): /model/vocab is a JSON object,
// so its pieces are distinct, but two pieces could share an id and an added token could give a
// piece a second id or an id a second piece; the later silently replaced the earlier.
TEST_CASE("tokenizer.json: an id given two pieces, or a piece given two ids, is refused naming both places", "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  using json = nlohmann::json;
  json shared_id = gpt2_tokenizer_json();
  shared_id["model"]["vocab"]["\xC4\xA0the"] = 0;
  CHECK(load_error(dir, shared_id) ==
        path + ": /model/vocab/\xC4\xA0the: id 0 for \"\xC4\xA0the\", but /model/vocab/! gives id 0 to \"!\" (an id has one piece)");
  const auto with_added = [](json token) {
    json t = gpt2_tokenizer_json();
    token.update({{"single_word", false}, {"lstrip", false}, {"rstrip", false}, {"normalized", false}, {"special", false}});
    t["added_tokens"].push_back(token);
    return t;
  };
  CHECK(load_error(dir, with_added({{"id", 50257}, {"content", "!"}})) ==
        path + ": /added_tokens/1: \"!\" has id 50257, but /model/vocab/! gives it id 0 (a piece has one id)");
  CHECK(load_error(dir, with_added({{"id", 0}, {"content", "<x>"}})) ==
        path + ": /added_tokens/1: id 0 for \"<x>\", but /model/vocab/! gives id 0 to \"!\" (an id has one piece)");
  CHECK(load_error(dir, with_added({{"id", 50257}, {"content", "<|endoftext|>"}})) ==
        path + ": /added_tokens/1: \"<|endoftext|>\" has id 50257, but /added_tokens/0 gives it id 50256 (a piece has one id)");
  CHECK(load_error(dir, with_added({{"id", 50256}, {"content", "<|endoftext|>"}})) == "(no error)");
}

// Found by a hostile tester: these were accepted and tokenized as if absent, giving other ids
// than Hugging Face's. Each names the feature and says to pass --token-ids.
TEST_CASE("tokenizer.json: features the byte-level BPE does not implement are refused, naming them", "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  using json = nlohmann::json;
  const json template_single = {{"type", "TemplateProcessing"},
                                {"single", {{{"Sequence", {{"id", "A"}}}}, {{"SpecialToken", {{"id", "<|endoftext|>"}}}}}},
                                {"pair", json::array()},
                                {"special_tokens", json::object()}};
  const std::vector<std::pair<json, std::string>> cases = {
      {with("/normalizer", {{"type", "Lowercase"}}), "normalizer \"Lowercase\" (/normalizer) is not supported (supported: none, NFC)"},
      {with("/normalizer", {{"type", "NFKC"}}), "normalizer \"NFKC\" (/normalizer) is not supported (supported: none, NFC)"},
      {with("/pre_tokenizer/add_prefix_space", true),
       "/pre_tokenizer/add_prefix_space true (a space put before the text) is not supported (supported: false)"},
      {with("/pre_tokenizer/pretokenizers/1/add_prefix_space", true, split_tokenizer_json(kLlama3Regex, true)),
       "/pre_tokenizer/pretokenizers/1/add_prefix_space true (a space put before the text) is not supported (supported: false)"},
      {with("/pre_tokenizer/pretokenizers/0/invert", true, split_tokenizer_json(kLlama3Regex, true)),
       "/pre_tokenizer/pretokenizers/0/invert true (the pattern's matches dropped, the text between them kept) is not supported"},
      {with("/model/ignore_merges", true), "/model/ignore_merges true with this pre-tokenizer is not supported (supported: false)"},
      {with("/model/ignore_merges", true, split_tokenizer_json(kQwen2Regex, false)),
       "/model/ignore_merges true with this pre-tokenizer is not supported (supported: false)"},
      {with("/model/byte_fallback", true),
       "/model/byte_fallback true (<0xXX> tokens for bytes missing from the vocabulary) is not supported (supported: false)"},
      {with("/model/dropout", 0.1), "/model/dropout 0.1 (BPE dropout) is not supported (supported: null, 0)"},
      {with("/model/end_of_word_suffix", "</w>"), "/model/end_of_word_suffix \"</w>\" is not supported (supported: null, \"\")"},
      {with("/model/continuing_subword_prefix", "##"), "/model/continuing_subword_prefix \"##\" is not supported (supported: null, \"\")"},
      {with("/post_processor", {{"type", "RobertaProcessing"}}),
       "post-processor \"RobertaProcessing\" (/post_processor) is not supported (supported: ByteLevel, TemplateProcessing with at most one token before the text)"},
      {with("/post_processor", template_single), "the template /post_processor/single [{\"Sequence\":{\"id\":\"A\"}},{\"SpecialToken\":"},
  };
  for (const auto& [tokenizer, message] : cases) {
    CAPTURE(message);
    const std::string error = load_error(dir, tokenizer);
    CHECK_THAT(error, Contains(path + ": " + message));
    CHECK_THAT(error, Catch::EndsWith("; pass --token-ids"));
  }
  json unknown_bos = gpt2_tokenizer_json();
  unknown_bos["post_processor"] = {{"type", "TemplateProcessing"},
                                   {"single", {{{"SpecialToken", {{"id", "<s>"}}}}, {{"Sequence", {{"id", "A"}}}}}},
                                   {"pair", json::array()},
                                   {"special_tokens", json::object()}};
  CHECK_THAT(load_error(dir, unknown_bos),
             Contains(path + ": /post_processor/single/0/SpecialToken/id: expected a token of the vocabulary, got \"<s>\""));
}

// What GPT-2's, LLaMA 3's and Qwen 2's own tokenizer.json files hold: GPT-2's model has no
// "type" and empty affixes, its added token "normalized": true; LLaMA 3's sets ignore_merges
// (llama.cpp's llama3 pre-tokenizer); Qwen 2's normalizes to NFC.
TEST_CASE("tokenizer.json: the settings of GPT-2's, LLaMA 3's and Qwen 2's files are accepted", "[tokenizer]") {
  TempDir dir;
  using json = nlohmann::json;
  json gpt2 = gpt2_tokenizer_json();
  gpt2["model"].erase("type");
  gpt2["model"].update({{"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
                        {"end_of_word_suffix", ""}, {"fuse_unk", false}});
  gpt2["normalizer"] = nullptr;
  gpt2["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}};
  gpt2["post_processor"] = {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}};
  gpt2["added_tokens"][0].update({{"single_word", false}, {"lstrip", false}, {"rstrip", false}, {"normalized", true}});
  const Vocabulary gpt2_vocab = vocabulary_from_tokenizer_json(write(dir, gpt2));
  CHECK(gpt2_vocab.pre == "gpt-2");
  CHECK(tokenize(gpt2_vocab, "Hello world", true, true) == std::vector<std::int32_t>{15496, 995});

  json llama3 = split_tokenizer_json(kLlama3Regex, true);
  llama3["model"].update({{"dropout", nullptr}, {"continuing_subword_prefix", nullptr}, {"end_of_word_suffix", nullptr}});
  llama3["post_processor"] = {
      {"type", "Sequence"},
      {"processors",
       {{{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}},
        {{"type", "TemplateProcessing"},
         {"single", {{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
         {"pair", json::array()},
         {"special_tokens", json::object()}}}}};
  const Vocabulary llama3_vocab = vocabulary_from_tokenizer_json(write(dir, llama3));
  CHECK(llama3_vocab.pre == "llama3");
  CHECK(llama3_vocab.bos == 50256);
  CHECK(tokenize(llama3_vocab, "Hello world", true, true) == std::vector<std::int32_t>{50256, 15496, 995});
  // The same pattern merging every word is llama.cpp's smaug-bpe.
  CHECK(vocabulary_from_tokenizer_json(write(dir, split_tokenizer_json(kLlama3Regex, false))).pre == "smaug-bpe");

  json qwen2 = split_tokenizer_json(kQwen2Regex, false);
  qwen2["normalizer"] = {{"type", "NFC"}};
  const Vocabulary qwen2_vocab = vocabulary_from_tokenizer_json(write(dir, qwen2));
  CHECK(qwen2_vocab.pre == "qwen2");
  REQUIRE(qwen2_vocab.hf.normalizer.size() == 1);
  CHECK(qwen2_vocab.hf.normalizer[0].kind == HfNormalizerStep::Kind::Nfc);
  // "e" + U+0301 COMBINING ACUTE ACCENT is "é" (U+00E9) in NFC: the same ids.
  CHECK(tokenize(qwen2_vocab, "caf" "e\xCC\x81", false, true) == tokenize(qwen2_vocab, "caf\xC3\xA9", false, true));
  CHECK(tokenize(qwen2_vocab, "caf" "e\xCC\x81", false, true) != tokenize(gpt2_vocab, "caf" "e\xCC\x81", false, true));
}

// A tester found truncation, padding, fuse_unk, an unk_token missing from the vocabulary and
// unknown members all accepted silently. Truncation and padding that reaches one text change
// the ids: refused. The rest leaves byte-level BPE's ids alone or is not understood: warned.
TEST_CASE("tokenizer.json: truncation and one-text padding are refused, and fuse_unk, a missing unk_token and unknown members are warned about",
          "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  using json = nlohmann::json;
  const json truncation = {{"direction", "Right"}, {"max_length", 512}, {"strategy", "LongestFirst"}, {"stride", 0}};
  CHECK(load_error(dir, with("/truncation", truncation)) ==
        path + ": /truncation " + truncation.dump() + " (ids cut to a maximum length) is not supported (supported: null); pass --token-ids");
  const json fixed = {{"strategy", {{"Fixed", 128}}}, {"direction", "Right"}, {"pad_id", 0}, {"pad_token", "!"}};
  CHECK(load_error(dir, with("/padding", fixed)) ==
        path + ": /padding " + fixed.dump() + " (pad ids added to one text) is not supported (supported: null, " +
            "{\"strategy\": \"BatchLongest\"} without pad_to_multiple_of); pass --token-ids");
  const json multiple = {{"strategy", "BatchLongest"}, {"pad_to_multiple_of", 8}, {"pad_id", 0}};
  CHECK_THAT(load_error(dir, with("/padding", multiple)), Contains(path + ": /padding " + multiple.dump() + " (pad ids added to one text)"));
  const json longest = {{"strategy", "BatchLongest"}, {"pad_to_multiple_of", nullptr}, {"pad_id", 0}, {"pad_token", "!"}};
  const auto warnings = [&](const json& tokenizer) { return vocabulary_from_tokenizer_json(write(dir, tokenizer)).warnings; };
  CHECK(warnings(with("/padding", longest)).empty());
  CHECK(warnings(with("/truncation", nullptr)).empty());
  CHECK(warnings(gpt2_tokenizer_json()).empty());

  json unknown = with("/model/future_option", 1);
  unknown["pre_tokenizer"]["regex_flavour"] = "pcre";
  unknown["extras"] = json::object();
  CHECK(warnings(unknown) ==
        std::vector<std::string>{path + ": members attnviz does not know, ignored: /extras, /model/future_option, /pre_tokenizer/regex_flavour"});
  json split = split_tokenizer_json(kLlama3Regex, true);
  split["pre_tokenizer"]["pretokenizers"][0]["flags"] = "i";
  CHECK(warnings(split) == std::vector<std::string>{path + ": members attnviz does not know, ignored: /pre_tokenizer/pretokenizers/0/flags"});
  CHECK(warnings(with("/model/fuse_unk", true)) ==
        std::vector<std::string>{path + ": /model/fuse_unk true ignored (byte-level BPE has no unknown pieces to fuse)"});
  CHECK(warnings(with("/model/unk_token", "<unk>")) ==
        std::vector<std::string>{path + ": /model/unk_token \"<unk>\" is not in the vocabulary (Hugging Face would fail on a piece it lacks)"});
  CHECK(warnings(with("/model/unk_token", "<|endoftext|>")).empty());
}

// Issue 25: the SentencePiece-style BPE of Llama 2, Mistral, TinyLlama and Gemma and BERT's
// WordPiece, checked against Hugging Face's tokenizers library (npm 0.23.2, through
// scripts/hf_tokenizer_reference.js): every string of tests/data/tokenizers/NAME.expected.json,
// with and without the template's special tokens.
TEST_CASE("tokenizer.json: SentencePiece-style BPE and WordPiece give the tokenizers library's ids for tricky strings",
          "[tokenizer][golden]") {
  const std::string name = GENERATE(as<std::string>{}, "spm-llama2", "spm-metaspace", "spm-metaspace-split", "spm-gemma",
                                    "spm-unk-fused", "spm-unk-unfused", "wordpiece-uncased", "wordpiece-cased");
  CAPTURE(name);
  const Vocabulary vocab = vocabulary_from_tokenizer_json(test_data_file("tokenizers/" + name + ".tokenizer.json"));
  CHECK(vocab.model == (name.rfind("spm", 0) == 0 ? "hf-bpe" : "hf-wordpiece"));
  CHECK(vocab.warnings.empty());
  const nlohmann::json expected =
      nlohmann::json::parse(attnviz::test::read_file(test_data_file("tokenizers/" + name + ".expected.json")));
  std::size_t matches = 0, cases = 0;
  for (const nlohmann::json& c : expected["cases"]) {
    const std::string text = c["text"];
    CAPTURE(text);
    const std::vector<std::int32_t> with = c["ids"], without = c["ids_without_special"];
    CHECK(tokenize(vocab, text, true, true) == with);
    CHECK(tokenize(vocab, text, false, true) == without);
    matches += tokenize(vocab, text, true, true) == with;
    ++cases;
  }
  CHECK(matches == cases);
  CHECK(cases == 32);
}

// Issue 25: the tokenizers library splits every added token (special too) out of the text by
// default; attnviz read "<|endoftext|>" in a text as the 9 pieces of its characters.
TEST_CASE("tokenizer.json: a special token written in the text is its own id, as the tokenizers library gives it", "[tokenizer]") {
  TempDir dir;
  const Vocabulary vocab = vocabulary_from_tokenizer_json(write(dir, gpt2_tokenizer_json()));
  CHECK(tokenize(vocab, "Hello<|endoftext|>", false, true) == std::vector<std::int32_t>{15496, 50256});
  const Vocabulary llama2 = vocabulary_from_tokenizer_json(test_data_file("tokenizers/spm-llama2.tokenizer.json"));
  const std::vector<std::int32_t> ids = tokenize(llama2, "the<s>cat</s>", false, true);
  CHECK(std::count(ids.begin(), ids.end(), 1) == 1);
  CHECK(ids.back() == 2);
}

// Issue 25: what is still not implemented is refused naming the file and the member.
TEST_CASE("tokenizer.json: SentencePiece-style and WordPiece members the pipeline does not implement are refused, naming them",
          "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  using json = nlohmann::json;
  const json llama2 = json::parse(attnviz::test::read_file(test_data_file("tokenizers/spm-llama2.tokenizer.json")));
  const json bert = json::parse(attnviz::test::read_file(test_data_file("tokenizers/wordpiece-uncased.tokenizer.json")));
  const auto edit = [](json base, const std::string& pointer, json value) {
    base[json::json_pointer(pointer)] = std::move(value);
    return base;
  };
  const std::vector<std::pair<json, std::string>> cases = {
      {edit(llama2, "/normalizer/normalizers/1/pattern", {{"Regex", " +"}}),
       "a Regex pattern (/normalizer/normalizers/1/pattern/Regex) is not supported (supported: a String pattern); pass --token-ids"},
      {edit(llama2, "/normalizer/normalizers/0", {{"type", "Strip"}}),
       "normalizer \"Strip\" (/normalizer/normalizers/0) is not supported (supported: Prepend, Replace of a String, NFC, NFD, NFKC, "
       "NFKD, Lowercase, BertNormalizer, a Sequence of them); pass --token-ids"},
      {edit(llama2, "/post_processor", {{"type", "RobertaProcessing"}}),
       "post-processor \"RobertaProcessing\" (/post_processor) is not supported (supported: TemplateProcessing, BertProcessing, "
       "ByteLevel, a Sequence of them); pass --token-ids"},
      {edit(llama2, "/model/dropout", 0.1), "/model/dropout 0.1 (BPE dropout) is not supported (supported: null, 0); pass --token-ids"},
      {edit(llama2, "/model/merges/0", "\xE2\x96\x81 zz"), "/model/merges/0: \"zz\" is not in the vocabulary"},
      {edit(llama2, "/model/unk_token", "<nope>"), "/model/unk_token: expected a piece of the vocabulary, got \"<nope>\""},
      {edit(bert, "/pre_tokenizer", {{"type", "Whitespace"}}),
       "pre-tokenizer \"Whitespace\" (/pre_tokenizer) is not supported (supported: Metaspace, BertPreTokenizer, a Sequence of them)"},
      {edit(bert, "/post_processor/special_tokens/[CLS]/ids", "x"),
       "/post_processor/special_tokens/[CLS]/ids: expected the token's ids (a list), got a string \"x\""},
      {edit(bert, "/model/max_input_chars_per_word", -1), "/model/max_input_chars_per_word: expected an integer from 0 to 2147483647, got -1"},
  };
  for (const auto& [tokenizer, message] : cases) {
    CAPTURE(message);
    CHECK_THAT(load_error(dir, tokenizer), Contains(path + ": " + message));
  }
}

// Never silently drop what is not understood: members the pipeline does not know are named.
TEST_CASE("tokenizer.json: members of SentencePiece-style and WordPiece files attnviz does not know are named in a warning",
          "[tokenizer]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  nlohmann::json llama2 = nlohmann::json::parse(attnviz::test::read_file(test_data_file("tokenizers/spm-llama2.tokenizer.json")));
  CHECK(vocabulary_from_tokenizer_json(write(dir, llama2)).warnings.empty());
  llama2["normalizer"]["normalizers"][0]["mode"] = "x";
  llama2["model"]["future"] = true;
  llama2["added_tokens"][1]["weight"] = 2;
  CHECK(vocabulary_from_tokenizer_json(write(dir, llama2)).warnings ==
        std::vector<std::string>{path + ": members attnviz does not know, ignored: /model/future, /added_tokens/1/weight, "
                                        "/normalizer/normalizers/0/mode"});
}

namespace {

// Every case of tests/data/tokenizers/NAME.expected.json (ids from npm tokenizers) that `vocab`
// gives other ids for, with and without the template's special tokens; counts them in `cases`.
std::vector<std::string> library_mismatches(const Vocabulary& vocab, const nlohmann::json& expected_cases, std::size_t& cases) {
  std::vector<std::string> wrong;
  for (const nlohmann::json& c : expected_cases) {
    const std::string text = c["text"];
    const std::vector<std::int32_t> with = c["ids"], without = c["ids_without_special"];
    if (tokenize(vocab, text, true, true) != with || tokenize(vocab, text, false, true) != without) wrong.push_back(text);
    ++cases;
  }
  return wrong;
}

}  // namespace

// Issue 37: an added token with "normalized": true is matched in the normalized text, its
// content normalized the same way (a Lowercase normalizer's "AB" matches "ab" and "AB"; BERT's
// "Café" matches "cafe"; Llama 2's Prepend + Replace makes "the" match "▁the" only), after the
// raw tokens are split out of the raw text; single_word, lstrip and rstrip as added_vocabulary.rs
// has them. attnviz matched the raw content in the normalized text and refused the options.
// Ids from npm tokenizers 0.23.2 (scripts/hf_tokenizer_reference.js), 79 strings per kind.
TEST_CASE("tokenizer.json: added tokens, normalized or not, single_word, lstrip and rstrip, give the tokenizers library's ids",
          "[tokenizer][golden]") {
  const std::string name = GENERATE(as<std::string>{}, "added-lowercase", "added-bert", "added-llama2", "added-sequence",
                                    "added-nfkc", "added-bytelevel", "metaspace-first-added");
  CAPTURE(name);
  const Vocabulary vocab = vocabulary_from_tokenizer_json(test_data_file("tokenizers/" + name + ".tokenizer.json"));
  CHECK(vocab.warnings.empty());
  const nlohmann::json expected =
      nlohmann::json::parse(attnviz::test::read_file(test_data_file("tokenizers/" + name + ".expected.json")));
  std::size_t cases = 0;
  CHECK(library_mismatches(vocab, expected["cases"], cases) == std::vector<std::string>{});
  CHECK(cases > 70);
}

// --no-parse-special on a tokenizer.json: the special added tokens' text is read as plain text
// (the library's encode_special_tokens), the other added tokens still split out
// (scripts/hf_no_parse_special_reference.js: npm tokenizers with the special tokens left out).
TEST_CASE("tokenizer.json: without parse_special, special added tokens are text and the others still match", "[tokenizer][golden]") {
  const nlohmann::json expected =
      nlohmann::json::parse(attnviz::test::read_file(test_data_file("tokenizers/no-parse-special.expected.json")));
  std::size_t cases = 0, changed = 0;
  for (const nlohmann::json& file : expected["files"]) {
    const std::string name = file["file"];
    const Vocabulary vocab = vocabulary_from_tokenizer_json(test_data_file("tokenizers/" + name));
    for (const nlohmann::json& c : file["cases"]) {
      const std::string text = c["text"];
      CAPTURE(name, text);
      CHECK(tokenize(vocab, text, true, false) == c["ids"].get<std::vector<std::int32_t>>());
      CHECK(tokenize(vocab, text, false, false) == c["ids_without_special"].get<std::vector<std::int32_t>>());
      changed += tokenize(vocab, text, false, true) != tokenize(vocab, text, false, false);
      ++cases;
    }
  }
  CHECK(cases == 13);
  CHECK(changed == cases);  // every text holds a special token, which parse_special reads as one
}

// Two normalized added tokens that read the same after the normalizer: the library's split trie
// then gives either id, differently from one load to the next (seen with npm tokenizers 0.23.2).
TEST_CASE("tokenizer.json: two normalized added tokens that normalize alike are refused naming both", "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  nlohmann::json lower = nlohmann::json::parse(attnviz::test::read_file(test_data_file("tokenizers/added-lowercase.tokenizer.json")));
  const nlohmann::json first = lower["added_tokens"][3];  // "AB", normalized
  REQUIRE(first["content"] == "AB");
  nlohmann::json second = first;
  second["content"] = "aB";
  second["id"] = lower["model"]["vocab"].size();
  lower["model"]["vocab"]["aB"] = second["id"];
  lower["added_tokens"].push_back(second);
  const std::size_t last = lower["added_tokens"].size() - 1;
  CHECK(load_error(dir, lower) == path + ": /added_tokens/3 \"AB\" and /added_tokens/" + std::to_string(last) +
                                      " \"aB\" both read \"ab\" after the normalizer: the tokenizers library gives either id for it, at random");
  // The same pair matched in the raw text is two tokens.
  lower["added_tokens"][last]["normalized"] = false;
  const Vocabulary vocab = vocabulary_from_tokenizer_json(write(dir, lower));
  CHECK(tokenize(vocab, "aB", false, true) == std::vector<std::int32_t>{static_cast<std::int32_t>(second["id"])});
}

// Issue 37: what the tokenizers library refuses when it loads a file (a Metaspace whose
// add_prefix_space contradicts its prepend_scheme, in the pre-tokenizer or the decoder, a member
// its deserializer requires, a wrong type) attnviz refuses too, naming the member and, for the
// Metaspace contradiction, the library's reason; what it accepts gives its ids (prepend_scheme
// "first" counted after the added tokens are split out). tests/data/tokenizers/
// variants.expected.json: each edit as an RFC 6902 patch, with the library's verdict.
TEST_CASE("tokenizer.json: the files the tokenizers library refuses are refused, the others give its ids", "[tokenizer][errors]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  const nlohmann::json expected = nlohmann::json::parse(attnviz::test::read_file(test_data_file("tokenizers/variants.expected.json")));
  std::size_t refused = 0, accepted = 0;
  for (const nlohmann::json& variant : expected["variants"]) {
    const std::string name = variant["name"];
    CAPTURE(name);
    const nlohmann::json base =
        nlohmann::json::parse(attnviz::test::read_file(test_data_file("tokenizers/" + variant["base"].get<std::string>() + ".tokenizer.json")));
    const nlohmann::json tokenizer = base.patch(variant["patch"]);
    if (!variant["accepted"].get<bool>()) {
      const std::string error = load_error(dir, tokenizer);
      CHECK_THAT(error, Contains(path + ": " + variant["patch"][0]["path"].get<std::string>()));
      const std::string library = variant["library_error"];
      if (library.find("add_prefix_space does not match declared prepend_scheme") != std::string::npos)
        CHECK_THAT(error, Contains("the tokenizers library refuses the file: \"add_prefix_space does not match declared prepend_scheme\""));
      ++refused;
      continue;
    }
    const Vocabulary vocab = vocabulary_from_tokenizer_json(write(dir, tokenizer));
    std::size_t cases = 0;
    CHECK(library_mismatches(vocab, variant["cases"], cases) == std::vector<std::string>{});
    CHECK(cases == 7);
    ++accepted;
  }
  CHECK(refused == 35);
  CHECK(accepted == 11);
}

// A normalized added token that its normalizer empties ("qqq" beside a Replace "q" -> "") can
// never be matched; the library's matcher ran out of memory (a 3 GB allocation, npm tokenizers
// 0.23.2) on "the cat sat on the mat" beside one. Named, and the ids are those of the file without it.
TEST_CASE("tokenizer.json: a normalized added token that the normalizer empties is named in a warning", "[tokenizer]") {
  TempDir dir;
  const std::string path = dir.file("tokenizer.json");
  const std::string source = test_data_file("tokenizers/added-sequence.tokenizer.json");
  nlohmann::json emptied = nlohmann::json::parse(attnviz::test::read_file(source));
  nlohmann::json& last = emptied["added_tokens"].back();
  REQUIRE(last["content"] == "Qsun");
  REQUIRE(last["normalized"] == true);
  emptied["model"]["vocab"].erase("Qsun");
  emptied["model"]["vocab"]["qqq"] = last["id"];
  last["content"] = "qqq";
  const std::size_t index = emptied["added_tokens"].size() - 1;
  const Vocabulary vocab = vocabulary_from_tokenizer_json(write(dir, emptied));
  CHECK(vocab.warnings == std::vector<std::string>{path + ": /added_tokens/" + std::to_string(index) +
                                                   " \"qqq\" is \"\" after the normalizer, so it is never matched (the tokenizers "
                                                   "library's matcher may run out of memory on such a token)"});
  const Vocabulary original = vocabulary_from_tokenizer_json(source);
  for (const std::string text : {"the cat sat on the mat", "qqq", "ＡＢ qqq"}) {
    CAPTURE(text);
    CHECK(tokenize(vocab, text, false, true) == tokenize(original, text, false, true));
  }
  CHECK(tokenize(vocab, "qqq", false, true).empty());
}
