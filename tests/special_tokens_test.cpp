// Special tokens written in a text (issue 34): tokenize()'s parse_special against llama.cpp's own
// llama_tokenize on every GGUF vocabulary kind attnviz reads, with parse_special on and off and
// add_special on and off (tests/data/special-tokens/expected.json, written by
// scripts/special_tokens_reference.py: a Llama-3-style byte-level BPE, ChatML and Phi-3
// SentencePiece vocabularies, and the real GPT-2, BERT bge and stories260K vocabularies).
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/formats/gguf_file.hpp"
#include "model/tokenizers/vocabulary.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Ids = std::vector<std::int32_t>;

namespace {

nlohmann::json expected_ids() {
  std::ifstream in(test::test_data_file("special-tokens/expected.json"));
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("special tokens in text are read as llama.cpp's llama_tokenize reads them, parse_special on and off") {
  const nlohmann::json expected = expected_ids();
  REQUIRE(expected["files"].size() == 6);
  std::size_t cases = 0, with_special = 0;
  for (const nlohmann::json& file : expected["files"]) {
    const std::string name = file["file"];
    const Vocabulary vocab = vocabulary_from_gguf(GgufFile(test::test_data_file("special-tokens/" + name)));
    for (const nlohmann::json& c : file["cases"]) {
      const std::string text = c["text"];
      const bool add_special = c["add_special"], parse_special = c["parse_special"];
      CAPTURE(name, text, add_special, parse_special);
      const Ids ids = tokenize(vocab, text, add_special, parse_special);
      CHECK(ids == c["ids"].get<Ids>());
      ++cases;
      // The cases are worth something only if parsing changes the ids of most texts.
      if (parse_special && ids != tokenize(vocab, text, add_special, false)) ++with_special;
    }
  }
  CHECK(cases == 4 * (11 + 9 + 5 + 5 + 4 + 5));
  CHECK(with_special >= 50);
}

TEST_CASE("special tokens: the tokens looked for, the dummy space after one, Phi-3's right strip") {
  const Vocabulary llama3 = vocabulary_from_gguf(GgufFile(test::test_data_file("special-tokens/llama3-bpe.gguf")));
  const auto id = [](const Vocabulary& v, const std::string& piece) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v.pieces[i] == piece) return static_cast<std::int32_t>(i);
    FAIL("no piece " << piece);
    return -1;
  };
  // Control and unknown tokens only with parse_special; user-defined ones always; unused never.
  CHECK(tokenize(llama3, "<|eot_id|>", false, true) == Ids{id(llama3, "<|eot_id|>")});
  CHECK(tokenize(llama3, "<unk>", false, true) == Ids{id(llama3, "<unk>")});
  CHECK(tokenize(llama3, "<|eot_id|>", false, false).size() > 1);
  CHECK(tokenize(llama3, "<|reserved|>", false, true).size() > 1);
  CHECK(tokenize(llama3, "of_text", false, false) == Ids{id(llama3, "of_text")});
  // Labels (pictures, dumps' token_texts, tokenize) show a special token as itself.
  CHECK(token_display_text(llama3, id(llama3, "<|eot_id|>")) == "<|eot_id|>");
  CHECK(piece_display(llama3, id(llama3, "<|begin_of_text|>")) == "<|begin_of_text|>");
  // The longest first: "<|end_of_text|>" holds the user-defined "of_text".
  CHECK(tokenize(llama3, "<|end_of_text|>", false, true) == Ids{id(llama3, "<|end_of_text|>")});

  // SentencePiece: each run after a special token gets the dummy space ("▁user").
  const Vocabulary chatml = vocabulary_from_gguf(GgufFile(test::test_data_file("special-tokens/chatml-spm.gguf")));
  const Ids chat = tokenize(chatml, "<|im_start|>user", false, true);
  REQUIRE(chat.size() == 2);
  CHECK(chatml.pieces[chat[1]] == "\xE2\x96\x81user");
  CHECK(token_display_text(chatml, chat[0]) == "<|im_start|>");

  // Phi-3 (by general.name, as llama.cpp's loader): its special tokens take the white space after them.
  const Vocabulary phi3 = vocabulary_from_gguf(GgufFile(test::test_data_file("special-tokens/phi3-spm.gguf")));
  CHECK(tokenize(phi3, "<|user|>\nHello", false, true) == tokenize(phi3, "<|user|>Hello", false, true));
  CHECK(tokenize(chatml, "<|im_start|>\nHello", false, true) != tokenize(chatml, "<|im_start|>Hello", false, true));
}
