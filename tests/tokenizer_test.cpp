// model/tokenizer_*: the three tokenizers on small vocabularies built here, where the expected
// ids follow by hand from llama.cpp's algorithms (llama-vocab.cpp), and the way back to text.
// The real GGUF vocabularies and their reference ids are in tokenizer_gguf_test.cpp.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/utf8.hpp"
#include "model/tokenizers/bpe_pre_tokenizer.hpp"
#include "model/tokenizers/tokenizer_bpe.hpp"
#include "model/tokenizers/tokenizer_wordpiece.hpp"
#include "model/tokenizers/vocabulary.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Ids = std::vector<std::int32_t>;

namespace {

std::int32_t add(Vocabulary& vocab, const std::string& piece, float score = 0, TokenType type = TokenType::Normal) {
  vocab.pieces.push_back(piece);
  vocab.scores.push_back(score);
  vocab.types.push_back(type);
  return static_cast<std::int32_t>(vocab.size() - 1);
}

std::string hex_piece(int byte) {
  char text[8];
  std::snprintf(text, sizeof text, "<0x%02X>", byte);
  return text;
}

// A SentencePiece vocabulary: <unk> <s> </s>, then (optionally) the 256 byte tokens at ids
// 3..258 as llama's files have them, then the pieces given.
Vocabulary spm_vocabulary(const std::vector<std::pair<std::string, float>>& pieces, bool byte_tokens = true) {
  Vocabulary vocab;
  vocab.model = "llama";
  vocab.unk = add(vocab, "<unk>", 0, TokenType::Unknown);
  vocab.bos = add(vocab, "<s>", 0, TokenType::Control);
  vocab.eos = add(vocab, "</s>", 0, TokenType::Control);
  if (byte_tokens) {
    for (int byte = 0; byte < 256; ++byte) add(vocab, hex_piece(byte), 0, TokenType::Byte);
  }
  for (const auto& [piece, score] : pieces) add(vocab, piece, score);
  return vocab;
}

std::int32_t id_of(const Vocabulary& vocab, const std::string& piece) {
  for (std::size_t id = 0; id < vocab.size(); ++id) {
    if (vocab.pieces[id] == piece) return static_cast<std::int32_t>(id);
  }
  FAIL("no piece " << piece);
  return -1;
}

Ids ids_of(const Vocabulary& vocab, const std::vector<std::string>& pieces) {
  Ids ids;
  for (const std::string& piece : pieces) ids.push_back(id_of(vocab, piece));
  return ids;
}

const std::string kSpace = "\xE2\x96\x81";  // ▁

}  // namespace

TEST_CASE("tokenize llama: pairs merge best score first, the leftmost of equal scores", "[tokenizer]") {
  Vocabulary vocab = spm_vocabulary({{kSpace, -1}, {"a", -2}, {"b", -2}, {"c", -2}, {"ab", -5}, {"bc", -3},
                                     {kSpace + "a", -4}, {"aa", -6}});
  vocab.add_space_prefix = false;
  CHECK(tokenize(vocab, "abc", false, true) == ids_of(vocab, {"a", "bc"}));        // bc scores above ab
  CHECK(tokenize(vocab, "aaa", false, true) == ids_of(vocab, {"aa", "a"}));        // tie: leftmost pair
  vocab.add_space_prefix = true;
  CHECK(tokenize(vocab, "ab", false, true) == ids_of(vocab, {kSpace + "a", "b"}));  // ▁a beats ab
  CHECK(tokenize(vocab, "a b", false, true) == ids_of(vocab, {kSpace + "a", kSpace, "b"}));
}

TEST_CASE("tokenize llama: BOS only with add_special, empty text gives BOS alone", "[tokenizer]") {
  Vocabulary vocab = spm_vocabulary({{kSpace, -1}, {"a", -2}});
  CHECK(tokenize(vocab, "", true, true) == Ids{1});
  CHECK(tokenize(vocab, "", false, true).empty());
  CHECK(tokenize(vocab, "a", true, true) == Ids{1, id_of(vocab, kSpace), id_of(vocab, "a")});
  vocab.add_bos = false;
  CHECK(tokenize(vocab, "a", true, true) == ids_of(vocab, {kSpace, "a"}));
  vocab.add_eos = true;
  CHECK(tokenize(vocab, "a", true, true) == Ids{id_of(vocab, kSpace), id_of(vocab, "a"), 2});
}

