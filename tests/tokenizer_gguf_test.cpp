// model/tokenizers/vocabulary + tokenizers on real GGUF vocabularies: stories260K (llama, SentencePiece)
// and llama.cpp's own tokenizer test vectors (tests/data/vocab-gguf: GPT-2's byte-level BPE and
// BAAI bge's WordPiece), whose .out files hold the ids Hugging Face's tokenizers give.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run.hpp"
#include "core/error.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/tokenizers/vocabulary.hpp"
#include "support/run_support.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Ids = std::vector<std::int32_t>;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The .inp format of llama.cpp's test-tokenizer-0: each string followed by the marker line.
std::vector<std::string> test_strings(const std::string& path) {
  const std::string marker = "\n__ggml_vocab_test__\n";
  std::string content = read_bytes(path);
  std::vector<std::string> strings;
  for (std::size_t at = content.find(marker); at != std::string::npos; at = content.find(marker)) {
    strings.push_back(content.substr(0, at));
    content.erase(0, at + marker.size());
  }
  return strings;
}

// The .out format: line k holds the ids of string k, separated by spaces.
std::vector<Ids> reference_ids(const std::string& path) {
  std::istringstream lines(read_bytes(path));
  std::vector<Ids> all;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream numbers(line);
    Ids ids;
    for (std::int32_t id = 0; numbers >> id;) ids.push_back(id);
    all.push_back(ids);
  }
  return all;
}

// Tokenizes every test string of `name` (add_special false: the .out files hold no BOS, CLS or
// SEP) and checks each against the reference; returns how many match.
std::size_t matching_strings(const std::string& name) {
  const Vocabulary vocab = vocabulary_from_gguf(GgufFile(test::test_data_file("vocab-gguf/" + name)));
  const std::vector<std::string> strings = test_strings(test::test_data_file("vocab-gguf/" + name + ".inp"));
  const std::vector<Ids> expected = reference_ids(test::test_data_file("vocab-gguf/" + name + ".out"));
  REQUIRE(strings.size() == 46);
  REQUIRE(expected.size() == strings.size());
  std::size_t matches = 0;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    const Ids ids = tokenize(vocab, strings[i], false, true);
    CAPTURE(i, strings[i]);
    CHECK(ids == expected[i]);
    matches += ids == expected[i];
  }
  return matches;
}

// A vocabulary-only GGUF (version 3, no tensors) with the keys given, for the error cases.
class TokenizerGguf {
 public:
  TokenizerGguf& string(const std::string& key, const std::string& value) {
    entry(key, kString).text(value);
    return *this;
  }
  TokenizerGguf& strings(const std::string& key, const std::vector<std::string>& values) {
    entry(key, kArray).put<std::uint32_t>(kString).put<std::uint64_t>(values.size());
    for (const std::string& value : values) text(value);
    return *this;
  }
  TokenizerGguf& floats(const std::string& key, const std::vector<float>& values) {
    entry(key, kArray).put<std::uint32_t>(kFloat32).put<std::uint64_t>(values.size());
    for (const float value : values) put(value);
    return *this;
  }
  TokenizerGguf& int32s(const std::string& key, const std::vector<std::int32_t>& values) {
    entry(key, kArray).put<std::uint32_t>(kInt32).put<std::uint64_t>(values.size());
    for (const std::int32_t value : values) put(value);
    return *this;
  }
  TokenizerGguf& uint32(const std::string& key, std::uint32_t value) {
    entry(key, kUint32).put(value);
    return *this;
  }
  std::string write(const test::TempDir& dir) const {
    std::string file = "GGUF";
    const auto append = [&file](auto value) { file.append(reinterpret_cast<const char*>(&value), sizeof value); };
    append(std::uint32_t{3});
    append(std::uint64_t{0});
    append(std::uint64_t{keys_});
    file += body_;
    const std::string path = dir.file("vocab.gguf");
    std::ofstream(path, std::ios::binary) << file;
    return path;
  }

