// Issue 34 §2 below the command line: --max-tokens' cut (model_session keep_last_tokens), the
// warning for a text the tokenizer can mostly not spell (tokenizer_fit unread_text_warning) and
// --tokenizer's file (tokenizer_file).
#include <string>
#include <vector>

#include "core/error.hpp"
#include "model/formats/gguf_file.hpp"
#include "model/model_session.hpp"
#include "model/tokenizers/tokenizer_file.hpp"
#include "model/tokenizers/tokenizer_fit.hpp"
#include "model/tokenizers/vocabulary.hpp"
#include "support/test_support.hpp"

using namespace attnviz;
using Ids = std::vector<std::int32_t>;

TEST_CASE("max-tokens: keeps the last tokens, the first (BOS, CLS) and last (SEP) pinned when asked", "[model]") {
  Ids ids{1, 10, 11, 12, 13, 14};
  CHECK(keep_last_tokens(ids, 0, true, false, "--text").empty());
  CHECK(keep_last_tokens(ids, 6, true, false, "--text").empty());
  CHECK(ids == Ids{1, 10, 11, 12, 13, 14});
  CHECK(keep_last_tokens(ids, 3, true, false, "--text") == "--text: 6 tokens, cut to the last 3 by --max-tokens (the first token, BOS, kept)");
  CHECK(ids == Ids{1, 13, 14});
  Ids plain{5, 6, 7, 8};
  CHECK(keep_last_tokens(plain, 2, false, false, "--token-ids") == "--token-ids: 4 tokens, cut to the last 2 by --max-tokens");
  CHECK(plain == Ids{7, 8});
  Ids framed{101, 7, 8, 9, 102};
  keep_last_tokens(framed, 3, true, true, "--text");
  CHECK(framed == Ids{101, 9, 102});
  Ids small{101, 7, 102};
  CHECK_THROWS_AS(keep_last_tokens(small, 2, true, true, "--text"), UsageError);
}

TEST_CASE("a text mostly unknown tokens or byte fallbacks gets one warning with the counts", "[tokenizer]") {
  const Vocabulary stories = vocabulary_from_gguf(GgufFile(test::data_file("stories260k/stories260K.gguf")));
  const Ids cat = tokenize(stories, "\xE7\x8C\xAB\xE7\x8C\xAB", true, true);  // 猫猫: no piece, six byte tokens
  CHECK(unread_text_warning(stories, cat, "--text") ==
        "--text: 6 are byte fallbacks (<0xNN>) of its 7 tokens: " + stories.source +
            " cannot spell most of the text (characters its vocabulary lacks, each split into bytes); is the text in a "
            "language or script this model was trained on?");
  CHECK(unread_text_warning(stories, tokenize(stories, "Once upon a time \xE7\x8C\xAB", true, true), "--text").empty());
  const Vocabulary bert = vocabulary_from_gguf(GgufFile(test::test_data_file("vocab-gguf/ggml-vocab-bert-bge.gguf")));
  const Ids emoji = tokenize(bert, "\xF0\x9F\x98\x80 \xF0\x9F\x98\x80 \xF0\x9F\x98\x80 hello", true, true);
  CHECK(unread_text_warning(bert, emoji, "--text").starts_with("--text: 3 are the unknown token \"[UNK]\" of its 4 tokens"));
  const Vocabulary gpt2 = vocabulary_from_gguf(GgufFile(test::test_data_file("vocab-gguf/ggml-vocab-gpt-2.gguf")));
  CHECK(unread_text_warning(gpt2, tokenize(gpt2, "\xE7\x8C\xAB\xE7\x8C\xAB", true, true), "--text").empty());  // bytes by design
}

TEST_CASE("tokenizer file: --tokenizer reads a GGUF's vocabulary or a tokenizer.json by the file's first bytes", "[tokenizer]") {
  const Vocabulary gguf = vocabulary_from_file(test::data_file("stories260k/stories260K.gguf"));
  CHECK(tokenize(gguf, "Once upon a time", true, true) == Ids{1, 403, 407, 261, 378});
  const Vocabulary json = vocabulary_from_file(test::test_data_file("tokenizers/spm-llama2.tokenizer.json"));
  CHECK(json.model == "hf-bpe");
  CHECK_THROWS_WITH(vocabulary_from_file(test::test_data_file("tokenizers")),
                    Catch::Contains("is a folder; --tokenizer takes a tokenizer.json or a GGUF file"));
}