TEST_CASE("tokenize llama: a character outside the vocabulary becomes its byte tokens", "[tokenizer]") {
  Vocabulary vocab = spm_vocabulary({{kSpace, -1}, {"a", -2}});
  vocab.add_space_prefix = false;
  // 猫 is E7 8C AB; byte token <0xXX> has id 3 + XX.
  CHECK(tokenize(vocab, "a\xE7\x8C\xAB", false, true) == Ids{id_of(vocab, "a"), 3 + 0xE7, 3 + 0x8C, 3 + 0xAB});
  // Bytes that are not UTF-8 fall back the same way.
  CHECK(tokenize(vocab, "\xFF", false, true) == Ids{3 + 0xFF});
}

TEST_CASE("tokenize llama: without byte tokens an unknown character is one unknown token", "[tokenizer]") {
  Vocabulary vocab = spm_vocabulary({{kSpace, -1}, {"a", -2}}, false);
  vocab.add_space_prefix = false;
  CHECK(tokenize(vocab, "a\xE7\x8C\xAB" "a", false, true) == Ids{id_of(vocab, "a"), 0, id_of(vocab, "a")});
  vocab.unk.reset();
  CHECK_THROWS_WITH(tokenize(vocab, "\xE7\x8C\xAB", false, true), Catch::Contains("no unknown token"));
}

TEST_CASE("tokenize llama: a user-defined token stands for itself, the dummy space follows it", "[tokenizer]") {
  Vocabulary vocab = spm_vocabulary({{kSpace, -1}, {"a", -2}, {"b", -2}, {kSpace + "a", -3}});
  const std::int32_t tag = add(vocab, "<tag>", 0, TokenType::UserDefined);
  const std::int32_t control = add(vocab, "<ctl>", 0, TokenType::Control);
  CHECK(tokenize(vocab, "a<tag>a", false, true) == Ids{id_of(vocab, kSpace + "a"), tag, id_of(vocab, kSpace + "a")});
  CHECK(tokenize(vocab, "<tag><tag>", true, true) == Ids{1, tag, tag});
  CHECK(tokenize(vocab, "<ctl>", false, false) != Ids{control});  // without parse_special, control tokens are not read from text
  CHECK(tokenize(vocab, "<ctl>", false, true) == Ids{control});
  CHECK(token_text(vocab, tag) == "<tag>");
}

TEST_CASE("decode llama: round trip, leading space dropped, bytes joined", "[tokenizer]") {
  Vocabulary vocab = spm_vocabulary({{kSpace, -1}, {"a", -2}, {"b", -2}, {kSpace + "a", -3}});
  for (const std::string text : {"a b", "ab  a", "\xE7\x8C\xAB a", " a", ""}) {
    CHECK(decode(vocab, tokenize(vocab, text, true, true)) == text);
    CHECK(decode(vocab, tokenize(vocab, text, false, true)) == text);
  }
  CHECK(token_text(vocab, id_of(vocab, kSpace + "a")) == " a");
  CHECK(token_text(vocab, 1).empty());          // <s> is a control token
  CHECK(token_text(vocab, 3 + 0xE7) == "\xE7");  // one byte of a character
  CHECK_THROWS_WITH(token_text(vocab, static_cast<std::int32_t>(vocab.size())),
                    Catch::Contains("outside the vocabulary of " + std::to_string(vocab.size()) + " tokens"));
}

TEST_CASE("piece_display: special tokens as they are, bytes as <0xXX>, one line", "[tokenizer]") {
  Vocabulary vocab = spm_vocabulary({{kSpace + "a", -1}, {"x\ny", -1}});
  CHECK(piece_display(vocab, 1) == "<s>");
  CHECK(piece_display(vocab, 0) == "<unk>");
  CHECK(piece_display(vocab, 3 + 0xE7) == "<0xE7>");
  CHECK(piece_display(vocab, id_of(vocab, kSpace + "a")) == " a");
  CHECK(piece_display(vocab, id_of(vocab, "x\ny")) == "x\\ny");
  CHECK(token_type(vocab, 3) == TokenType::Byte);
  CHECK(token_type(vocab, 1) == TokenType::Control);
}