 private:
  static constexpr std::uint32_t kUint32 = 4, kInt32 = 5, kFloat32 = 6, kString = 8, kArray = 9;  // GGUF value types
  template <typename T>
  TokenizerGguf& put(T value) {
    body_.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  TokenizerGguf& text(const std::string& value) {
    put<std::uint64_t>(value.size());
    body_ += value;
    return *this;
  }
  TokenizerGguf& entry(const std::string& key, std::uint32_t type) {
    ++keys_;
    return text(key).put(type);
  }
  std::string body_;
  std::uint64_t keys_ = 0;
};

std::string load_error(const std::string& path) {
  try {
    vocabulary_from_gguf(GgufFile(path));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

Vocabulary stories260k() { return vocabulary_from_gguf(GgufFile(test::data_file("stories260k/stories260K.gguf"))); }

}  // namespace

TEST_CASE("vocabulary_from_gguf: stories260K's SentencePiece vocabulary and its defaults", "[tokenizer]") {
  const Vocabulary vocab = stories260k();
  CHECK(vocab.model == "llama");
  CHECK(vocab.size() == 512);
  CHECK(vocab.scores.size() == 512);
  CHECK(vocab.pieces[1] == "<s>");
  CHECK(vocab.types[1] == TokenType::Control);
  CHECK(vocab.types[3] == TokenType::Byte);
  CHECK(vocab.bos == 1);
  CHECK(vocab.eos == 2);
  CHECK(vocab.unk == 0);
  CHECK_FALSE(vocab.sep.has_value());  // the file says 4294967295: none
  CHECK(vocab.add_bos);
  CHECK(vocab.add_space_prefix);
  CHECK(vocab.source == test::data_file("stories260k/stories260K.gguf"));
}

TEST_CASE("tokenize llama: stories260K gives llama.cpp's ids for a TinyStories sentence", "[tokenizer]") {
  const Vocabulary vocab = stories260k();
  const std::string text = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park.";
  const Ids expected = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426,
                        338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426};
  CHECK(tokenize(vocab, text, true, true) == expected);
  CHECK(tokenize(vocab, text, false, true) == Ids(expected.begin() + 1, expected.end()));
  CHECK(decode(vocab, expected) == text);
  CHECK(tokenize(vocab, "", true, true) == Ids{1});
  // 猫 is not in the vocabulary: its three UTF-8 bytes as byte tokens.
  const Ids cat = tokenize(vocab, "\xE7\x8C\xAB", false, true);
  REQUIRE(cat.size() == 4);  // "▁" first (the dummy prefix)
  CHECK(piece_display(vocab, cat[1]) == "<0xE7>");
  CHECK(piece_display(vocab, cat[2]) == "<0x8C>");
  CHECK(piece_display(vocab, cat[3]) == "<0xAB>");
  CHECK(decode(vocab, tokenize(vocab, "\xE7\x8C\xAB and Lily", true, true)) == "\xE7\x8C\xAB and Lily");
  CHECK(piece_display(vocab, 1) == "<s>");
}

TEST_CASE("tokenize gpt2: the 46 reference strings of ggml-vocab-gpt-2 give Hugging Face's ids", "[tokenizer]") {
  CHECK(matching_strings("ggml-vocab-gpt-2.gguf") == 46);
}

// The .out of bge holds no [CLS] or [SEP]: llama.cpp's test tokenizes with add_special false.
TEST_CASE("tokenize bert: the 46 reference strings of ggml-vocab-bert-bge give Hugging Face's ids", "[tokenizer]") {
  CHECK(matching_strings("ggml-vocab-bert-bge.gguf") == 46);
}

TEST_CASE("tokenize bert: bge adds CLS and SEP with add_special", "[tokenizer]") {
  const Vocabulary vocab = vocabulary_from_gguf(GgufFile(test::test_data_file("vocab-gguf/ggml-vocab-bert-bge.gguf")));
  CHECK(tokenize(vocab, "Hello world", true, true) == Ids{101, 7592, 2088, 102});
  CHECK(decode(vocab, {101, 7592, 2088, 102}) == "hello world");
}

TEST_CASE("decode gpt2: the reference strings round-trip", "[tokenizer]") {
  const Vocabulary vocab = vocabulary_from_gguf(GgufFile(test::test_data_file("vocab-gguf/ggml-vocab-gpt-2.gguf")));
  for (const std::string& text : test_strings(test::test_data_file("vocab-gguf/ggml-vocab-gpt-2.gguf.inp"))) {
    CHECK(decode(vocab, tokenize(vocab, text, false, true)) == text);
  }
}

TEST_CASE("vocabulary_from_gguf: a missing key, a short array or a bad id is named", "[tokenizer][errors]") {
  test::TempDir dir;
  const std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  CHECK_THAT(load_error(TokenizerGguf().strings("tokenizer.ggml.tokens", pieces).write(dir)),
             Catch::Contains("vocab.gguf: tokenizer.ggml.model: missing field (the tokenizer model)"));
  CHECK_THAT(load_error(TokenizerGguf().string("tokenizer.ggml.model", "llama").write(dir)),
             Catch::Contains("vocab.gguf: tokenizer.ggml.tokens: missing field (the token list)"));
  const auto with_model = [&pieces](const std::string& model) {
    return TokenizerGguf().string("tokenizer.ggml.model", model).strings("tokenizer.ggml.tokens", pieces);
  };
  const auto llama = [&with_model] { return with_model("llama"); };
  CHECK_THAT(load_error(llama().floats("tokenizer.ggml.scores", {0, 0}).write(dir)),
             Catch::Contains("vocab.gguf: tokenizer.ggml.scores: expected 3 entries (one per token), got 2"));
  CHECK_THAT(load_error(llama().uint32("tokenizer.ggml.bos_token_id", 7).write(dir)),
             Catch::Contains("vocab.gguf: tokenizer.ggml.bos_token_id: expected a token id below 3, got 7"));
  CHECK_THAT(load_error(with_model("gpt2").write(dir)),
             Catch::Contains("vocab.gguf: tokenizer.ggml.merges: missing field"));
  CHECK(load_error(llama().write(dir)) == "(no error)");
}

// llama.cpp #25739: a vocabulary with a piece listed twice was accepted and the first id used,
// so the second could never come from text. Current llama.cpp refuses it naming the piece and
// both ids; empty pieces are exempt there too (it renames them), with a warning.
TEST_CASE("vocabulary_from_gguf: a piece listed twice is refused naming it and both ids, and empty pieces are warned about",
          "[tokenizer][errors]") {
  test::TempDir dir;
  const auto llama = [](const std::vector<std::string>& pieces) {
    return TokenizerGguf().string("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", pieces);
  };
  const std::string path = dir.file("vocab.gguf");
  CHECK(load_error(llama({"<unk>", "<s>", "</s>", "a", "b", "a"}).write(dir)) ==
        path + ": tokenizer.ggml.tokens: the piece \"a\" is listed twice, as ids 3 and 5 (a piece names one token)");
  CHECK(load_error(llama({"<unk>", "<s>", "</s>", "\n\"", "\n\""}).write(dir)) ==
        path + ": tokenizer.ggml.tokens: the piece \"\\n\\\"\" is listed twice, as ids 3 and 4 (a piece names one token)");
  const Vocabulary with_empty = vocabulary_from_gguf(GgufFile(llama({"<unk>", "<s>", "</s>", "", "\xE2\x96\x81" "a", ""}).write(dir)));
  CHECK(with_empty.warnings == std::vector<std::string>{path + ": tokenizer.ggml.tokens: 2 empty pieces (ids 3, 5): no text tokenizes to them"});
  CHECK(tokenize(with_empty, "a", false, true) == Ids{4});  // "▁a": the dummy space prefix
  CHECK(stories260k().warnings.empty());
}

// Issue 24: a gpt2 GGUF without tokenizer.ggml.pre was split with the default regex silently;
// llama.cpp warns ("missing pre-tokenizer type, using: 'default'").
TEST_CASE("vocabulary_from_gguf: a gpt2 vocabulary without tokenizer.ggml.pre is split as llama.cpp does, with a warning",
          "[tokenizer]") {
  test::TempDir dir;
  const auto gpt2 = [] {
    return TokenizerGguf().string("tokenizer.ggml.model", "gpt2").strings("tokenizer.ggml.tokens", {"a", "b", "ab"}).strings(
        "tokenizer.ggml.merges", {"a b"});
  };
  const std::string path = dir.file("vocab.gguf");
  const Vocabulary without = vocabulary_from_gguf(GgufFile(gpt2().write(dir)));
  CHECK(without.pre == "default");
  CHECK(without.warnings == std::vector<std::string>{
                                path + ": tokenizer.ggml.pre is missing: the text is split with the \"default\" pre-tokenizer (GPT-2's "
                                       "regex), as llama.cpp does; if the model was trained with another (LLaMA 3's, Qwen 2's…) its "
                                       "tokens will differ: reconvert the model with a current llama.cpp, or pass --token-ids"});
  CHECK(tokenize(without, "ab", false, true) == Ids{2});
  CHECK(vocabulary_from_gguf(GgufFile(gpt2().string("tokenizer.ggml.pre", "gpt-2").write(dir))).warnings.empty());
  CHECK(vocabulary_from_gguf(GgufFile(gpt2().string("tokenizer.ggml.pre", "default").write(dir))).warnings.empty());
  CHECK(vocabulary_from_gguf(GgufFile(test::test_data_file("vocab-gguf/ggml-vocab-gpt-2.gguf"))).warnings.empty());
  Options options;  // the CLI prints it through the warning channel, then the ids
  options.command = Command::Tokenize;
  options.model = gpt2().write(dir);
  options.text = "ab";
  const test::RunResult result = test::run_with(options);
  CHECK(result.code == 0);
  CHECK(result.err == "attnviz: warning: " + without.warnings[0] + "\n");
  CHECK(result.out == "{\"tokens\":[\"ab\"],\"token_ids\":[2],\"token_texts\":[\"ab\"]}\n");
}

// Issue 24: token_type as an array of floats named "GGUF value type 9" (an array).
TEST_CASE("vocabulary_from_gguf: tokenizer.ggml.token_type of the wrong element type names it in words", "[tokenizer][errors]") {
  test::TempDir dir;
  const std::string path = TokenizerGguf()
                               .string("tokenizer.ggml.model", "llama")
                               .strings("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>"})
                               .floats("tokenizer.ggml.token_type", {2, 3, 3})
                               .write(dir);
  CHECK(load_error(path) == path + ": metadata tokenizer.ggml.token_type: expected an array of integers, got an array of float32");
}