TEST_CASE("tokenize: a tokenizer model this build lacks names the file and --token-ids", "[tokenizer][errors]") {
  Vocabulary vocab;
  vocab.model = "t5";
  vocab.source = "model.gguf";
  vocab.pieces = {"a"};
  CHECK_THROWS_AS(tokenize(vocab, "a", true, true), InputError);
  CHECK_THROWS_WITH(tokenize(vocab, "a", true, true),
                    "model.gguf: tokenizer model \"t5\" is not supported (supported: llama, gpt2, bert); "
                    "pass --token-ids");
}

namespace {

// A byte-level vocabulary: the 256 byte characters in byte order (ids 0..255), then the merges'
// results in order, then <|endoftext|>.
Vocabulary gpt2_vocabulary(const std::vector<std::string>& merges) {
  Vocabulary vocab;
  vocab.model = "gpt2";
  vocab.pre = "gpt-2";
  vocab.add_bos = false;
  vocab.add_space_prefix = false;
  for (int byte = 0; byte < 256; ++byte) add(vocab, gpt2_byte_piece(static_cast<unsigned char>(byte)));
  for (const std::string& merge : merges) {
    const std::size_t space = merge.find(' ');
    add(vocab, merge.substr(0, space) + merge.substr(space + 1));
  }
  vocab.merges = merges;
  vocab.bos = vocab.eos = add(vocab, "<|endoftext|>", 0, TokenType::Control);
  return vocab;
}

std::vector<std::string> words(std::string_view text, const std::string& pre) {
  const BpePreTokenizer* pre_tokenizer = find_bpe_pre_tokenizer(pre);
  REQUIRE(pre_tokenizer != nullptr);
  return split_words(text, *pre_tokenizer);
}

const std::string kG = "\xC4\xA0";  // Ġ, GPT-2's spelling of the space byte

}  // namespace

TEST_CASE("gpt2 pre-tokenizer: the GPT-2 regex splits words, contractions and spaces", "[tokenizer]") {
  using W = std::vector<std::string>;
  CHECK(words("Hello world's  end!!", "gpt-2") == W{"Hello", " world", "'s", " ", " end", "!!"});
  CHECK(words("a1 22\t\n x  ", "gpt-2") == W{"a", "1", " 22", "\t\n", " x", "  "});
  CHECK(words("caf\xC3\xA9 \xE7\x8C\xAB", "gpt-2") == W{"caf\xC3\xA9", " \xE7\x8C\xAB"});
  CHECK(words("", "gpt-2").empty());
  // llama3: up to 3 digits, case-insensitive contractions, a letter run takes one non-letter.
  CHECK(words("12345 I'M (x)", "llama-bpe") == W{"123", "45", " I", "'M", " (", "x", ")"});
  // qwen2: one digit at a time.
  CHECK(words("123", "qwen2") == W{"1", "2", "3"});
}

// scripts/pre_tokenizer_reference.py splits the same strings (llama.cpp's 46 test strings and
// a few more) with Python's `regex` module and Hugging Face's original patterns.
TEST_CASE("gpt2 pre-tokenizers: the words of Python's regex module, for six pre-tokenizers", "[tokenizer][golden]") {
  const nlohmann::json golden =
      nlohmann::json::parse(test::read_file(test::fixture("bpe_pre_tokenizer_golden.json")));
  const auto strings = golden.at("strings").get<std::vector<std::string>>();
  REQUIRE(strings.size() == 48);
  for (const auto& [pre, expected] : golden.at("words").items()) {
    for (std::size_t i = 0; i < strings.size(); ++i) {
      CAPTURE(pre, i, strings[i]);
      CHECK(words(strings[i], pre) == expected.at(i).get<std::vector<std::string>>());
    }
  }
}

TEST_CASE("tokenize gpt2: merges by rank, bytes spelt with GPT-2's alphabet", "[tokenizer]") {
  const Vocabulary vocab = gpt2_vocabulary({kG + " t", "h e", kG + "t he", "t h"});
  CHECK(gpt2_byte_piece(' ') == kG);
  CHECK(gpt2_byte_piece('a') == "a");
  // " the": Ġ t (rank 0) then h e (rank 1) then Ġt he (rank 2); "t h" (rank 3) never comes up.
  CHECK(tokenize(vocab, " the", false, true) == ids_of(vocab, {kG + "the"}));
  CHECK(tokenize(vocab, "the", false, true) == ids_of(vocab, {"t", "he"}));
  CHECK(tokenize(vocab, "x\n", false, true) == Ids{'x', '\n'});  // byte b has id b here
  CHECK(tokenize(vocab, "\xE7\x8C\xAB", false, true) == Ids{0xE7, 0x8C, 0xAB});
  CHECK(tokenize(vocab, "\xFF", false, true) == Ids{0xEF, 0xBF, 0xBD});  // not UTF-8: U+FFFD, as llama.cpp
}

TEST_CASE("tokenize gpt2: BOS and EOS only when the vocabulary asks and add_special is set", "[tokenizer]") {
  Vocabulary vocab = gpt2_vocabulary({});
  const std::int32_t end = *vocab.eos;
  CHECK(tokenize(vocab, "a", true, true) == Ids{'a'});
  vocab.add_bos = true;
  vocab.add_eos = true;
  CHECK(tokenize(vocab, "a", true, true) == Ids{end, 'a', end});
  CHECK(tokenize(vocab, "a", false, true) == Ids{'a'});
}

TEST_CASE("tokenize gpt2: an unknown tokenizer.ggml.pre is named in the error", "[tokenizer][errors]") {
  Vocabulary vocab = gpt2_vocabulary({});
  vocab.pre = "made-up";
  vocab.source = "m.gguf";
  CHECK_THROWS_AS(tokenize(vocab, "a", false, true), InputError);
  CHECK_THROWS_WITH(tokenize(vocab, "a", false, true),
                    Catch::StartsWith("m.gguf: pre-tokenizer \"made-up\" (tokenizer.ggml.pre) is not supported "
                                      "(supported: default, gpt-2") &&
                        Catch::EndsWith("; pass --token-ids"));
  vocab.pre = "";  // absent: llama.cpp's "default"
  CHECK(tokenize(vocab, "a", false, true) == Ids{'a'});
}

TEST_CASE("tokenize gpt2: user-defined tokens split the text before the pre-tokenizer", "[tokenizer]") {
  Vocabulary vocab = gpt2_vocabulary({kG + " t"});
  const std::int32_t two_spaces = add(vocab, "  ", 0, TokenType::UserDefined);  // as GPT-NeoX's added tokens
  const std::int32_t space_t = id_of(vocab, kG + "t");
  CHECK(tokenize(vocab, "a   t", false, true) == Ids{'a', two_spaces, space_t});
}

TEST_CASE("decode gpt2: the byte alphabet undone, exact round trip", "[tokenizer]") {
  const Vocabulary vocab = gpt2_vocabulary({kG + " t", "h e", kG + "t he"});
  for (const std::string text : {" the  cat\n", "\xE7\x8C\xAB!", "", "  "}) {
    CHECK(decode(vocab, tokenize(vocab, text, false, true)) == text);
  }
  CHECK(token_text(vocab, id_of(vocab, kG + "the")) == " the");
  CHECK(token_text(vocab, *vocab.eos).empty());
  CHECK(piece_display(vocab, *vocab.eos) == "<|endoftext|>");
  CHECK(piece_display(vocab, 0xE7) == "<0xE7>");  // part of a character
  CHECK(piece_display(vocab, '\n') == "\\n");
}

namespace {

// A WordPiece vocabulary as llama.cpp's converter writes it: word-initial pieces with "▁",
// continuations bare.
Vocabulary bert_vocabulary(const std::vector<std::string>& pieces) {
  Vocabulary vocab;
  vocab.model = "bert";
  vocab.add_space_prefix = false;
  add(vocab, "[PAD]", 0, TokenType::Control);
  vocab.unk = add(vocab, "[UNK]", 0, TokenType::Unknown);
  vocab.bos = vocab.cls = add(vocab, "[CLS]", 0, TokenType::Control);
  vocab.sep = add(vocab, "[SEP]", 0, TokenType::Control);
  for (const std::string& piece : pieces) add(vocab, piece);
  return vocab;
}

}  // namespace