// A token type outside llama.cpp's enum became Undefined, and a BYTE token whose piece is not
// <0xXX> was read (llama.cpp's strtol gives byte 0 for it): both are refused naming the token.
TEST_CASE("vocabulary_from_gguf: a token type outside llama.cpp's enum or a BYTE piece not <0xXX> is refused naming the id",
          "[tokenizer][errors]") {
  test::TempDir dir;
  const auto with_types = [&dir](const std::vector<std::string>& pieces, const std::vector<std::int32_t>& types) {
    return load_error(TokenizerGguf()
                          .string("tokenizer.ggml.model", "llama")
                          .strings("tokenizer.ggml.tokens", pieces)
                          .int32s("tokenizer.ggml.token_type", types)
                          .write(dir));
  };
  const std::string at = dir.file("vocab.gguf") + ": ";
  CHECK(with_types({"<unk>", "<s>", "<0x0A>", "<0xfe>", "a"}, {2, 3, 6, 6, 0}) == "(no error)");
  CHECK(with_types({"<unk>", "<s>", "a"}, {2, 3, 7}) ==
        at + "tokenizer.ggml.token_type[2]: expected a token type from 0 to 6 (llama.cpp's llama_token_type), got 7");
  CHECK(with_types({"<unk>", "<s>", "a"}, {-1, 3, 1}) ==
        at + "tokenizer.ggml.token_type[0]: expected a token type from 0 to 6 (llama.cpp's llama_token_type), got -1");
  for (const std::string piece : {"a", "<0x0A", "<0xZZ>", "<0x0AB>", "0x0A"})
    CHECK(with_types({"<unk>", "<s>", piece}, {2, 3, 6}) ==
          at + "tokenizer.ggml.token_type[2]: expected a BYTE token's piece of the form <0xXX>, got BYTE for token 2 \"" + piece + "\"");
}