TEST_CASE("wordpiece_words: BERT's normaliser lower-cases, strips accents, splits punctuation", "[tokenizer]") {
  using W = std::vector<std::string>;
  CHECK(wordpiece_words("Hello, WORLD!  \xC3\x87" "a\tva", true, true) == W{"hello", ",", "world", "!", "ca", "va"});
  CHECK(wordpiece_words("\xC3\x87" "a", false, false) == W{"\xC3\x87" "a"});
  // 你好: each ideograph is a word.
  CHECK(wordpiece_words("\xE4\xBD\xA0\xE5\xA5\xBD" "ab", true, true) == W{"\xE4\xBD\xA0", "\xE5\xA5\xBD", "ab"});
  CHECK(wordpiece_words("a$b\x01" "c", true, true) == W{"a", "$", "bc"});  // ASCII symbol split, control dropped
  CHECK(wordpiece_words(" \n ", true, true).empty());
}

TEST_CASE("tokenize bert: a user-defined token is kept out of the normaliser", "[tokenizer]") {
  Vocabulary vocab = bert_vocabulary({kSpace + "hello"});
  const std::int32_t tag = add(vocab, "<Tag>", 0, TokenType::UserDefined);
  const std::int32_t hello = id_of(vocab, kSpace + "hello");
  CHECK(tokenize(vocab, "Hello<Tag>hello", false, true) == Ids{hello, tag, hello});
}

TEST_CASE("tokenize bert: longest pieces left to right, unknown words, CLS and SEP", "[tokenizer]") {
  const Vocabulary vocab = bert_vocabulary({kSpace + "un", kSpace + "unaff", "aff", "able", "ble", "a",
                                            kSpace + "hello", kSpace + ","});
  CHECK(tokenize(vocab, "unaffable", false, true) == ids_of(vocab, {kSpace + "unaff", "able"}));
  CHECK(tokenize(vocab, "Hello, xyz", false, true) == Ids{id_of(vocab, kSpace + "hello"), id_of(vocab, kSpace + ","), 1});
  CHECK(tokenize(vocab, "hello", true, true) == Ids{2, id_of(vocab, kSpace + "hello"), 3});
  CHECK(tokenize(vocab, "", true, true) == Ids{2, 3});
  CHECK(decode(vocab, tokenize(vocab, "Hello unaffable", false, true)) == "hello unaffable");
}

// Issue 24, section 4: labels of byte-level vocabularies read "ä½" for 你 and "Ġ" for spaces.
TEST_CASE("token_display_text: byte-level pieces as their text, partial characters as <0xXX>", "[tokenizer]") {
  const std::string e4 = gpt2_byte_piece(0xE4), bd = gpt2_byte_piece(0xBD), a0 = gpt2_byte_piece(0xA0);
  const Vocabulary vocab = gpt2_vocabulary({e4 + " " + bd, e4 + bd + " " + a0, kG + " t"});
  REQUIRE(pieces_are_byte_level(vocab));
  const std::int32_t first_two = id_of(vocab, e4 + bd);  // "ä½": bytes E4 BD of 你 (E4 BD A0)
  CHECK(vocab.pieces[first_two] == "\xC3\xA4\xC2\xBD");
  CHECK(token_display_text(vocab, first_two) == "<0xE4><0xBD>");
  CHECK(token_display_text(vocab, id_of(vocab, e4 + bd + a0)) == "\xE4\xBD\xA0");  // 你
  CHECK(token_display_text(vocab, 0xA0) == "<0xA0>");
  CHECK(token_display_text(vocab, id_of(vocab, kG + "t")) == " t");
  CHECK(token_display_text(vocab, '\n') == "\n");  // labels draw it; the tokenize table escapes it
  CHECK(piece_display(vocab, '\n') == "\\n");
  CHECK(token_display_text(vocab, *vocab.eos) == "<|endoftext|>");
  for (int byte = 0; byte < 256; ++byte) {  // always valid UTF-8
    const std::string text = token_display_text(vocab, byte);
    CAPTURE(byte, text);
    CHECK(encode_utf8(decode_utf8(text)) == text);
  }
}

TEST_CASE("token_display_text: SentencePiece pieces decode the same way but are not byte-level", "[tokenizer]") {
  const Vocabulary vocab = spm_vocabulary({{kSpace + "a", -1}});
  CHECK_FALSE(pieces_are_byte_level(vocab));
  CHECK(token_display_text(vocab, id_of(vocab, kSpace + "a")) == " a");
  CHECK(token_display_text(vocab, 3 + 0xE7) == "<0xE7>");
  CHECK(token_display_text(vocab, 1) == "<s>");
}