TEST_CASE("tokenize: a GGUF with another tokenizer model loads, and tokenize names it", "[tokenizer][errors]") {
  test::TempDir dir;
  const std::string path = TokenizerGguf()
                               .string("tokenizer.ggml.model", "t5")
                               .strings("tokenizer.ggml.tokens", {"<pad>", "</s>", "\xE2\x96\x81" "a"})
                               .write(dir);
  const Vocabulary vocab = vocabulary_from_gguf(GgufFile(path));
  CHECK(token_text(vocab, 2) == " a");  // ids given with --token-ids can still be shown
  CHECK_THROWS_WITH(tokenize(vocab, "a", true, true), path + ": tokenizer model \"t5\" is not supported "
                                                       "(supported: llama, gpt2, bert); pass --token-ids");
}

// Issue 25: generation stopped only at tokenizer.ggml.eos_token_id; llama.cpp also stops at the
// end-of-turn and end-of-message tokens the file names (LLaMA 3's <|eot_id|>, Gemma's <end_of_turn>).
TEST_CASE("vocabulary_from_gguf: end_tokens are EOS, EOT and EOM, each once, and an EOT outside the vocabulary is named",
          "[tokenizer]") {
  test::TempDir dir;
  const std::vector<std::string> pieces = {"<unk>", "<s>", "</s>", "<eot>", "<eom>", "a"};
  const auto llama = [&pieces] { return TokenizerGguf().string("tokenizer.ggml.model", "llama").strings("tokenizer.ggml.tokens", pieces); };
  CHECK(end_tokens(vocabulary_from_gguf(GgufFile(llama().write(dir)))) == Ids{2});  // llama's default EOS
  CHECK(end_tokens(vocabulary_from_gguf(GgufFile(llama().uint32("tokenizer.ggml.eot_token_id", 3).write(dir)))) == Ids{2, 3});
  CHECK(end_tokens(vocabulary_from_gguf(GgufFile(
            llama().uint32("tokenizer.ggml.eom_token_id", 4).uint32("tokenizer.ggml.eot_token_id", 3).uint32("tokenizer.ggml.eos_token_id", 3).write(dir)))) ==
        Ids{3, 4});
  CHECK_THAT(load_error(llama().uint32("tokenizer.ggml.eot_token_id", 9).write(dir)),
             Catch::Contains("vocab.gguf: tokenizer.ggml.eot_token_id: expected a token id below 6, got 9"));
}

// Issue 25: a model whose embedding is larger than its tokenizer (a padded vocabulary) generates
// ids the tokenizer has no piece for; decode named them an error, so --generate failed.
TEST_CASE("decode: an id past the tokenizer (a padded vocabulary) reads <id N>, a negative id is refused", "[tokenizer]") {
  const Vocabulary vocab = stories260k();
  REQUIRE(vocab.size() == 512);
  CHECK(unnamed_token_label(515) == "<id 515>");
  CHECK(decode(vocab, {403, 515, 407, 600}) == decode(vocab, {403}) + "<id 515>" + token_text(vocab, 407) + "<id 600>");
  CHECK_THROWS_AS(decode(vocab, {403, -1}), InputError);
}
